"""A batch is done once Redis replicas hold its writes (``REDIS_REPLICAS_ACK``).

Spark commits a micro-batch's offsets when its ``foreachBatch`` function returns. With a
replica behind a Sentinel-managed master, a write the master acknowledged can still be lost
if the master dies before the replica has it; waiting for the replica before returning means a
failover never loses state whose offsets were committed. A batch whose writes the replicas do
not acknowledge in time fails, and its query is restarted and replays it (every effect is
idempotent).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from spark.config import config
from store.clients import redis_client
from store.markets import replicas_acknowledge


class Replicated:
    """The batch function, then the wait for replicas (nothing when none are required)."""

    def __init__(self, process: Callable[[Any, int], None], *, redis_url: str) -> None:
        self.process = process
        self._client = redis_client(redis_url) if config().redis_replicas > 0 else None

    def __call__(self, batch: Any, batch_id: int) -> None:
        self.process(batch, batch_id)
        if self._client is not None:
            settings = config()
            replicas_acknowledge(
                self._client, replicas=settings.redis_replicas, timeout_ms=settings.redis_replica_timeout_ms
            )
