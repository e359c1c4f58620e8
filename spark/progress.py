"""Publishes streaming-query progress to Redis and commits processed offsets to Kafka.

For every progress report of every query: the progress JSON (counting the rows of batches read
outside Spark, ``reducers.lag.rows_read_outside_spark``), the lag per partition, and a heartbeat
go to Redis (for /healthz and the lag dashboard), and the processed offsets are committed to the
query's consumer group so standard Kafka tools show the same lag.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

import orjson
import redis
from confluent_kafka import Consumer, KafkaException, TopicPartition
from pyspark.sql.streaming import StreamingQueryListener
from pyspark.sql.streaming.listener import (
    JStreamingQueryListener,
    QueryIdleEvent,
    QueryProgressEvent,
    QueryStartedEvent,
    QueryTerminatedEvent,
)

from reducers import topics
from reducers.lag import iso_ms, json_field, offsets, partition_lags, rows_read_outside_spark
from store.clients import kafka_consumer
from store.pipeline import (
    heartbeat_beat,
    reducer_lag_write,
    reducer_progress_keep,
    reducer_progress_write,
    reducer_seen_write,
)

log = logging.getLogger("spark.progress")

PROGRESS_TTL_S = 3600
# Progress reports kept per query beyond the latest: a minute of batches at the busiest.
PROGRESS_RECENT = 200
HEARTBEAT_TTL_S = 120


class _JsonEventListener(JStreamingQueryListener):
    """Hands each event to the Python listener decoded from the event's own JSON, one call into
    the JVM. PySpark's default builds the event field by field, dozens of round trips per event;
    at several price batches a second the listener bus fell behind the queries by tens of
    seconds, and the lag dashboard with it."""

    def onQueryStarted(self, jevent: Any) -> None:
        self.pylistener.onQueryStarted(QueryStartedEvent.fromJson(json.loads(jevent.json())))

    def onQueryProgress(self, jevent: Any) -> None:
        self.pylistener.onQueryProgress(QueryProgressEvent.fromJson(json.loads(jevent.json())))

    def onQueryIdle(self, jevent: Any) -> None:
        self.pylistener.onQueryIdle(QueryIdleEvent.fromJson(json.loads(jevent.json())))

    def onQueryTerminated(self, jevent: Any) -> None:
        self.pylistener.onQueryTerminated(QueryTerminatedEvent.fromJson(json.loads(jevent.json())))


class RedisProgressListener(StreamingQueryListener):
    @property
    def _jlistener(self) -> Any:
        # PySpark registers what this property returns; see _JsonEventListener.
        from pyspark import SparkContext

        if not hasattr(self, "_json_jlistener"):
            jvm = SparkContext._jvm
            assert jvm is not None
            self._json_jlistener = jvm.PythonStreamingQueryListenerWrapper(_JsonEventListener(self))
        return self._json_jlistener

    def __init__(
        self,
        client: redis.Redis,
        component: str,
        *,
        bootstrap: str | None = None,
        committed_elsewhere: frozenset[str] = frozenset(),
    ) -> None:
        """``committed_elsewhere``: queries whose consumer group something else commits to (the
        real-time price query's, by the applier, from what it has applied)."""
        self._client = client
        self._component = component
        self._bootstrap = bootstrap
        self._committed_elsewhere = committed_elsewhere
        self._committers: dict[str, Consumer] = {}
        self._caught_up: dict[str, dict[tuple[str, int], int]] = {}
        # Query id → name: idle events carry only the id.
        self._names: dict[str, str] = {}
        # Query name → when its last reported trigger started (epoch ms).
        self._triggered: dict[str, int | None] = {}

    def _beat(self) -> None:
        heartbeat_beat(self._client, self._component, ttl_s=HEARTBEAT_TTL_S)

    def _seen(self, name: str, pipe: Any | None = None) -> None:
        reducer_seen_write(pipe or self._client, name, int(time.time() * 1000))

    def onQueryStarted(self, event) -> None:
        name = event.name or str(event.id)
        self._names[str(event.id)] = name
        self._seen(name)
        self._beat()

    def onQueryProgress(self, event) -> None:
        progress = event.progress
        name = progress.name or str(progress.id)
        now_ms = int(time.time() * 1000)
        raw = rows_read_outside_spark(json.loads(progress.json), previous_trigger_ms=self._triggered.get(name))
        self._triggered[name] = iso_ms(raw.get("timestamp"))
        report = orjson.dumps(raw)
        end: dict[str, dict[int, int]] = {}
        latest: dict[str, dict[int, int]] = {}
        for source in raw.get("sources", []):
            for topic, parts in offsets(json_field(source.get("endOffset"))).items():
                end.setdefault(topic, {}).update(parts)
            for topic, parts in offsets(json_field(source.get("latestOffset"))).items():
                latest.setdefault(topic, {}).update(parts)
        lags = partition_lags(end=end, latest=latest, previous=self._caught_up.get(name, {}), now_ms=now_ms)
        self._caught_up[name] = {(lag.topic, lag.partition): lag.caught_up_at for lag in lags}
        pipe = self._client.pipeline(transaction=False)
        reducer_progress_write(pipe, name, report, ttl_s=PROGRESS_TTL_S)
        reducer_progress_keep(pipe, name, report, keep=PROGRESS_RECENT, ttl_s=PROGRESS_TTL_S)
        lag = {"ts": now_ms, "partitions": [lag.to_json() for lag in lags]}
        reducer_lag_write(pipe, name, lag, ttl_s=PROGRESS_TTL_S)
        self._seen(name, pipe)
        pipe.execute()
        self._beat()
        self._commit(name, end)

    def onQueryIdle(self, event) -> None:
        name = self._names.get(str(event.id))
        if name is not None:
            self._seen(name)
        self._beat()

    def onQueryTerminated(self, event) -> None:
        # One query stopping is not the process stopping: the supervisor restarts it and shows
        # its state; the heartbeat ages out if the whole process is gone.
        pass

    def _commit(self, name: str, end: dict[str, dict[int, int]]) -> None:
        if not self._bootstrap or not end or name in self._committed_elsewhere:
            return
        committer = self._committers.get(name)
        if committer is None:
            committer = kafka_consumer(self._bootstrap, topics.reducer_group(name), on_commit=_commit_failed_log)
            self._committers[name] = committer
        partitions = [TopicPartition(t, p, o) for t, parts in end.items() for p, o in parts.items()]
        # Asynchronous: the listener bus waits for this handler, and a broker round trip per
        # progress report held every later report back. Failures are logged by the callback,
        # served by poll(); offsets only move forward, so a lost commit is made good by the next.
        try:
            committer.commit(offsets=partitions, asynchronous=True)
            committer.poll(0)
        except KafkaException as exc:
            log.warning("committing offsets of %s failed: %s", name, exc)


def _commit_failed_log(err: Any, partitions: Any) -> None:
    if err is not None:
        log.warning("committing offsets failed: %s", err)
