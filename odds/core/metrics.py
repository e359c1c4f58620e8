"""Operational figures of the platform, read live: consumer lag per reducer query and partition
(from Kafka itself, the way `kafka-consumer-groups --describe` computes it), query rates and
batch durations (from the progress the reducers store), end-to-end latency, websockets, dead
letters, late records, Redis memory and the Celery queue.

Lag is committed offset vs log-end offset, both read from Kafka at the moment of the reading:
the reducers commit their processed offsets to ``topics.reducer_group(query)`` after each batch,
so the dashboard, ``/metrics`` and Kafka's own tools show the same numbers. Each reading is kept
in a short sliding window in Redis; the Burrow rules (``reducers.burrow``) judge each partition
over that window.

Lag in seconds is the age of the oldest record a query has not processed: the timestamp of the
record at its committed offset, read from Kafka, per partition. Each query is also judged
against its objective (``OPS_LAG_OBJECTIVES_S``), and its figures are marked stale when it has
given no sign of life for ``OPS_REPORT_STALE_S``.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
import socket
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import orjson
import redis
from confluent_kafka import OFFSET_BEGINNING, ConsumerGroupTopicPartitions, TopicPartition
from confluent_kafka.admin import OffsetSpec
from django.conf import settings
from django.db import DatabaseError, connection

from odds.core.backups import backup_status_read, backup_verdicts, wal_archive_status
from odds.core.health import reducer_query_runs
from odds.core.kafka import admin_client, reader_create
from reducers import burrow, topics
from reducers.dead_letters import COUNTER_AGAIN
from reducers.lag import iso_ms
from reducers.latency import (
    PIPELINE_STAGES,
    STAGE_BROWSER,
    STAGE_WEBSOCKET,
    LatencyHistogram,
    known_stage,
    state_spans_ms,
)
from reducers.queries import QUERIES
from store.clients import redis_client
from store.latency import browser_samples_keep, browser_samples_read, histograms_read, latency_observe
from store.markets import MarketStore, queue_states, raw_states
from store.pipeline import (
    counter_add,
    counter_fields,
    counter_forget,
    counter_report,
    counters_read,
    lag_window_add,
    lag_window_read,
    reducer_progress_read,
    reducer_seen_read,
)

log = logging.getLogger(__name__)

# The reducer queries and the topic each reads (reducers/queries.py).
QUERY_TOPICS: dict[str, Callable[[], str]] = {query.name: query.source for query in QUERIES}
# Shown beside them while it runs (real-time mode): the price reducer's applier.
APPLIER_TOPICS: dict[str, Callable[[], str]] = {topics.PRICE_APPLIER: topics.prices_checked}
# Counter families (``store.pipeline``) this module reads and writes.
COUNTER_DEAD_LETTERS = "dead_letters"
COUNTER_DEAD_LETTERS_AGAIN = COUNTER_AGAIN
COUNTER_WEBSOCKET_CLOSES = "websocket_closes"
COUNTER_LATE_RECORDS = "late_records"
COUNTER_WEBSOCKETS = "websockets"
CELERY_QUEUE = "celery"

WEBSOCKET_REPORT_MAX_AGE_MS = 30_000
# The workers' websocket reports are gone this long after the last one.
WEBSOCKET_REPORTS_TTL_S = 60
# A query's lag readings are gone this long after its last one.
LAG_WINDOW_TTL_S = 3600
BROWSER_SAMPLES_MAX = 2000
BROWSER_SAMPLES_TTL_S = 600
LATENCY_STATE_SAMPLE = 200
LATENCY_MAX_AGE_MS = 120_000
KAFKA_TIMEOUT_S = 5.0
# How long one reading waits for the records at the committed offsets of lagging partitions.
RECORD_TIMES_TIMEOUT_S = 1.5
OBJECTIVE_MET = "met"
OBJECTIVE_BREACHED = "breached"


def window_size() -> int:
    return int(getattr(settings, "OPS_LAG_WINDOW_SAMPLES", 8))


def window_spacing_ms() -> int:
    return int(getattr(settings, "OPS_LAG_WINDOW_SPACING_MS", 2000))


@functools.cache
def _redis() -> redis.Redis:
    return redis_client(settings.REDIS_URL, socket_timeout=3, socket_connect_timeout=3)


@functools.cache
def _broker() -> redis.Redis:
    return redis_client(settings.CELERY_BROKER_REDIS_URL, socket_timeout=3, socket_connect_timeout=3)


def _now_ms() -> int:
    return int(time.time() * 1000)


# --- Kafka: partitions, committed and log-end offsets -------------------------------------


def topic_partitions(topic: str) -> list[int]:
    """Partition ids of ``topic`` (empty when it does not exist)."""
    metadata = admin_client().list_topics(topic, timeout=KAFKA_TIMEOUT_S)
    found = metadata.topics.get(topic)
    if found is None or found.error is not None:
        return []
    return sorted(found.partitions)


def committed_offsets(group: str, partitions: Sequence[tuple[str, int]]) -> dict[tuple[str, int], int]:
    """The group's committed offset per partition; -1 where it committed nothing."""
    if not partitions:
        return {}
    request = ConsumerGroupTopicPartitions(group, [TopicPartition(t, p) for t, p in partitions])
    future = admin_client().list_consumer_group_offsets([request], request_timeout=KAFKA_TIMEOUT_S)[group]
    result = dict.fromkeys(partitions, -1)
    for tp in future.result().topic_partitions:
        if tp.error is None and tp.offset >= 0:
            result[(tp.topic, tp.partition)] = tp.offset
    return result


