"""The reducers' configuration (spark/config.py): one checked object, failing fast."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

from spark.config import ConfigError, load
from tests.reducers_process import run_reducers

ROOT = Path(__file__).resolve().parents[2]


def test_development_defaults_need_no_environment():
    config = load({})
    assert config.environment == "development"
    assert config.kafka_bootstrap == "127.0.0.1:9092"
    assert config.trigger_mode == "microbatch"
    assert config.movers_watermark_ms == 30_000
    assert config.movers_max_records == 20_000
    assert config.async_progress is True
    assert config.gc == "parallel"


def test_settings_are_typed_from_the_environment():
    config = load(
        {
            "SPARK_TRIGGER_MODE": "realtime",
            "SPARK_MAX_OFFSETS_PER_TRIGGER": "5000",
            "SPARK_ASYNC_PROGRESS": "off",
            "QUERY_REFRESH_SECONDS": "2.5",
            "SPARK_MARKETS_TRIGGER": "250 milliseconds",
            "REDIS_URL": "redis+sentinel://127.0.0.1:26379,127.0.0.1:26380/book",
            "REDIS_REPLICAS_ACK": "1",
            "SPARK_MOVERS_MAX_RECORDS": "5000",
            "SPARK_GC": "g1",
        }
    )
    assert config.gc == "g1"
    assert config.movers_max_records == 5000
    assert config.redis_url == "redis+sentinel://127.0.0.1:26379,127.0.0.1:26380/book"
    assert config.redis_replicas == 1
    assert config.redis_replica_timeout_ms == 2000
    assert config.trigger_mode == "realtime"
    assert config.max_offsets_per_trigger == 5000
    assert config.async_progress is False
    assert config.query_refresh_s == 2.5
    assert config.triggers["markets"] == "250 milliseconds"


def test_every_malformed_setting_is_named_at_once():
    with pytest.raises(ConfigError) as caught:
        load(
            {
                "SPARK_TRIGGER_MODE": "continuous",
                "SPARK_MAX_OFFSETS_PER_TRIGGER": "lots",
                "SPARK_MOVERS_TASKS": "0",
                "SPARK_ASYNC_PROGRESS": "maybe",
                "MOVERS_WATERMARK": "soon",
                "SPARK_QUERY_RESTART_BASE_S": "-1",
                "REDIS_URL": "redis+sentinel://127.0.0.1:26379",
                "REDIS_REPLICAS_ACK": "one",
                "SPARK_GC": "zgc",
            }
        )
    message = str(caught.value)
    for name in (
        "SPARK_TRIGGER_MODE",
        "SPARK_MAX_OFFSETS_PER_TRIGGER",
        "SPARK_MOVERS_TASKS",
        "SPARK_ASYNC_PROGRESS",
        "MOVERS_WATERMARK",
        "SPARK_QUERY_RESTART_BASE_S",
        "REDIS_URL",
        "REDIS_REPLICAS_ACK",
        "SPARK_GC",
    ):
        assert name in message


def test_production_has_no_default_for_where_the_shared_state_is():
    with pytest.raises(ConfigError) as caught:
        load({"SPORTSBOOK_ENV": "production"})
    for name in ("KAFKA_BOOTSTRAP_SERVERS", "REDIS_URL", "SPARK_CHECKPOINT_DIR"):
        assert f"{name} must be set when SPORTSBOOK_ENV=production" in str(caught.value)
    config = load(
        {
            "SPORTSBOOK_ENV": "production",
            "KAFKA_BOOTSTRAP_SERVERS": "kafka-1:9092,kafka-2:9092",
            "REDIS_URL": "redis://redis:6379/0",
            "SPARK_CHECKPOINT_DIR": "/shared/checkpoints",
        }
    )
    assert config.production
    assert config.checkpoint_dir == Path("/shared/checkpoints")


def test_nothing_else_in_spark_reads_the_environment():
    """Each setting has one reader: spark/config.py."""
    readers = []
    for path in sorted((ROOT / "spark").rglob("*.py")):
        if path.name == "config.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv"):
                readers.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert readers == []


def test_the_reducers_refuse_to_start_in_production_without_their_addresses():
    environ = {
        k: v
        for k, v in os.environ.items()
        if k not in ("KAFKA_BOOTSTRAP_SERVERS", "REDIS_URL", "SPARK_CHECKPOINT_DIR", "SPARK_MOVERS_TASKS")
    }
    environ.update({"SPORTSBOOK_ENV": "production", "SPARK_MOVERS_TASKS": "none"})
    result = run_reducers(environ)
    assert result.returncode == 2
    for name in ("KAFKA_BOOTSTRAP_SERVERS", "REDIS_URL", "SPARK_CHECKPOINT_DIR", "SPARK_MOVERS_TASKS"):
        assert name in result.stderr


def test_defaults_are_the_documented_ones():
    config = load({})
    assert config.redis_url == "redis://127.0.0.1:6379/0"
    assert config.redis_replicas == 0
    assert config.redis_replica_timeout_ms == 2000
    assert config.checkpoint_dir == ROOT / "var" / "checkpoints"
    assert config.kafka_jars_dir == ROOT / ".cache" / "jars" / "spark-kafka"
    assert config.master == "local[4]"
    assert config.scheduler_mode == "FAIR"
    assert config.kafka_partition_fetch_bytes == 4 << 20
    assert config.kafka_request_timeout_ms == 10_000
    assert config.max_offsets_per_trigger == 200_000
    assert config.large_batch_path == "sql"
    assert config.ui_enabled is False
    assert config.range_read is True
    assert config.realtime_batch == "5 minutes"
    assert config.movers_window_ms == 60_000
    assert config.query_refresh_s == 10.0
    assert config.restart_max_s == 60.0
    assert config.triggers == {
        "prices": "0 seconds",
        "commands": "0 seconds",
        "matches": "500 milliseconds",
        "markets": "1 second",
        "liability": "100 milliseconds",
        "movers": "10 seconds",
        "game": "0 seconds",
    }


def test_each_query_trigger_is_read_from_its_own_variable_and_named_by_it():
    from reducers.queries import QUERIES

    for query in QUERIES:
        assert load({query.trigger_env: "3 seconds"}).triggers[query.name] == "3 seconds"
        with pytest.raises(ConfigError) as caught:
            load({query.trigger_env: "soon"})
        assert f'{query.trigger_env} must be a duration such as "500 milliseconds" or "1 minute", got \'soon\'' in str(
            caught.value
        )


@pytest.mark.parametrize(
    ("name", "value", "problem"),
    [
        ("SPARK_SHUFFLE_PARTITIONS", "0", "SPARK_SHUFFLE_PARTITIONS must be a whole number of at least 1, got '0'"),
        (
            "SPARK_KAFKA_REQUEST_TIMEOUT_MS",
            "999",
            "SPARK_KAFKA_REQUEST_TIMEOUT_MS must be a whole number of at least 1000, got '999'",
        ),
        ("REDIS_REPLICAS_ACK", "-1", "REDIS_REPLICAS_ACK must be a whole number of at least 0, got '-1'"),
        ("SPARK_UI_PORT", "80.5", "SPARK_UI_PORT must be a whole number of at least 1, got '80.5'"),
        ("SPARK_SCHEDULER_MODE", "fair", "SPARK_SCHEDULER_MODE must be one of FAIR, FIFO, got 'fair'"),
        (
            "SPARK_LARGE_BATCH_PATH",
            "driver",
            "SPARK_LARGE_BATCH_PATH must be one of executors, sql, got 'driver'",
        ),
        (
            "SPARK_REALTIME_BATCH",
            "5 fortnights",
            'SPARK_REALTIME_BATCH must be a duration such as "500 milliseconds" or "1 minute", got \'5 fortnights\'',
        ),
        ("SPARK_RANGE_READ", "t", "SPARK_RANGE_READ must be true or false, got 't'"),
        ("SPARK_QUERY_STABLE_S", "nan", "SPARK_QUERY_STABLE_S must be a number of seconds, 0 or more, got 'nan'"),
    ],
)
def test_a_malformed_setting_is_named_with_what_it_must_be(name, value, problem):
    with pytest.raises(ConfigError) as caught:
        load({name: value})
    assert str(caught.value) == f"the reducers' configuration is not usable:\n  {problem}"


def test_the_boundary_value_is_taken():
    config = load({"SPARK_KAFKA_REQUEST_TIMEOUT_MS": "1000", "REDIS_REPLICAS_ACK": "0", "SPARK_QUERY_STABLE_S": "0"})
    assert (config.kafka_request_timeout_ms, config.redis_replicas, config.stable_s) == (1000, 0, 0.0)


def test_production_names_a_missing_setting_and_a_malformed_one_together():
    with pytest.raises(ConfigError) as caught:
        load(
            {
                "SPORTSBOOK_ENV": "production",
                "KAFKA_BOOTSTRAP_SERVERS": "kafka-1:9092",
                "SPARK_CHECKPOINT_DIR": "/shared/checkpoints",
                "SPARK_GAME_BUCKETS": "many",
            }
        )
    assert str(caught.value).splitlines() == [
        "the reducers' configuration is not usable:",
        "  REDIS_URL must be set when SPORTSBOOK_ENV=production",
        "  SPARK_GAME_BUCKETS must be a whole number of at least 1, got 'many'",
    ]


def test_an_empty_variable_counts_as_unset_and_the_config_is_frozen():
    config = load({"SPARK_MASTER": "", "SPARK_UI_PORT": ""})
    assert (config.master, config.ui_port) == ("local[4]", 4040)
    with pytest.raises(ConfigError, match="SPARK_CHECKPOINT_DIR must be set when SPORTSBOOK_ENV=production"):
        load({"SPORTSBOOK_ENV": "production", "SPARK_CHECKPOINT_DIR": ""})
    with pytest.raises(ValueError, match="frozen"):
        config.master = "local[1]"


def test_the_process_environment_is_read_when_none_is_given(monkeypatch):
    monkeypatch.setenv("SPARK_GAME_BUCKETS", "7")
    monkeypatch.setenv("SPARK_MOVERS_TRIGGER", "4 seconds")
    config = load()
    assert (config.game_buckets, config.triggers["movers"]) == (7, "4 seconds")
