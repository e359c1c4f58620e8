"""The metrics snapshot in Prometheus' text exposition format (version 0.0.4). Pure."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
STATUSES = ("OK", "WARN", "STALL", "STOP", "ERR")

# name → (type, help): every metric is named here once.
METRICS: dict[str, tuple[str, str]] = {
    "sportsbook_reducer_lag_records": ("gauge", "Records between the committed offset and the log end, per partition."),
    "sportsbook_reducer_lag_seconds": ("gauge", "How far behind in time the reducer is, per partition."),
    "sportsbook_reducer_committed_offset": ("gauge", "Offset committed by the reducer's consumer group."),
    "sportsbook_reducer_log_end_offset": ("gauge", "Log-end offset (high watermark) of the partition."),
    "sportsbook_reducer_partition_status": ("gauge", "Burrow status of the partition (1 for the current status)."),
    "sportsbook_reducer_input_rows_per_second": ("gauge", "Input rate of the query's latest batch."),
    "sportsbook_reducer_processed_rows_per_second": ("gauge", "Processing rate of the query's latest batch."),
    "sportsbook_reducer_batch_duration_seconds": ("gauge", "Duration of the query's latest trigger."),
    "sportsbook_reducer_state_rows": ("gauge", "Rows held in the query's state store."),
    "sportsbook_reducer_lag_objective_seconds": ("gauge", "Seconds behind the query may fall (its objective)."),
    "sportsbook_reducer_objective_breached": ("gauge", "1 while the query is further behind than its objective."),
    "sportsbook_reducer_last_seen_age_seconds": (
        "gauge",
        "Seconds since the query's last progress report or idle event.",
    ),
    "sportsbook_reducer_query_up": ("gauge", "1 while the reducer query runs, 0 while it waits to be restarted."),
    "sportsbook_reducer_query_restarts_total": ("counter", "Times the reducer query was restarted after it failed."),
    "sportsbook_latency_milliseconds": ("gauge", "Latency percentiles per stage over recent samples."),
    "sportsbook_websockets": ("gauge", "Websockets connected, per ASGI worker."),
    "sportsbook_dead_letters_total": ("counter", "Records sent to a dead-letter topic, by reason."),
    "sportsbook_late_records_total": ("counter", "Records behind the watermark, by query."),
    "sportsbook_redis_memory_bytes": ("gauge", "Memory used by Redis."),
    "sportsbook_celery_queue_depth": ("gauge", "Tasks waiting in the Celery queue."),
}


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _value(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if float(value).is_integer():
        return str(int(value))
    return repr(float(value))


def _line(name: str, labels: dict[str, Any], value: float) -> str:
    if labels:
        inner = ",".join(f'{k}="{_escape(str(v))}"' for k, v in labels.items())
        return f"{name}{{{inner}}} {_value(value)}"
    return f"{name} {_value(value)}"


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
    for stage, figures in sorted(snapshot.get("latency", {}).items()):
        for point in ("p50", "p90", "p99"):
            quantile = str(int(point[1:]) / 100)
            yield "sportsbook_latency_milliseconds", {"stage": stage, "quantile": quantile}, figures.get(point, 0.0)
    for worker, count in sorted(snapshot.get("websockets", {}).items()):
        yield "sportsbook_websockets", {"worker": worker}, count
    for reason, count in sorted(snapshot.get("dead_letters", {}).items()):
        yield "sportsbook_dead_letters_total", {"reason": reason}, count
    for query, count in sorted(snapshot.get("late_records", {}).items()):
        yield "sportsbook_late_records_total", {"query": query}, count
    yield "sportsbook_redis_memory_bytes", {}, snapshot.get("redis_memory_bytes", 0)
    yield "sportsbook_celery_queue_depth", {}, snapshot.get("celery_queue_depth", 0)


def render(snapshot: dict[str, Any]) -> str:
    """Every figure of the snapshot, grouped by metric with its HELP and TYPE lines."""
    grouped: dict[str, list[str]] = {name: [] for name in METRICS}
    for name, labels, value in _samples(snapshot):
        grouped[name].append(_line(name, labels, float(value)))
    out: list[str] = []
    for name, lines in grouped.items():
        kind, text = METRICS[name]
        out.append(f"# HELP {name} {text}")
        out.append(f"# TYPE {name} {kind}")
        out.extend(lines)
    return "\n".join(out) + "\n"