def log_end_offsets(partitions: Iterable[tuple[str, int]]) -> dict[tuple[str, int], int]:
    """Log-end offset (high watermark) per partition; -1 where it could not be read."""
    wanted = {TopicPartition(t, p): OffsetSpec.latest() for t, p in set(partitions)}
    if not wanted:
        return {}
    result: dict[tuple[str, int], int] = {}
    for tp, future in admin_client().list_offsets(wanted, request_timeout=KAFKA_TIMEOUT_S).items():
        try:
            result[(tp.topic, tp.partition)] = future.result().offset
        except Exception:
            result[(tp.topic, tp.partition)] = -1
    return result


_reader_lock = threading.Lock()


@functools.cache
def _reader() -> Any:
    # Asked only for offsets below the log end: one gone (retention, compaction) is answered by
    # the first record still kept.
    return reader_create(**{"auto.offset.reset": "earliest"})


def record_times(positions: Iterable[tuple[str, int, int]]) -> dict[tuple[str, int, int], int]:
    """The timestamp (epoch ms) of the record at each (topic, partition, offset); an offset of
    -1 means the partition's first record. A record gone (compacted, expired) is answered by
    the next one; a position with no record within the timeout is left out."""
    wanted = sorted(set(positions))
    found: dict[tuple[str, int, int], int] = {}
    # One assignment holds one offset per partition: positions sharing a partition (two queries
    # reading one topic) are read in turns.
    rounds: list[dict[tuple[str, int], int]] = []
    for topic, partition, offset in wanted:
        for turn in rounds:
            if (topic, partition) not in turn:
                turn[(topic, partition)] = offset
                break
        else:
            rounds.append({(topic, partition): offset})
    with _reader_lock:
        reader = _reader()
        for turn in rounds:
            deadline = time.monotonic() + RECORD_TIMES_TIMEOUT_S
            reader.assign([TopicPartition(t, p, o if o >= 0 else OFFSET_BEGINNING) for (t, p), o in turn.items()])
            left = dict(turn)
            try:
                while left and time.monotonic() < deadline:
                    for message in reader.consume(num_messages=500, timeout=0.1):
                        key = (message.topic(), message.partition())
                        if message.error() is not None or key not in left:
                            continue
                        found[(*key, left.pop(key))] = message.timestamp()[1]
                        reader.pause([TopicPartition(*key)])
            finally:
                reader.resume([TopicPartition(t, p) for t, p in turn])
                reader.unassign()
    return found


