"""Every background task's name, in one place.

The tasks declare their names from here (odds/tasks.py), the beat schedule runs them by these
names (webapp/settings/celery.py), and a service that hands work to a task enqueues it by name
(``enqueue``) instead of importing the tasks module, which imports the services: "a market
resulted → settle its bets" is a name, not an import cycle. A task can move to another module
without its schedule or the messages already queued losing it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from celery import Task

WORKER_HEARTBEAT = "odds.tasks.worker_heartbeat"
MARKET_SETTLE = "odds.tasks.market_settle"
OUTBOX_RELAY = "odds.tasks.outbox_relay"
BETS_DELAY_RESOLVE = "odds.tasks.bets_delay_resolve"
SETTLEMENT_SWEEP = "odds.tasks.settlement_sweep"
STREAMS_EXPIRE_IDLE = "odds.tasks.streams_expire_idle"
METRICS_SAMPLE = "odds.tasks.metrics_sample"
METRICS_PRUNE = "odds.tasks.metrics_prune"
MARKETS_KICKOFF_SUSPEND = "odds.tasks.markets_kickoff_suspend"
DIGEST_WEEKLY = "odds.tasks.digest_weekly"
DIGEST_EMAIL = "odds.tasks.digest_email"
MARKETS_OPENING_PUBLISH = "odds.tasks.markets_opening_publish"
LIMIT_NOTICE_EMAIL = "odds.tasks.limit_notice_email"
EXCHANGE_RATES_APPLY = "odds.tasks.exchange_rates_apply"


def registered(name: str) -> Task:
    """The task ``name``. A process that is not a worker (the site, a command) has not imported
    the tasks modules: Celery's autodiscovery imports them when asked to here."""
    from celery import current_app

    if name not in current_app.tasks:
        current_app.loader.import_default_modules()
    return current_app.tasks[name]


def enqueue(name: str, *args: Any) -> None:
    """Queue the task ``name`` with ``args`` (run at once where tasks run eagerly, as in tests)."""
    registered(name).delay(*args)
