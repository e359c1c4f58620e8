"""Celery tasks. Thin: each takes ids or nothing, calls one service, and is idempotent."""

from __future__ import annotations

import logging

from celery import shared_task
from django.conf import settings
from django.db import DatabaseError, InterfaceError

from odds.betting.selectors.settlement import markets_awaiting_settlement
from odds.betting.services import bet_delay
from odds.betting.services.settlement import market_bets_settle
from odds.core import task_names
from odds.core.outbox import outbox_drain
from store.clients import redis_client
from store.pipeline import heartbeat_beat

log = logging.getLogger(__name__)


@shared_task(name=task_names.WORKER_HEARTBEAT, ignore_result=True)
def worker_heartbeat() -> None:
    """Scheduled by beat and run by a worker: proves both are alive for /healthz."""
    heartbeat_beat(redis_client(settings.REDIS_URL), "celery", ttl_s=120)


# Retried by Celery itself: a database error (deadlock, lost connection) runs the task again after
# ``retry_backoff * 2**retries`` seconds, at most ``retry_backoff_max``, without jitter.
DATABASE_ERRORS = (DatabaseError, InterfaceError)


@shared_task(
    name=task_names.MARKET_SETTLE,
    ignore_result=True,
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=DATABASE_ERRORS,
    retry_backoff=1,
    retry_backoff_max=60,
    retry_jitter=False,
    max_retries=10,
)
def market_settle(market_id: int) -> None:
    """Settle the bets of a resulted market. Safe to run any number of times.

    Acknowledged only after it ran, so a worker lost mid-way hands the market to another worker;
    database errors are retried with a growing delay (1, 2, 4 … 60 s).
    """
    summary = market_bets_settle(market_id=market_id)
    log.info("market %s settlement: %s", market_id, summary)


@shared_task(name=task_names.OUTBOX_RELAY, ignore_result=True)
def outbox_relay() -> None:
    """Run by beat every second: produce pending outbox records to Kafka."""
    result = outbox_drain(budget_s=0.9)
    if result.failed:
        log.warning("outbox relay: %d records not acknowledged: %s", result.failed, result.errors)


@shared_task(name=task_names.BETS_DELAY_RESOLVE, ignore_result=True)
def bets_delay_resolve() -> None:
    """Run by beat every second: decide the bets held by the in-play delay whose time has come."""
    summary = bet_delay.bets_delay_resolve()
    if summary.accepted or summary.rejected or summary.failed:
        log.info(
            "held bets decided: %d accepted, %d rejected, %d not decidable now",
            summary.accepted,
            summary.rejected,
            summary.failed,
        )


@shared_task(name=task_names.SETTLEMENT_SWEEP, ignore_result=True)
def settlement_sweep() -> None:
    """Run by beat: settle resulted markets whose settlement request was lost (e.g. a crash
    between the commit of the result and the enqueue of ``market_settle``)."""
    for market_id in markets_awaiting_settlement():
        market_settle.delay(market_id)


@shared_task(name=task_names.STREAMS_EXPIRE_IDLE, ignore_result=True)
def streams_expire_idle() -> None:
    """Run by beat: end subscriber channels whose websocket has been silent past the expiry."""
    from odds.streaming.services.streams import streams_expire

    ended = streams_expire(idle_ms=settings.STREAM_IDLE_EXPIRY_S * 1000)
    if ended:
        log.info("ended %d idle subscriber channels", len(ended))


# --- Operations: metrics history, kick-off safety net, weekly digest ---------------------------


@shared_task(name=task_names.METRICS_SAMPLE, ignore_result=True)
def metrics_sample() -> None:
    """Run by beat every 5 s: keep one sample of the dashboard's figures per slot (idempotent).
    A lost run only leaves a gap in the history, so it is neither acknowledged late nor retried."""
    from odds.ops.services.metrics_history import metrics_sample_record

    metrics_sample_record()


@shared_task(
    name=task_names.METRICS_PRUNE,
    ignore_result=True,
    acks_late=True,
    autoretry_for=DATABASE_ERRORS,
    default_retry_delay=60,
    max_retries=3,
)
def metrics_prune() -> None:
    """Run by beat hourly: delete samples older than the retention (a database error: again
    after a minute)."""
    from odds.ops.services.metrics_history import metrics_prune as prune

    deleted = prune()
    if deleted:
        log.info("pruned %d metric samples", deleted)


@shared_task(
    name=task_names.MARKETS_KICKOFF_SUSPEND,
    ignore_result=True,
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=DATABASE_ERRORS,
    retry_backoff=1,
    retry_backoff_max=30,
    retry_jitter=False,
    max_retries=5,
)
def markets_kickoff_suspend() -> None:
    """Run by beat every 15 s: suspend open markets of events past kick-off still scheduled, and
    the open in-play markets when the feed has stopped beating (a database error: again after
    1, 2, 4 … 30 s)."""
    from odds.ops.services.digest import feed_lost_suspend, kickoff_overdue_suspend

    kickoff_overdue_suspend()
    feed_lost_suspend()


@shared_task(name=task_names.MARKETS_OPENING_PUBLISH, ignore_result=True)
def markets_opening_publish(market_ids: list[int]) -> None:
    """A new event's opening books, each once its definition is in the markets table."""
    from odds.catalogue.services.markets import market_openings_publish

    market_openings_publish(market_ids=market_ids)


@shared_task(name=task_names.DIGEST_WEEKLY, ignore_result=True)
def digest_weekly() -> None:
    """Run by beat on Monday morning: one ``digest_email`` task per user with open bets."""
    from odds.ops.services.digest import digest_recipients

    for user_id in digest_recipients():
        digest_email.delay(user_id)


@shared_task(
    name=task_names.DIGEST_EMAIL,
    ignore_result=True,
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=(*DATABASE_ERRORS, OSError),
    retry_backoff=30,
    retry_backoff_max=600,
    retry_jitter=False,
    max_retries=5,
)
def digest_email(user_id: int) -> None:
    """Email one user their open bets; sent at most once per user and ISO week (a database or
    mail error: again after 30, 60, 120 … 600 s)."""
    from odds.ops.services.digest import digest_send

    digest_send(user_id=user_id)


@shared_task(name=task_names.EXCHANGE_RATES_APPLY, ignore_result=True)
def exchange_rates_apply() -> None:
    """After the operator set a rate, and by beat: the books converted at the current rates."""
    from odds.trading.services.rates import exchange_rates_apply as apply

    apply()


@shared_task(
    name=task_names.LIMIT_NOTICE_EMAIL,
    ignore_result=True,
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=(*DATABASE_ERRORS, OSError),
    retry_backoff=30,
    retry_backoff_max=600,
    retry_jitter=False,
    max_retries=5,
)
def limit_notice_email(limit_id: int, change: str) -> None:
    """Mail a punter that their deposit, loss or wager limit changed (a database or mail error:
    again after 30, 60, 120 … 600 s)."""
    from odds.betting.services.wallet import limit_notice_send

    limit_notice_send(limit_id=limit_id, change=change)