# --- Reducer progress --------------------------------------------------------------------


def _number(value: object) -> float:
    if isinstance(value, int | float) and math.isfinite(value):
        return float(value)
    return 0.0


def progress_figures(raw: bytes | str | None) -> dict[str, Any]:
    """Rates, batch duration, state size and report time from a query's progress JSON."""
    if not raw:
        return {"reported_ms": None, "input_rate": 0.0, "processed_rate": 0.0, "batch_ms": 0.0, "state_rows": 0.0}
    try:
        progress = orjson.loads(raw)
    except orjson.JSONDecodeError:
        progress = {}
    durations = progress.get("durationMs") or {}
    state = progress.get("stateOperators") or []
    return {
        "reported_ms": iso_ms(progress.get("timestamp")),
        "batch_id": progress.get("batchId"),
        "input_rate": _number(progress.get("inputRowsPerSecond")),
        "processed_rate": _number(progress.get("processedRowsPerSecond")),
        "batch_ms": _number(durations.get("triggerExecution")),
        "state_rows": sum(_number(op.get("numRowsTotal")) for op in state if isinstance(op, dict)),
        "state_bytes": sum(_number(op.get("memoryUsedBytes")) for op in state if isinstance(op, dict)),
    }


# --- Lag readings and the Burrow window ----------------------------------------------------


def _window_add(client: redis.Redis, query: str, reading: dict[str, Any]) -> bool:
    """Add the reading unless one was added less than the spacing ago (several readers poll)."""
    return lag_window_add(
        client, query, reading, size=window_size(), spacing_ms=window_spacing_ms(), ttl_s=LAG_WINDOW_TTL_S
    )


def _samples(history: Sequence[dict[str, Any]], name: str) -> list[burrow.OffsetSample]:
    samples = []
    for reading in history:
        pair = reading["p"].get(name)
        if pair is not None:
            samples.append(burrow.OffsetSample(reading["ts"], pair[0], pair[1], reading.get("reported")))
    return samples


def objectives() -> dict[str, float]:
    """Seconds behind each reducer query may fall (``OPS_LAG_OBJECTIVES_S``)."""
    return dict(getattr(settings, "OPS_LAG_OBJECTIVES_S", {}))


def latency_objectives() -> dict[str, float]:
    """Seconds the 99th percentile of each latency stage may reach (``OPS_LATENCY_OBJECTIVES_S``)."""
    return dict(getattr(settings, "OPS_LATENCY_OBJECTIVES_S", {}))


def stale_after_ms() -> int:
    return int(float(getattr(settings, "OPS_REPORT_STALE_S", 30)) * 1000)


