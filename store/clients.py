"""Every Redis connection and every Kafka client of every process is made here.

Kafka producers: ``kafka_producer`` with the platform's settings (acks=all, idempotent, the
Java clients' partitioner so every producer puts a market on the same partition). Kafka
consumers: ``kafka_consumer``, which never commits by itself: offsets move only when the
caller says its effects are applied (or never, for a reader that joins no group).

``REDIS_URL`` names either one server or a Sentinel-managed master:

* ``redis://[:password@]host:port/db`` (or ``rediss://``, ``unix://``): that server.
* ``redis+sentinel://[:password@]host:port[,host:port…]/service[/db]``: the master the
  Sentinels at those addresses name for ``service``. Clients ask a Sentinel for the master's
  address on every new connection, so after a failover they reconnect to the promoted replica
  by themselves; a connection still open to a demoted master is closed on its first error.
  The password is the data nodes' (Sentinels are reached without one).

The same URL configures the reducers, the web processes' clients and websocket hub, the Django
cache (``ConnectionPoolOf``), the Channels layer and the Celery broker.
"""

from __future__ import annotations

from typing import Any

import redis
import redis.asyncio as aioredis
from confluent_kafka import Consumer, Producer
from redis.asyncio.sentinel import Sentinel as AsyncSentinel
from redis.sentinel import Sentinel, SentinelConnectionPool

from reducers.redis_url import sentinel_target

PRODUCER_DEFAULTS: dict[str, Any] = {
    "acks": "all",
    "enable.idempotence": True,
    "linger.ms": 5,
    "batch.num.messages": 10000,
    "compression.type": "lz4",
    # The partitioner of Kafka's Java clients, so every producer puts a market on one partition.
    "partitioner": "murmur2_random",
}

CONSUMER_DEFAULTS: dict[str, Any] = {
    # At least once with idempotent effects: an offset is committed after what it caused.
    "enable.auto.commit": False,
    "enable.auto.offset.store": False,
}

# What Redis answers an EVALSHA of a script it does not hold (after a restart or a failover); for
# the store, which runs its scripts by hash and loads them again on this error.
NoScriptError = redis.exceptions.NoScriptError


def _sentinel_options(options: dict[str, Any]) -> dict[str, Any]:
    # Asking a Sentinel must not wait long on a dead one: the next is tried.
    return {k: v for k, v in options.items() if k.startswith("socket_")} or {
        "socket_timeout": 1.0,
        "socket_connect_timeout": 1.0,
    }


def redis_client(url: str, **options: Any) -> redis.Redis:
    """A client for the URL's server or Sentinel-managed master; ``options`` are redis-py's."""
    target = sentinel_target(url)
    if target is None:
        return redis.Redis.from_url(url, **options)
    sentinel = Sentinel(list(target.sentinels), sentinel_kwargs=_sentinel_options(options))
    return sentinel.master_for(target.service, db=target.db, password=target.password, **options)


def async_redis_client(
    url: str, *, max_connections: int | None = None, pool_timeout: float | None = None, **options: Any
) -> aioredis.Redis:
    """An asyncio client. With ``max_connections`` and ``pool_timeout`` a command waits that long
    for a free connection instead of failing (single server); a Sentinel-managed master's pool
    is capped at ``max_connections`` the same way redis-py's Sentinel pool caps it."""
    target = sentinel_target(url)
    if target is None:
        if max_connections is None:
            return aioredis.Redis.from_url(url, **options)
        pool: aioredis.BlockingConnectionPool = aioredis.BlockingConnectionPool.from_url(
            url, max_connections=max_connections, timeout=pool_timeout, **options
        )
        return aioredis.Redis(connection_pool=pool)
    sentinel = AsyncSentinel(list(target.sentinels), sentinel_kwargs=_sentinel_options(options))
    if max_connections is not None:
        options["max_connections"] = max_connections
    return sentinel.master_for(target.service, db=target.db, password=target.password, **options)


class ConnectionPoolOf:
    """A ``pool_class`` for Django's Redis cache: ``from_url`` understands Sentinel URLs too."""

    @classmethod
    def from_url(cls, url: str, **options: Any) -> redis.ConnectionPool:
        target = sentinel_target(url)
        if target is None:
            return redis.ConnectionPool.from_url(url, **options)
        sentinel = Sentinel(list(target.sentinels), sentinel_kwargs=_sentinel_options(options))
        return SentinelConnectionPool(
            target.service, sentinel, is_master=True, db=target.db, password=target.password, **options
        )


def channel_layer_host(url: str) -> str | dict[str, Any]:
    """The URL as a host of channels_redis, which takes Sentinels as a mapping."""
    target = sentinel_target(url)
    if target is None:
        return url
    host: dict[str, Any] = {"sentinels": list(target.sentinels), "master_name": target.service, "db": target.db}
    if target.password:
        host["password"] = target.password
    return host


def celery_broker(url: str) -> tuple[str, dict[str, Any]]:
    """Celery's broker URL and the transport options it needs for the URL (kombu names
    Sentinels ``sentinel://host:port;sentinel://…`` and the service in the options)."""
    target = sentinel_target(url)
    if target is None:
        return url, {}
    auth = f":{target.password}@" if target.password else ""
    broker = ";".join(f"sentinel://{auth}{host}:{port}/{target.db}" for host, port in target.sentinels)
    return broker, {"master_name": target.service}


def kafka_producer(bootstrap: str, **overrides: Any) -> Producer:
    """An idempotent producer (acks=all), batched for throughput; ``overrides`` are librdkafka's."""
    return Producer({"bootstrap.servers": bootstrap, **PRODUCER_DEFAULTS, **overrides})


def kafka_consumer(bootstrap: str, group: str, **overrides: Any) -> Consumer:
    """A consumer in ``group`` that commits only the offsets it is given (``commit(offsets=…)``);
    ``overrides`` are librdkafka's (dotted names through ``**{…}``)."""
    return Consumer({"bootstrap.servers": bootstrap, "group.id": group, **CONSUMER_DEFAULTS, **overrides})
