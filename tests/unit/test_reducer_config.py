"""The reducers' configuration (spark/config.py): one checked object, failing fast."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from spark.config import ConfigError, load

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
    result = subprocess.run(
        [sys.executable, "-m", "spark.jobs.reducers"],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    for name in ("KAFKA_BOOTSTRAP_SERVERS", "REDIS_URL", "SPARK_CHECKPOINT_DIR", "SPARK_MOVERS_TASKS"):
        assert name in result.stderr
