"""Celery tasks. Thin: each takes ids or nothing, calls one service, and is idempotent."""

from __future__ import annotations

import logging
import time

from celery import Task, shared_task
from django.conf import settings
from django.db import DatabaseError, InterfaceError

from odds.betting.selectors.settlement import markets_awaiting_settlement
from odds.betting.services import bet_delay
from odds.betting.services.settlement import market_bets_settle
from odds.core import task_names
from odds.core.outbox import outbox_drain
from reducers import keys
from store.clients import redis_client

log = logging.getLogger(__name__)


@shared_task(name=task_names.WORKER_HEARTBEAT, ignore_result=True)
def worker_heartbeat() -> None:
    """Scheduled by beat and run by a worker: proves both are alive for /healthz."""
    redis_client(settings.REDIS_URL).set(keys.heartbeat("celery"), int(time.time()), ex=120)


@shared_task(
    name=task_names.MARKET_SETTLE,
    bind=True,
    ignore_result=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=10,
)
def market_settle(self: Task, market_id: int) -> None:
    """Settle the bets of a resulted market. Safe to run any number of times.

    Acknowledged only after it ran, so a worker lost mid-way hands the market to another worker;
    database errors (deadlock, lost connection) are retried with a growing delay.
    """
    try:
        summary = market_bets_settle(market_id=market_id)
    except (DatabaseError, InterfaceError) as exc:
        raise self.retry(exc=exc, countdown=min(60, 2**self.request.retries)) from exc
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
    if summary.accepted or summary.rejected:
        log.info("held bets decided: %d accepted, %d rejected", summary.accepted, summary.rejected)


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


@shared_task(name=task_names.METRICS_PRUNE, bind=True, ignore_result=True, acks_late=True, max_retries=3)
def metrics_prune(self: Task) -> None:
    """Run by beat hourly: delete samples older than the retention."""
    from odds.ops.services.metrics_history import metrics_prune as prune

    try:
        deleted = prune()
    except (DatabaseError, InterfaceError) as exc:
        raise self.retry(exc=exc, countdown=60) from exc
    if deleted:
        log.info("pruned %d metric samples", deleted)


@shared_task(
    name=task_names.MARKETS_KICKOFF_SUSPEND,
    bind=True,
    ignore_result=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=5,
)
def markets_kickoff_suspend(self: Task) -> None:
    """Run by beat every 15 s: suspend open markets of events past kick-off still scheduled, and
    the open in-play markets when the feed has stopped beating."""
    from odds.ops.services.digest import feed_lost_suspend, kickoff_overdue_suspend

    try:
        kickoff_overdue_suspend()
        feed_lost_suspend()
    except (DatabaseError, InterfaceError) as exc:
        raise self.retry(exc=exc, countdown=min(30, 2**self.request.retries)) from exc


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
    bind=True,
    ignore_result=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=5,
)
def digest_email(self: Task, user_id: int) -> None:
    """Email one user their open bets; sent at most once per user and ISO week."""
    from odds.ops.services.digest import digest_send

    try:
        digest_send(user_id=user_id)
    except (DatabaseError, InterfaceError, OSError) as exc:
        raise self.retry(exc=exc, countdown=min(600, 30 * 2**self.request.retries)) from exc
