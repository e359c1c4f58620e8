"""Celery tasks. Thin: each takes ids or nothing, calls one service, and is idempotent."""

from __future__ import annotations

import time

import redis
from celery import shared_task
from django.conf import settings

from reducers import keys


@shared_task(ignore_result=True)
def worker_heartbeat() -> None:
    """Scheduled by beat and run by a worker: proves both are alive for /healthz."""
    redis.Redis.from_url(settings.REDIS_URL).set(keys.heartbeat("celery"), int(time.time()), ex=120)
