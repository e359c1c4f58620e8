"""``/metrics``: the figures of the metrics snapshot and the cumulative latency histograms as
Prometheus metric families, built by a custom collector at each scrape and rendered by
prometheus_client in its text format. Units are seconds and bytes; counters end in ``_total``."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector

from odds.core.metrics import latency_histograms, metrics_snapshot
from reducers.dead_letters import source_of_reason
from reducers.latency import LatencyHistogram

STATUSES = ("OK", "WARN", "STALL", "STOP", "ERR")


@dataclasses.dataclass(frozen=True)
class Family:
    """A metric family's type, help text and label names."""

    kind: str
    help: str
    labels: tuple[str, ...] = ()


PARTITION = ("query", "group", "topic", "partition")
QUERY = ("query",)
LATENCY = "sportsbook_latency_seconds"

# Every metric is named here once, by the name it is exposed under (a histogram's samples add
# ``_bucket``, ``_sum`` and ``_count``).
METRICS: dict[str, Family] = {
    "sportsbook_reducer_lag_records": Family(
        "gauge", "Records between the committed offset and the log end, per partition.", PARTITION
    ),
    "sportsbook_reducer_lag_seconds": Family(
        "gauge", "How far behind in time the reducer is, per partition.", PARTITION
    ),
    "sportsbook_reducer_committed_offset": Family(
        "gauge", "Offset committed by the reducer's consumer group.", PARTITION
    ),
    "sportsbook_reducer_log_end_offset": Family(
        "gauge", "Log-end offset (high watermark) of the partition.", PARTITION
    ),
    "sportsbook_reducer_partition_status": Family(
        "gauge", "Burrow status of the partition (1 for the current status).", (*PARTITION, "status")
    ),
    "sportsbook_reducer_input_rows_per_second": Family("gauge", "Input rate of the query's latest batch.", QUERY),
    "sportsbook_reducer_processed_rows_per_second": Family(
        "gauge", "Processing rate of the query's latest batch.", QUERY
    ),
    "sportsbook_reducer_batch_duration_seconds": Family("gauge", "Duration of the query's latest trigger.", QUERY),
    "sportsbook_reducer_state_rows": Family("gauge", "Rows held in the query's state store.", QUERY),
    "sportsbook_reducer_lag_objective_seconds": Family(
        "gauge", "Seconds behind the query may fall (its objective).", QUERY
    ),
    "sportsbook_reducer_objective_breached": Family(
        "gauge", "1 while the query is further behind than its objective.", QUERY
    ),
    "sportsbook_reducer_last_seen_age_seconds": Family(
        "gauge", "Seconds since the query's last progress report or idle event.", QUERY
    ),
    "sportsbook_reducer_query_up": Family(
        "gauge", "1 while the reducer query runs, 0 while it waits to be restarted.", QUERY
    ),
    "sportsbook_reducer_query_restarts_total": Family(
        "counter", "Times the reducer query was restarted after it failed.", QUERY
    ),
    LATENCY: Family(
        "histogram",
        "Latency per stage: source (event to produce), kafka (produce to Kafka), reducer (Kafka to "
        "reducer), end_to_end (event to reducer), browser (event to an operator's browser), "
        "websocket (reducer to an operator's browser), placement (bet request to decided), frame "
        "(event to the frame a web process sends, sampled).",
        ("stage",),
    ),
    "sportsbook_websockets": Family("gauge", "Websockets connected, per ASGI worker.", ("worker",)),
    "sportsbook_latency_objective_seconds": Family(
        "gauge", "The 99th percentile a latency stage may reach (its objective).", ("stage",)
    ),
    "sportsbook_dead_letters_total": Family(
        "counter", "Records sent to a dead-letter topic, by source topic and reason.", ("source", "reason")
    ),
    "sportsbook_dead_letters_again_total": Family(
        "counter", "Replayed records that failed again and were dead-lettered again.", ("source", "reason")
    ),
    "sportsbook_websocket_closes_total": Family(
        "counter", "Websockets closed, by cause (the close code's name).", ("cause",)
    ),
    "sportsbook_late_records_total": Family("counter", "Records behind the watermark, by query.", QUERY),
    "sportsbook_redis_memory_bytes": Family("gauge", "Memory used by Redis."),
    "sportsbook_celery_queue_depth": Family("gauge", "Tasks waiting in the Celery queue."),
    "sportsbook_kafka_brokers": Family("gauge", "Kafka brokers the cluster reports."),
    "sportsbook_kafka_under_replicated_partitions": Family(
        "gauge", "Partitions of the platform's topics with fewer replicas in sync than assigned."
    ),
    "sportsbook_kafka_offline_partitions": Family("gauge", "Partitions of the platform's topics without a leader."),
    "sportsbook_backup_age_seconds": Family("gauge", "Seconds since the newest PostgreSQL backup finished."),
    "sportsbook_backups": Family("gauge", "PostgreSQL backups the repository keeps."),
    "sportsbook_backup_repository_bytes": Family("gauge", "Bytes the kept backups take in the repository."),
    "sportsbook_wal_archiving": Family("gauge", "1 while PostgreSQL archives its write-ahead log."),
    "sportsbook_wal_archive_lag_seconds": Family(
        "gauge", "How long the oldest finished WAL segment has waited to be archived (0 when none waits)."
    ),
    "sportsbook_wal_archive_waiting_segments": Family("gauge", "Finished WAL segments not yet archived."),
    "sportsbook_wal_archived_segments_total": Family("counter", "WAL segments archived since the statistics reset."),
    "sportsbook_wal_archive_failures_total": Family("counter", "Failed attempts to archive a WAL segment."),
}