def reducer_lag(*, now_ms: int | None = None, record: bool = True) -> dict[str, Any]:
    """Every reducer query's lag per partition, read from Kafka now, judged over the window and
    against the query's objective.

    ``record`` adds this reading to the sliding window (at most one per spacing interval).
    """
    client = _redis()
    now_ms = now_ms if now_ms is not None else _now_ms()
    runs = reducer_query_runs()
    queries = QUERY_TOPICS | {name: fn for name, fn in APPLIER_TOPICS.items() if name in runs}
    parts_of = {name: [(fn(), p) for p in topic_partitions(fn())] for name, fn in queries.items()}
    ends = log_end_offsets(tp for parts in parts_of.values() for tp in parts)
    progress_raw = reducer_progress_read(client, list(queries))
    seen = reducer_seen_read(client)
    committed_of = {query: committed_offsets(topics.reducer_group(query), parts) for query, parts in parts_of.items()}
    behind = [
        (t, p, committed[(t, p)])
        for query, committed in committed_of.items()
        for (t, p) in parts_of[query]
        if ends.get((t, p), -1) > max(0, committed[(t, p)])
    ]
    oldest_unprocessed = record_times(behind)
    goals = objectives()
    result: dict[str, Any] = {}
    for query, parts in parts_of.items():
        committed = committed_of[query]
        figures = progress_figures(progress_raw[query])
        alive = max([t for t in (figures["reported_ms"], seen.get(query)) if t is not None], default=None)
        reading = {
            "ts": now_ms,
            "reported": alive,
            "p": {f"{t}/{p}": [committed[(t, p)], ends.get((t, p), -1)] for t, p in parts},
        }
        history = lag_window_read(client, query, size=window_size())
        if record:
            _window_add(client, query, reading)
        window = [reading, *[h for h in history if h["ts"] < now_ms]][: window_size()]
        partitions: list[dict[str, Any]] = []
        for topic, partition in parts:
            samples = _samples(window, f"{topic}/{partition}")
            evaluation = burrow.evaluate(samples, now_ms=now_ms)
            position = (topic, partition, committed[(topic, partition)])
            if evaluation.lag <= 0:
                seconds, source = 0.0, "caught_up"
            elif position in oldest_unprocessed:
                seconds, source = max(0.0, (now_ms - oldest_unprocessed[position]) / 1000), "record"
            else:
                seconds, source = burrow.lag_seconds(samples, now_ms=now_ms), "window"
            partitions.append(
                {
                    "topic": topic,
                    "partition": partition,
                    "committed": committed[(topic, partition)],
                    "log_end": ends.get((topic, partition), -1),
                    "lag": evaluation.lag,
                    "lag_seconds": round(seconds, 3),
                    # "record": the age of the oldest unprocessed record; "window": estimated from
                    # the window's log-end offsets (the record could not be read).
                    "lag_seconds_source": source,
                    "status": str(evaluation.status),
                    "reason": evaluation.reason,
                }
            )
        statuses = [burrow.Status(p["status"]) for p in partitions]
        lag_seconds = max((p["lag_seconds"] for p in partitions), default=0.0)
        objective_s = goals.get(query)
        result[query] = {
            "group": topics.reducer_group(query),
            "status": str(burrow.group_status(statuses)),
            "worst": str(burrow.worst(statuses)),
            "lag": sum(p["lag"] for p in partitions),
            "lag_seconds": lag_seconds,
            "objective_s": objective_s,
            "objective": (
                None if objective_s is None else OBJECTIVE_BREACHED if lag_seconds > objective_s else OBJECTIVE_MET
            ),
            **figures,
            # The latest sign of life (progress report or idle event); stale when too old.
            "seen_ms": alive,
            "stale": alive is None or now_ms - alive > stale_after_ms(),
            # Supervision: running or restarting, restarts, last error (None before any report).
            "run": runs.get(query),
            "partitions": partitions,
        }
    return result


# --- Latency --------------------------------------------------------------------------------


def percentiles(values: Sequence[float], points: Sequence[int] = (50, 90, 99)) -> dict[str, float]:
    """Nearest-rank percentiles (``p50`` …) and the count ``n``; zeros when there is nothing."""
    ordered = sorted(values)
    out: dict[str, float] = {"n": float(len(ordered))}
    for point in points:
        if not ordered:
            out[f"p{point}"] = 0.0
            continue
        rank = max(1, math.ceil(point / 100 * len(ordered)))
        out[f"p{point}"] = float(ordered[rank - 1])
    return out


def stage_latencies(frames: Iterable[dict[str, Any]], *, now_ms: int) -> dict[str, list[float]]:
    """Per-stage latencies (ms) of market frames applied within ``LATENCY_MAX_AGE_MS``:
    event → produce, produce → Kafka, Kafka → reducer, and event → reducer."""
    stages: dict[str, list[float]] = {stage: [] for stage in PIPELINE_STAGES}
    for frame in frames:
        spans = state_spans_ms(frame) if isinstance(frame, dict) else None
        if spans is None or now_ms - frame["ts"]["reducer"] > LATENCY_MAX_AGE_MS:
            continue
        for stage, ms in zip(PIPELINE_STAGES, spans, strict=True):
            stages[stage].append(ms)
    return stages


