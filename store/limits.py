"""Where the rate limits count: the ``limits`` library's Redis storage, sync and asyncio, with
every counter under the rate limits' prefix (``keys.rate_limits``)."""

from __future__ import annotations

from typing import Any

from limits.aio.storage import RedisStorage as AsyncRedisStorage
from limits.storage import RedisStorage

from store import keys


def limit_storage(client: Any) -> RedisStorage:
    """The rate limits' storage on ``client``'s connection pool (redis-py, sync)."""
    return RedisStorage("redis://", connection_pool=client.connection_pool, key_prefix=keys.rate_limits())


def limit_storage_async(client: Any) -> AsyncRedisStorage:
    """The rate limits' storage on ``client``'s connection pool (redis-py's asyncio client)."""
    return AsyncRedisStorage(
        "async+redis://",
        implementation="redispy",
        connection_pool=client.connection_pool,
        key_prefix=keys.rate_limits(),
    )
