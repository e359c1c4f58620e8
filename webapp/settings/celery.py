from celery.schedules import crontab

from odds.core import task_names
from reducers.redis_url import with_db
from store.clients import celery_broker
from store.pipeline import celery_key_prefix
from webapp.settings.channels import STREAM_SWEEP_INTERVAL_S
from webapp.settings.env import env
from webapp.settings.redis import REDIS_URL

# The broker's Redis (database 1 beside the data's), as a Redis URL; Celery's own form of it
# names Sentinels its own way (store.clients.celery_broker).
CELERY_BROKER_REDIS_URL = env.celery_broker_url or with_db(REDIS_URL, 1)
CELERY_BROKER_URL, _BROKER_SENTINEL_OPTIONS = celery_broker(CELERY_BROKER_REDIS_URL)
# Queues carry the namespace, so stacks (or a test session beside a stack) sharing one Redis
# never take each other's tasks.
CELERY_BROKER_TRANSPORT_OPTIONS = {"global_keyprefix": celery_key_prefix(), **_BROKER_SENTINEL_OPTIONS}
CELERY_RESULT_BACKEND = None
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TIMEZONE = "UTC"
CELERY_BEAT_SCHEDULE = {
    "heartbeat": {"task": task_names.WORKER_HEARTBEAT, "schedule": 10.0},
    # The outbox relay: pending Kafka records leave within about a second of their commit.
    # A run that finds the relay busy returns at once; expired runs are dropped, not queued up.
    "outbox-relay": {"task": task_names.OUTBOX_RELAY, "schedule": 1.0, "options": {"expires": 5}},
    # Bets held by the in-play delay are decided within about a second of its end.
    "bets-delay-resolve": {"task": task_names.BETS_DELAY_RESOLVE, "schedule": 1.0, "options": {"expires": 2}},
    # Channels with no websocket attached for STREAM_IDLE_EXPIRY_S are ended.
    "streams-expire": {
        "task": task_names.STREAMS_EXPIRE_IDLE,
        "schedule": float(STREAM_SWEEP_INTERVAL_S),
        "options": {"expires": max(1, STREAM_SWEEP_INTERVAL_S - 1)},
    },
    "settlement-sweep": {"task": task_names.SETTLEMENT_SWEEP, "schedule": 60.0, "options": {"expires": 55}},
    # Operations: dashboard history, pruning, kick-off safety net, weekly digest.
    "metrics-sample": {"task": task_names.METRICS_SAMPLE, "schedule": 5.0, "options": {"expires": 4}},
    "metrics-prune": {"task": task_names.METRICS_PRUNE, "schedule": 3600.0, "options": {"expires": 600}},
    "markets-kickoff-suspend": {
        "task": task_names.MARKETS_KICKOFF_SUSPEND,
        "schedule": 15.0,
        "options": {"expires": 14},
    },
    # The exchange rates mirrored into Redis (a fresh or flushed Redis gets them within this);
    # a change by the operator is applied at once by its own task.
    "exchange-rates": {"task": task_names.EXCHANGE_RATES_APPLY, "schedule": 30.0, "options": {"expires": 29}},
    "digest-weekly": {
        "task": task_names.DIGEST_WEEKLY,
        "schedule": crontab(minute=0, hour=8, day_of_week="mon"),
        "options": {"expires": 6 * 3600},
    },
}
