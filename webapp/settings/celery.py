from celery.schedules import crontab

from reducers import keys
from reducers.connections import celery_broker, with_db
from webapp.settings.channels import STREAM_SWEEP_INTERVAL_S
from webapp.settings.env import read
from webapp.settings.redis import REDIS_URL

# The broker's Redis (database 1 beside the data's), as a Redis URL; Celery's own form of it
# names Sentinels its own way (reducers.connections.celery_broker).
CELERY_BROKER_REDIS_URL = read.text("CELERY_BROKER_URL", with_db(REDIS_URL, 1))
CELERY_BROKER_URL, _BROKER_SENTINEL_OPTIONS = celery_broker(CELERY_BROKER_REDIS_URL)
# Queues carry the namespace, so stacks (or a test session beside a stack) sharing one Redis
# never take each other's tasks.
CELERY_BROKER_TRANSPORT_OPTIONS = {"global_keyprefix": keys.celery_prefix(), **_BROKER_SENTINEL_OPTIONS}
CELERY_RESULT_BACKEND = None
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TIMEZONE = "UTC"
CELERY_BEAT_SCHEDULE = {
    "heartbeat": {"task": "odds.tasks.worker_heartbeat", "schedule": 10.0},
    # The outbox relay: pending Kafka records leave within about a second of their commit.
    # A run that finds the relay busy returns at once; expired runs are dropped, not queued up.
    "outbox-relay": {"task": "odds.tasks.outbox_relay", "schedule": 1.0, "options": {"expires": 5}},
    # Bets held by the in-play delay are decided within about a second of its end.
    "bets-delay-resolve": {"task": "odds.tasks.bets_delay_resolve", "schedule": 1.0, "options": {"expires": 2}},
    # Channels with no websocket attached for STREAM_IDLE_EXPIRY_S are ended.
    "streams-expire": {
        "task": "odds.tasks.streams_expire_idle",
        "schedule": float(STREAM_SWEEP_INTERVAL_S),
        "options": {"expires": max(1, STREAM_SWEEP_INTERVAL_S - 1)},
    },
    "settlement-sweep": {"task": "odds.tasks.settlement_sweep", "schedule": 60.0, "options": {"expires": 55}},
    # Operations: dashboard history, pruning, kick-off safety net, weekly digest.
    "metrics-sample": {"task": "odds.tasks.metrics_sample", "schedule": 5.0, "options": {"expires": 4}},
    "metrics-prune": {"task": "odds.tasks.metrics_prune", "schedule": 3600.0, "options": {"expires": 600}},
    "markets-kickoff-suspend": {
        "task": "odds.tasks.markets_kickoff_suspend",
        "schedule": 15.0,
        "options": {"expires": 14},
    },
    "digest-weekly": {
        "task": "odds.tasks.digest_weekly",
        "schedule": crontab(minute=0, hour=8, day_of_week="mon"),
        "options": {"expires": 6 * 3600},
    },
}
