"""Prometheus rendering of a metrics snapshot, and the pure helpers of the metrics service."""

from __future__ import annotations

from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from odds.core.metrics import percentiles, snapshot_series, stage_latencies
from odds.core.metrics_prometheus import METRICS, render
from reducers.latency import histogram_increments, histogram_read

SNAPSHOT: dict[str, Any] = {
    "v": 1,
    "ts": 1_000_000,
    "queries": {
        "prices": {
            "group": "sb.reducer.prices",
            "status": "WARN",
            "worst": "WARN",
            "lag": 7,
            "lag_seconds": 1.5,
            "input_rate": 120.5,
            "processed_rate": 118.25,
            "batch_ms": 210.0,
            "state_rows": 0.0,
            "objective_s": 1.0,
            "objective": "breached",
            "seen_ms": 997_500,
            "stale": False,
            "partitions": [
                {
                    "topic": "sb.prices.v1",
                    "partition": 0,
                    "committed": 10,
                    "log_end": 17,
                    "lag": 7,
                    "lag_seconds": 1.5,
                    "status": "WARN",
                    "reason": "lag grew",
                },
                {
                    "topic": "sb.prices.v1",
                    "partition": 1,
                    "committed": 5,
                    "log_end": 5,
                    "lag": 0,
                    "lag_seconds": 0.0,
                    "status": "OK",
                    "reason": "caught up",
                },
            ],
        }
    },
    "latency": {"end_to_end": {"n": 3.0, "p50": 12.0, "p90": 30.0, "p99": 31.0}},
    "websockets": {"host:1": 4, "host:2": 3},
    "dead_letters": {"bad_json": 2, "command_undecodable": 5},
    "dead_letters_again": {"command_undecodable": 1},
    "websocket_closes": {"going_away": 40, "too_many_connections": 3},
    "latency_objectives": {"placement": 0.25, "frame": 1.0},
    "late_records": {"movers": 9},
    "redis_memory_bytes": 1048576,
    "celery_queue_depth": 3,
    "kafka": {
        "brokers": 2,
        "replication_factor": 3,
        "partitions": 22,
        "under_replicated": 22,
        "offline": 0,
        "leaders": {"1": 11, "3": 11},
    },
}
# The same end-to-end latencies as the snapshot's percentiles, as a histogram in seconds.
HISTOGRAMS = {"end_to_end": histogram_read({k: str(v) for k, v in histogram_increments([0.012, 0.030, 0.031]).items()})}
PARTITION_0 = {"query": "prices", "group": "sb.reducer.prices", "topic": "sb.prices.v1", "partition": "0"}


def text(snapshot: dict[str, Any] = SNAPSHOT) -> str:
    return render(snapshot=snapshot, histograms=HISTOGRAMS).decode()