def latency(*, now_ms: int | None = None) -> dict[str, dict[str, float]]:
    """Latency percentiles of recently applied market states (a random sample of the markets
    table) and of the samples operators' browsers acknowledged (receipt - event time)."""
    client = _redis()
    now_ms = now_ms if now_ms is not None else _now_ms()
    ids = MarketStore(client).sample_market_ids(LATENCY_STATE_SAMPLE)
    pipe = client.pipeline(transaction=False)
    queue_states(pipe, ids)
    frames = []
    for raw_state in raw_states(ids, pipe.execute() if ids else []).values():
        with contextlib.suppress(orjson.JSONDecodeError):
            frames.append(orjson.loads(raw_state))
    stages = stage_latencies(frames, now_ms=now_ms)
    result = {name: percentiles(values) for name, values in stages.items()}
    browser = browser_samples_read(client, count=BROWSER_SAMPLES_MAX)
    recent = [b for b in browser if now_ms - int(b.get("at", 0)) <= LATENCY_MAX_AGE_MS * 5]
    result[STAGE_BROWSER] = percentiles([float(b["e2e"]) for b in recent])
    result[STAGE_WEBSOCKET] = percentiles([float(b["ws"]) for b in recent if b.get("ws") is not None])
    return result


def browser_latency_record(*, samples: Sequence[dict[str, float]], now_ms: int | None = None) -> int:
    """Keep latency samples a browser measured: ``e2e`` (receipt - event time, ms) and optionally
    ``ws`` (receipt - reducer time), in the recent window the dashboard's percentiles read and in
    the cumulative histograms of ``/metrics``. Returns how many were kept."""
    now_ms = now_ms if now_ms is not None else _now_ms()
    rows = [
        orjson.dumps({"at": now_ms, "e2e": float(s["e2e"]), "ws": float(s["ws"]) if "ws" in s else None})
        for s in samples
    ]
    if not rows:
        return 0
    client = _redis()
    # One transaction, so a scrape never sees a bucket counted without its share of the sum.
    pipe = client.pipeline(transaction=True)
    browser_samples_keep(pipe, rows, keep=BROWSER_SAMPLES_MAX, ttl_s=BROWSER_SAMPLES_TTL_S)
    latency_observe(pipe, stage=STAGE_BROWSER, seconds=[float(s["e2e"]) / 1000 for s in samples])
    latency_observe(pipe, stage=STAGE_WEBSOCKET, seconds=[float(s["ws"]) / 1000 for s in samples if "ws" in s])
    pipe.execute()
    return len(rows)


def latency_histograms() -> dict[str, LatencyHistogram]:
    """Every stage's cumulative latency histogram, as every process recorded it."""
    return histograms_read(_redis())


# --- Websockets per worker -------------------------------------------------------------------


def worker_name() -> str:
    """This process's name in the websocket report: host and pid."""
    import os

    return f"{socket.gethostname()}:{os.getpid()}"


def websockets_report(
    *, count: int, worker: str | None = None, now_ms: int | None = None, closes: Mapping[str, int] | None = None
) -> None:
    """The hook an ASGI worker calls (every few seconds, and on connect/disconnect) with the
    number of websockets it holds, and the closes by cause since its last report (added to the
    ``websocket_closes`` counter). Reports older than 30 s are ignored; the hash expires when
    no worker reports any more."""
    now_ms = now_ms if now_ms is not None else _now_ms()
    client = _redis()
    pipe = client.pipeline(transaction=False)
    report = orjson.dumps({"n": count, "ts": now_ms})
    counter_report(pipe, COUNTER_WEBSOCKETS, worker or worker_name(), report, ttl_s=WEBSOCKET_REPORTS_TTL_S)
    for cause, closed in (closes or {}).items():
        counter_add(pipe, COUNTER_WEBSOCKET_CLOSES, cause, closed)
    pipe.execute()


