from webapp.settings.env import env
from webapp.settings.redis import REDIS_URL

CELERY_BROKER_URL = env("CELERY_BROKER_URL", REDIS_URL.rsplit("/", 1)[0] + "/1")
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
    # Channels whose websocket stayed silent past STREAM_IDLE_EXPIRY_S are unsubscribed.
    "streams-expire": {"task": "odds.tasks.streams_expire_idle", "schedule": 30.0, "options": {"expires": 25}},
    "settlement-sweep": {"task": "odds.tasks.settlement_sweep", "schedule": 60.0, "options": {"expires": 55}},
}