def exposed(snapshot: dict[str, Any] = SNAPSHOT) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Every sample of the exposition by name and labels, as Prometheus parses it."""
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text(snapshot))
        for sample in family.samples
    }


def value_in(snapshot: dict[str, Any], name: str, **labels: str) -> float:
    """The sample ``name`` with exactly ``labels`` in the exposition of ``snapshot``."""
    return exposed(snapshot)[(name, frozenset(labels.items()))]


def value(name: str, **labels: str) -> float:
    return value_in(SNAPSHOT, name, **labels)


def test_lag_per_partition_is_rendered_with_query_group_topic_and_partition():
    assert value("sportsbook_reducer_lag_records", **PARTITION_0) == 7
    assert value("sportsbook_reducer_lag_seconds", **PARTITION_0) == 1.5


def test_the_objective_its_breach_and_the_age_of_the_last_sign_of_life_are_rendered_per_query():
    assert value("sportsbook_reducer_lag_objective_seconds", query="prices") == 1
    assert value("sportsbook_reducer_objective_breached", query="prices") == 1
    assert value("sportsbook_reducer_last_seen_age_seconds", query="prices") == 2.5
    met = {**SNAPSHOT, "queries": {"prices": {**SNAPSHOT["queries"]["prices"], "objective": "met"}}}
    assert value_in(met, "sportsbook_reducer_objective_breached", query="prices") == 0


def test_status_is_one_hot_over_the_burrow_statuses():
    assert value("sportsbook_reducer_partition_status", **PARTITION_0, status="WARN") == 1
    assert value("sportsbook_reducer_partition_status", **PARTITION_0, status="OK") == 0
    assert value("sportsbook_reducer_partition_status", **{**PARTITION_0, "partition": "1"}, status="OK") == 1


def test_every_metric_has_help_and_type_once():
    rendered = text()
    for name, family in METRICS.items():
        assert rendered.count(f"# TYPE {name} {family.kind}\n") == 1
        assert rendered.count(f"# HELP {name} ") == 1


def test_rates_batch_duration_and_service_figures():
    assert value("sportsbook_reducer_input_rows_per_second", query="prices") == 120.5
    assert value("sportsbook_reducer_batch_duration_seconds", query="prices") == 0.21
    assert value("sportsbook_websockets", worker="host:1") == 4
    assert value("sportsbook_dead_letters_total", source="prices", reason="bad_json") == 2
    assert value("sportsbook_late_records_total", query="movers") == 9
    assert value("sportsbook_redis_memory_bytes") == 1048576
    assert value("sportsbook_celery_queue_depth") == 3
    assert value("sportsbook_kafka_brokers") == 2
    assert value("sportsbook_kafka_under_replicated_partitions") == 22
    assert value("sportsbook_kafka_offline_partitions") == 0


def test_latency_is_a_histogram_in_seconds_with_cumulative_buckets_sum_and_count():
    assert value("sportsbook_latency_seconds_bucket", stage="end_to_end", le="0.01") == 0
    assert value("sportsbook_latency_seconds_bucket", stage="end_to_end", le="0.025") == 1
    assert value("sportsbook_latency_seconds_bucket", stage="end_to_end", le="0.05") == 3
    assert value("sportsbook_latency_seconds_bucket", stage="end_to_end", le="+Inf") == 3
    assert value("sportsbook_latency_seconds_count", stage="end_to_end") == 3
    assert value("sportsbook_latency_seconds_sum", stage="end_to_end") == 0.073


def test_label_values_are_escaped():
    rendered = render(snapshot={"websockets": {'a"b\\c\nd': 1}}).decode()
    assert 'sportsbook_websockets{worker="a\\"b\\\\c\\nd"} 1.0' in rendered
    assert value_in({"websockets": {'a"b\\c\nd': 1}}, "sportsbook_websockets", worker='a"b\\c\nd') == 1


def test_every_sample_line_parses_as_name_labels_value():
    for line in text().splitlines():
        if line.startswith("#"):
            continue
        name_and_labels, number = line.rsplit(" ", 1)
        float(number)
        name = name_and_labels.split("{")[0]
        assert name in METRICS or name.removesuffix("_bucket").removesuffix("_sum").removesuffix("_count") in METRICS


def test_empty_snapshot_renders_only_the_service_gauges():
    samples = [line for line in render(snapshot={}).decode().splitlines() if not line.startswith("#")]
    assert samples == ["sportsbook_redis_memory_bytes 0.0", "sportsbook_celery_queue_depth 0.0"]


def test_percentiles_use_nearest_rank():
    result = percentiles([float(x) for x in range(1, 101)])
    assert (result["p50"], result["p90"], result["p99"], result["n"]) == (50.0, 90.0, 99.0, 100.0)
    assert percentiles([])["p99"] == 0.0


def test_stage_latencies_skip_old_and_incomplete_frames():
    now = 1_000_000
    frames: list[dict[str, Any]] = [
        {"ts": {"event": now - 50, "produce": now - 45, "kafka": now - 40, "reducer": now - 10}},
        {"ts": {"event": now - 900_000, "produce": 1, "kafka": 1, "reducer": now - 800_000}},
        {"ts": {"event": now}},
        {"no": "ts"},
    ]
    stages = stage_latencies(frames, now_ms=now)
    assert stages == {"source": [5], "kafka": [5], "reducer": [30], "end_to_end": [40]}


def test_snapshot_series_flattens_per_query_figures():
    series = snapshot_series(SNAPSHOT)
    assert series["lag.prices"] == 7.0
    assert series["status.prices"] == 1.0
    assert series["websockets"] == 7.0
    assert series["latency.end_to_end.p99"] == 31.0
    assert (series["kafka.brokers"], series["kafka.under_replicated"], series["kafka.offline"]) == (2.0, 22.0, 0.0)


def test_dead_letters_are_counted_by_source_topic_and_reason_and_again_after_a_replay():
    assert value("sportsbook_dead_letters_total", source="commands", reason="command_undecodable") == 5
    assert value("sportsbook_dead_letters_again_total", source="commands", reason="command_undecodable") == 1


def test_websocket_closes_are_counted_by_cause():
    assert value("sportsbook_websocket_closes_total", cause="too_many_connections") == 3
    assert value("sportsbook_websocket_closes_total", cause="going_away") == 40


def test_each_latency_objective_is_exposed_for_the_alerts_to_compare_against():
    assert value("sportsbook_latency_objective_seconds", stage="placement") == 0.25
    assert value("sportsbook_latency_objective_seconds", stage="frame") == 1.0