def websockets_by_worker(*, now_ms: int | None = None) -> dict[str, int]:
    now_ms = now_ms if now_ms is not None else _now_ms()
    client = _redis()
    result: dict[str, int] = {}
    stale = []
    for worker, raw in counter_fields(client, COUNTER_WEBSOCKETS).items():
        report = orjson.loads(raw)
        if now_ms - int(report["ts"]) > WEBSOCKET_REPORT_MAX_AGE_MS:
            stale.append(worker)
            continue
        result[worker.decode()] = int(report["n"])
    if stale:
        counter_forget(client, COUNTER_WEBSOCKETS, stale)
    return dict(sorted(result.items()))


# --- Latency observed in a web process -----------------------------------------------------


class LatencySamples:
    """Observations of one stage made in this process, added to the stage's histogram in Redis
    (``latency_observe``) at most once per ``interval_s``: one round trip a second under load
    rather than one a request, and at once when observations are rarer than that. Those of the
    last interval are lost if the process ends before its next flush."""

    def __init__(self, stage: str, *, interval_s: float = 1.0) -> None:
        self.stage = known_stage(stage)  # an unknown stage fails here, at import, not at the first flush
        self._interval_s = interval_s
        self._held: list[float] = []
        self._lock = threading.Lock()
        self._flushed_at = 0.0

    def observe(self, seconds: float, *, flush: bool = True) -> None:
        """Hold one observation; with ``flush`` send what is held once the interval is over (a
        caller on an event loop passes False and flushes from a thread)."""
        with self._lock:
            self._held.append(seconds)
            due = time.monotonic() - self._flushed_at >= self._interval_s
        if due and flush:
            self.flush()

    def flush(self) -> int:
        """Send what is held; returns how many observations. Redis away drops them (logged):
        a latency figure never fails the request it timed."""
        with self._lock:
            held, self._held = self._held, []
            self._flushed_at = time.monotonic()
        if not held:
            return 0
        try:
            pipe = _redis().pipeline(transaction=True)
            latency_observe(pipe, stage=self.stage, seconds=held)
            pipe.execute()
        except redis.RedisError as exc:
            log.warning("%d %s latencies not recorded: %s", len(held), self.stage, exc)
            return 0
        return len(held)


# --- Everything at once ----------------------------------------------------------------------


def _counters(name: str) -> dict[str, int]:
    return counters_read(_redis(), name)


def celery_queue_depth() -> int:
    return int(_broker().llen(CELERY_QUEUE))


def kafka_health(*, admin: Any = None, topic_names: Iterable[str] | None = None) -> dict[str, Any]:
    """The brokers the cluster reports, and the partitions of the platform's topics that are
    under-replicated (fewer replicas in sync than assigned) or offline (no leader): a broker
    lost shows here at once, before any lag builds."""
    metadata = (admin if admin is not None else admin_client()).list_topics(timeout=5)
    names = set(topic_names) if topic_names is not None else {t.name for t in topics.all_topics()}
    partitions = under = offline = 0
    leaders: dict[str, int] = {}
    for name in sorted(names & set(metadata.topics)):
        for partition in metadata.topics[name].partitions.values():
            partitions += 1
            if partition.leader < 0:
                offline += 1
            else:
                leaders[str(partition.leader)] = leaders.get(str(partition.leader), 0) + 1
            if len(partition.isrs) < len(partition.replicas):
                under += 1
    return {
        "brokers": len(metadata.brokers),
        "replication_factor": settings.KAFKA_REPLICATION_FACTOR,
        "partitions": partitions,
        "under_replicated": under,
        "offline": offline,
        "leaders": leaders,
    }