def _samples(snapshot: dict[str, Any]) -> Iterable[tuple[str, dict[str, Any], float]]:
    for query, q in sorted(snapshot.get("queries", {}).items()):
        for p in q.get("partitions", []):
            labels = {"query": query, "group": q["group"], "topic": p["topic"], "partition": p["partition"]}
            yield "sportsbook_reducer_lag_records", labels, p["lag"]
            yield "sportsbook_reducer_lag_seconds", labels, p["lag_seconds"]
            yield "sportsbook_reducer_committed_offset", labels, p["committed"]
            yield "sportsbook_reducer_log_end_offset", labels, p["log_end"]
            for status in STATUSES:
                yield "sportsbook_reducer_partition_status", {**labels, "status": status}, int(p["status"] == status)
        labels = {"query": query}
        yield "sportsbook_reducer_input_rows_per_second", labels, q.get("input_rate", 0.0)
        yield "sportsbook_reducer_processed_rows_per_second", labels, q.get("processed_rate", 0.0)
        yield "sportsbook_reducer_batch_duration_seconds", labels, q.get("batch_ms", 0.0) / 1000
        yield "sportsbook_reducer_state_rows", labels, q.get("state_rows", 0.0)
        if q.get("objective_s") is not None:
            yield "sportsbook_reducer_lag_objective_seconds", labels, q["objective_s"]
            yield "sportsbook_reducer_objective_breached", labels, int(q.get("objective") == "breached")
        if q.get("seen_ms") is not None and snapshot.get("ts") is not None:
            yield "sportsbook_reducer_last_seen_age_seconds", labels, max(0, snapshot["ts"] - q["seen_ms"]) / 1000
        run = q.get("run")
        if run is not None:
            yield "sportsbook_reducer_query_up", labels, int(run["state"] == "running")
            yield "sportsbook_reducer_query_restarts_total", labels, run["restarts"]
    for worker, count in sorted(snapshot.get("websockets", {}).items()):
        yield "sportsbook_websockets", {"worker": worker}, count
    for stage, seconds in sorted(snapshot.get("latency_objectives", {}).items()):
        yield "sportsbook_latency_objective_seconds", {"stage": stage}, seconds
    for family, counted in (
        ("sportsbook_dead_letters_total", "dead_letters"),
        ("sportsbook_dead_letters_again_total", "dead_letters_again"),
    ):
        for reason, count in sorted(snapshot.get(counted, {}).items()):
            source, reason = source_of_reason(reason)
            yield family, {"source": source, "reason": reason}, count
    for cause, count in sorted(snapshot.get("websocket_closes", {}).items()):
        yield "sportsbook_websocket_closes_total", {"cause": cause}, count
    for query, count in sorted(snapshot.get("late_records", {}).items()):
        yield "sportsbook_late_records_total", {"query": query}, count
    yield "sportsbook_redis_memory_bytes", {}, snapshot.get("redis_memory_bytes", 0)
    yield "sportsbook_celery_queue_depth", {}, snapshot.get("celery_queue_depth", 0)
    kafka = snapshot.get("kafka")
    if kafka is not None:
        yield "sportsbook_kafka_brokers", {}, kafka["brokers"]
        yield "sportsbook_kafka_under_replicated_partitions", {}, kafka["under_replicated"]
        yield "sportsbook_kafka_offline_partitions", {}, kafka["offline"]
    backups = snapshot.get("backups") or {}
    if backups.get("backup_age_s") is not None:
        yield "sportsbook_backup_age_seconds", {}, backups["backup_age_s"]
    repository = backups.get("repository")
    if repository:
        yield "sportsbook_backups", {}, repository["backups"]
        yield "sportsbook_backup_repository_bytes", {}, repository["repository_bytes"]
    archive = backups.get("archive")
    if archive is not None:
        yield "sportsbook_wal_archiving", {}, int(archive["archiving"])
        if archive["lag_s"] is not None:
            yield "sportsbook_wal_archive_lag_seconds", {}, archive["lag_s"]
            yield "sportsbook_wal_archive_waiting_segments", {}, archive["waiting_segments"]
        yield "sportsbook_wal_archived_segments_total", {}, archive["archived"]
        yield "sportsbook_wal_archive_failures_total", {}, archive["failed"]


