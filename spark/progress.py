"""Publishes streaming-query progress to Redis for /healthz and the lag dashboard."""

from __future__ import annotations

import time

import redis
from pyspark.sql.streaming import StreamingQueryListener

from reducers import keys

PROGRESS_TTL_S = 3600
HEARTBEAT_TTL_S = 120


class RedisProgressListener(StreamingQueryListener):
    def __init__(self, client: redis.Redis, component: str) -> None:
        self._client = client
        self._component = component

    def onQueryStarted(self, event) -> None:
        self._client.set(keys.heartbeat(self._component), int(time.time()), ex=HEARTBEAT_TTL_S)

    def onQueryProgress(self, event) -> None:
        progress = event.progress
        pipe = self._client.pipeline(transaction=False)
        pipe.set(keys.reducer_progress(progress.name or str(progress.id)), progress.json, ex=PROGRESS_TTL_S)
        pipe.set(keys.heartbeat(self._component), int(time.time()), ex=HEARTBEAT_TTL_S)
        pipe.execute()

    def onQueryIdle(self, event) -> None:
        self._client.set(keys.heartbeat(self._component), int(time.time()), ex=HEARTBEAT_TTL_S)

    def onQueryTerminated(self, event) -> None:
        self._client.delete(keys.heartbeat(self._component))