def backups_snapshot(*, now_ms: int | None = None) -> dict[str, Any]:
    """PostgreSQL's backups (as the backup scheduler last read the repository) and its WAL
    archive (read now), each judged against its objective. ``archive`` is ``None`` while the
    database cannot be read: the rest of ``/metrics`` still answers."""
    now_s = (now_ms if now_ms is not None else _now_ms()) / 1000
    try:
        with connection.cursor() as cursor:
            archive = wal_archive_status(cursor, now_s=now_s)
    except DatabaseError:
        return {"archive": None, "repository": backup_status_read()}
    repository = backup_status_read()
    verdicts = backup_verdicts(
        backups=repository,
        archive=archive,
        now_s=now_s,
        full_interval_s=float(settings.BACKUP_FULL_INTERVAL_H) * 3600,
        lag_objective_s=float(settings.BACKUP_ARCHIVE_LAG_OBJECTIVE_S),
    )
    return {"archive": archive, "repository": repository, **verdicts}


def metrics_snapshot(*, now_ms: int | None = None, record: bool = True) -> dict[str, Any]:
    """Every figure of the dashboard and ``/metrics`` at one moment."""
    now_ms = now_ms if now_ms is not None else _now_ms()
    memory = _redis().info("memory")
    return {
        "v": 1,
        "ts": now_ms,
        "queries": reducer_lag(now_ms=now_ms, record=record),
        "latency": latency(now_ms=now_ms),
        "websockets": websockets_by_worker(now_ms=now_ms),
        "dead_letters": _counters(COUNTER_DEAD_LETTERS),
        "dead_letters_again": _counters(COUNTER_DEAD_LETTERS_AGAIN),
        "websocket_closes": _counters(COUNTER_WEBSOCKET_CLOSES),
        "latency_objectives": latency_objectives(),
        "late_records": _counters(COUNTER_LATE_RECORDS),
        "redis_memory_bytes": int(memory.get("used_memory", 0)),
        "celery_queue_depth": celery_queue_depth(),
        "kafka": kafka_health(),
        "backups": backups_snapshot(now_ms=now_ms),
    }


def snapshot_series(snapshot: dict[str, Any]) -> dict[str, float]:
    """The snapshot flattened to named numbers, as kept in the history and drawn in the charts."""
    series: dict[str, float] = {}
    for query, q in snapshot.get("queries", {}).items():
        series[f"lag.{query}"] = float(q["lag"])
        series[f"lag_s.{query}"] = float(q["lag_seconds"])
        series[f"rate_in.{query}"] = round(float(q["input_rate"]), 2)
        series[f"rate_out.{query}"] = round(float(q["processed_rate"]), 2)
        series[f"batch_ms.{query}"] = float(q["batch_ms"])
        series[f"state_rows.{query}"] = float(q.get("state_rows", 0.0))
        series[f"status.{query}"] = float(burrow.SEVERITY[burrow.Status(q["worst"])])
        if q.get("objective_s") is not None:
            series[f"objective_s.{query}"] = float(q["objective_s"])
    for stage, figures in snapshot.get("latency", {}).items():
        for point in ("p50", "p90", "p99"):
            series[f"latency.{stage}.{point}"] = float(figures.get(point, 0.0))
    series["websockets"] = float(sum(snapshot.get("websockets", {}).values()))
    series["dead_letters"] = float(sum(snapshot.get("dead_letters", {}).values()))
    series["late_records"] = float(sum(snapshot.get("late_records", {}).values()))
    series["redis_memory_bytes"] = float(snapshot.get("redis_memory_bytes", 0))
    series["celery_queue_depth"] = float(snapshot.get("celery_queue_depth", 0))
    kafka = snapshot.get("kafka")
    if kafka is not None:
        series["kafka.brokers"] = float(kafka["brokers"])
        series["kafka.under_replicated"] = float(kafka["under_replicated"])
        series["kafka.offline"] = float(kafka["offline"])
    backups = snapshot.get("backups") or {}
    if backups.get("backup_age_s") is not None:
        series["backup_age_s"] = float(backups["backup_age_s"])
    if (backups.get("archive") or {}).get("lag_s") is not None:
        series["wal_lag_s"] = float(backups["archive"]["lag_s"])
    return series


def latency_watch_markets(*, count: int = 20) -> list[int]:
    """A few markets of the table for an operator's browser to watch and acknowledge."""
    return MarketStore(_redis()).sample_market_ids(count)
