"""The site's shared Redis connection pool (one per process), from the one client factory."""

from __future__ import annotations

import functools

import redis
from django.conf import settings

from store.clients import redis_client


@functools.cache
def redis_shared() -> redis.Redis:
    """One connection pool per process for reads of the live state."""
    return redis_client(settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2)