def metric_families(*, snapshot: dict[str, Any], histograms: Mapping[str, LatencyHistogram]) -> list[Metric]:
    """Every family of ``METRICS``, in its order, with the samples of the snapshot and one
    histogram per stage."""
    scalars: dict[str, GaugeMetricFamily | CounterMetricFamily] = {}
    for name, family in METRICS.items():
        if family.kind == "gauge":
            scalars[name] = GaugeMetricFamily(name, family.help, labels=family.labels)
        elif family.kind == "counter":
            scalars[name] = CounterMetricFamily(name, family.help, labels=family.labels)
    for name, labels, value in _samples(snapshot):
        scalars[name].add_metric([str(labels[label]) for label in METRICS[name].labels], float(value))
    latency = HistogramMetricFamily(LATENCY, METRICS[LATENCY].help, labels=METRICS[LATENCY].labels)
    for stage, histogram in sorted(histograms.items()):
        latency.add_metric([stage], buckets=histogram.buckets, sum_value=histogram.sum_s)
    return [latency if name == LATENCY else scalars[name] for name in METRICS]


class MetricsCollector(Collector):
    """A collector over the state ``read`` returns at each collection: the metrics snapshot and
    the latency histograms per stage."""

    def __init__(self, read: Callable[[], tuple[dict[str, Any], Mapping[str, LatencyHistogram]]]) -> None:
        self._read = read

    def collect(self) -> Iterator[Metric]:
        snapshot, histograms = self._read()
        yield from metric_families(snapshot=snapshot, histograms=histograms)


def render(*, snapshot: dict[str, Any], histograms: Mapping[str, LatencyHistogram] | None = None) -> bytes:
    """The text exposition of a given snapshot and histograms."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(MetricsCollector(lambda: (snapshot, histograms or {})))
    return generate_latest(registry)


def _live() -> tuple[dict[str, Any], Mapping[str, LatencyHistogram]]:
    return metrics_snapshot(), latency_histograms()


REGISTRY = CollectorRegistry(auto_describe=False)
REGISTRY.register(MetricsCollector(_live))


def metrics_exposition() -> bytes:
    """What a scrape of ``/metrics`` answers: the platform's figures read now."""
    return generate_latest(REGISTRY)
