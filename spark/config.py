"""The reducers' configuration: one object per process, read from the environment once.

Every setting of the Spark jobs is a field of ``ReducerConfig`` (a ``pydantic_settings`` model),
named by its environment variable, with its type, its development default and its check; nothing
else in ``spark/`` reads the environment. ``load`` reads and checks them all and raises
``ConfigError`` naming every problem at once, before a Spark session starts. With
``SPORTSBOOK_ENV=production`` the settings that locate shared state (Kafka, Redis, the
checkpoints) have no default: a reducer that would quietly use a development address refuses to
start instead.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

import pyspark
from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings

from reducers.config import (
    NO_PRODUCTION_DEFAULT,
    SETTINGS_CONFIG,
    ConfigError,
    Duration,
    EnvironmentSettings,
    Flag,
    RedisUrl,
    Seconds,
    read,
)
from reducers.queries import QUERIES
from reducers.windows import parse_duration_ms

__all__ = ["ConfigError", "ReducerConfig", "config", "export_python", "load"]

ROOT = Path(__file__).resolve().parents[1]
TriggerMode = Literal["microbatch", "realtime"]
TRIGGER_MODES: tuple[TriggerMode, ...] = get_args(TriggerMode)
# How a micro-batch above SPARK_SQL_PATH_MIN_RECORDS is validated and conflated: by the reducer's
# own validator in Python workers, one task per Kafka partition ("executors"), or by Spark SQL
# expressions with Python re-checking the winners and the refused ("sql").
LargeBatchPath = Literal["executors", "sql"]
LARGE_BATCH_PATHS: tuple[LargeBatchPath, ...] = get_args(LargeBatchPath)
# The garbage collector of the Spark JVMs (``SPARK_GC``) and the JVM option that picks it.
# Parallel by default: the price query's parse, SQL verdict and aggregation of 200,000 records
# took 3,110-3,580 ms of CPU under it against 3,790-4,390 ms under G1, the JVM's own default
# (bench/results/history.md, "The Spark JVM's garbage collector").
Collector = Literal["parallel", "g1"]
GC_OPTIONS: dict[Collector, str] = {"parallel": "-XX:+UseParallelGC", "g1": "-XX:+UseG1GC"}


class ReducerConfig(EnvironmentSettings, BaseSettings):
    """Every setting of the reducer application, typed and checked; each field is read from the
    environment variable its ``validation_alias`` names."""

    model_config = SETTINGS_CONFIG

    # where the shared state is
    kafka_bootstrap: Annotated[str, NO_PRODUCTION_DEFAULT] = Field(
        default="127.0.0.1:9092", validation_alias="KAFKA_BOOTSTRAP_SERVERS"
    )
    redis_url: RedisUrl = Field(default="redis://127.0.0.1:6379/0", validation_alias="REDIS_URL")
    # replicas that must hold a batch's writes before it counts as done (0: none waited for)
    redis_replicas: int = Field(default=0, ge=0, validation_alias="REDIS_REPLICAS_ACK")
    redis_replica_timeout_ms: int = Field(default=2000, ge=1, validation_alias="REDIS_REPLICA_TIMEOUT_MS")
    checkpoint_dir: Annotated[Path, NO_PRODUCTION_DEFAULT] = Field(
        default=ROOT / "var" / "checkpoints", validation_alias="SPARK_CHECKPOINT_DIR"
    )
    # the Spark session
    master: str = Field(default="local[4]", validation_alias="SPARK_MASTER")
    # FAIR: each query's jobs in a pool of its own (spark/jobs/reducers.py, POOLS); FIFO: Spark's default
    scheduler_mode: Literal["FAIR", "FIFO"] = Field(default="FAIR", validation_alias="SPARK_SCHEDULER_MODE")
    driver_host: str = Field(default="127.0.0.1", validation_alias="SPARK_DRIVER_HOST")
    # Where the driver listens; executors on other machines need an address they reach.
    driver_bind_address: str = Field(default="127.0.0.1", validation_alias="SPARK_DRIVER_BIND_ADDRESS")
    driver_memory: str = Field(default="1g", validation_alias="SPARK_DRIVER_MEMORY")
    # the JVMs' garbage collector (GC_OPTIONS)
    gc: Collector = Field(default="parallel", validation_alias="SPARK_GC")
    shuffle_partitions: int = Field(default=4, ge=1, validation_alias="SPARK_SHUFFLE_PARTITIONS")
    ui_enabled: Flag = Field(default=False, validation_alias="SPARK_UI_ENABLED")
    ui_port: int = Field(default=4040, ge=1, validation_alias="SPARK_UI_PORT")
    # host:port of the driver's own /metrics (spark/metrics.py); empty: none
    driver_metrics: str = Field(default="127.0.0.1:9465", validation_alias="SPARK_DRIVER_METRICS")
    log_level: Literal["ALL", "DEBUG", "INFO", "WARN", "ERROR", "FATAL", "OFF"] = Field(
        default="WARN", validation_alias="SPARK_LOG_LEVEL"
    )
    limit_initial_partitions: int = Field(default=1024, ge=1, validation_alias="SPARK_LIMIT_INITIAL_PARTITIONS")
    kafka_jars_dir: Path = Field(
        default=ROOT / ".cache" / "jars" / "spark-kafka", validation_alias="SPARK_KAFKA_JARS_DIR"
    )
    python: str = Field(default=str(ROOT / "infra" / "bin" / "spark-python"), validation_alias="PYSPARK_PYTHON")
    # how long the JVM waits for a Python worker it started to connect back
    python_socket_timeout: str = Field(default="120s", validation_alias="SPARK_PYTHON_SOCKET_TIMEOUT")
    # the Kafka source
    kafka_fetch_max_wait_ms: int = Field(default=10, ge=0, validation_alias="SPARK_KAFKA_FETCH_MAX_WAIT_MS")
    kafka_partition_fetch_bytes: int = Field(
        default=4 << 20, ge=1, validation_alias="SPARK_KAFKA_PARTITION_FETCH_BYTES"
    )
    kafka_request_timeout_ms: int = Field(default=10_000, ge=1000, validation_alias="SPARK_KAFKA_REQUEST_TIMEOUT_MS")
    # how long a query that found no new records waits before it asks Kafka again
    polling_delay_ms: int = Field(default=50, ge=1, validation_alias="SPARK_POLLING_DELAY_MS")
    # the price query
    trigger_mode: TriggerMode = Field(default="microbatch", validation_alias="SPARK_TRIGGER_MODE")
    max_offsets_per_trigger: int = Field(default=200_000, ge=1, validation_alias="SPARK_MAX_OFFSETS_PER_TRIGGER")
    sql_path_min_records: int = Field(default=20_000, ge=0, validation_alias="SPARK_SQL_PATH_MIN_RECORDS")
    large_batch_path: LargeBatchPath = Field(default="sql", validation_alias="SPARK_LARGE_BATCH_PATH")
    range_read: Flag = Field(default=True, validation_alias="SPARK_RANGE_READ")
    unknown_market_keep_s: int = Field(default=600, ge=1, validation_alias="SPARK_UNKNOWN_MARKET_KEEP_S")
    async_progress: Flag = Field(default=True, validation_alias="SPARK_ASYNC_PROGRESS")
    async_progress_interval_ms: int = Field(default=1000, ge=0, validation_alias="SPARK_ASYNC_PROGRESS_INTERVAL_MS")
    realtime_batch: Duration = Field(default="5 minutes", validation_alias="SPARK_REALTIME_BATCH")
    # real-time mode: the niceness of the reducers' JVM (0 keeps its priority; see spark.session)
    realtime_jvm_niceness: int = Field(default=10, ge=0, validation_alias="SPARK_REALTIME_JVM_NICENESS")
    # both modes: the niceness of the reducers' session's scheduling group when they lead a
    # session of their own (0 keeps it; see spark.session.lower_session_priority)
    session_niceness: int = Field(default=10, ge=0, validation_alias="SPARK_SESSION_NICENESS")
    # each reducer query's processing-time trigger, by name (reducers.queries: its variable and default)
    triggers: dict[str, Duration] = Field(default_factory=dict)
    movers_tasks: int = Field(default=1, ge=1, validation_alias="SPARK_MOVERS_TASKS")
    # the game reducer's buckets of punters (each a key of its state: the book and its punters)
    game_buckets: int = Field(default=64, ge=1, validation_alias="SPARK_GAME_BUCKETS")
    # records a movers batch reads at most: under a backlog the query falls behind the prices
    # and catches up when the feed slows
    movers_max_records: int = Field(default=20_000, ge=1, validation_alias="SPARK_MOVERS_MAX_RECORDS")
    movers_window: Duration = Field(default="1 minute", validation_alias="MOVERS_WINDOW")
    movers_watermark: Duration = Field(default="30 seconds", validation_alias="MOVERS_WATERMARK")
    query_refresh_s: Seconds = Field(default=10, validation_alias="QUERY_REFRESH_SECONDS")
    # supervision of failed queries
    restart_base_s: Seconds = Field(default=1, validation_alias="SPARK_QUERY_RESTART_BASE_S")
    restart_max_s: Seconds = Field(default=60, validation_alias="SPARK_QUERY_RESTART_MAX_S")
    stable_s: Seconds = Field(default=60, validation_alias="SPARK_QUERY_STABLE_S")

    @model_validator(mode="before")
    @classmethod
    def _triggers_by_variable(cls, data: Any) -> Any:
        """Each query's trigger from its own variable (``trigger_env``), or its default; checked
        under the variable's name."""
        if not isinstance(data, Mapping) or "triggers" in data:
            return data
        return {
            **data,
            "triggers": {query.trigger_env: data.get(query.trigger_env, query.trigger) for query in QUERIES},
        }

    @field_validator("triggers", mode="after")
    @classmethod
    def _triggers_by_query(cls, triggers: dict[str, str]) -> dict[str, str]:
        """Checked by variable, kept by query name (``config().triggers["movers"]``)."""
        if set(triggers) != {query.trigger_env for query in QUERIES}:
            return triggers
        return {query.name: triggers[query.trigger_env] for query in QUERIES}

    @property
    def movers_watermark_ms(self) -> int:
        return parse_duration_ms(self.movers_watermark)

    @property
    def movers_window_ms(self) -> int:
        return parse_duration_ms(self.movers_window)


def load(environ: Mapping[str, str] | None = None) -> ReducerConfig:
    """The configuration in ``environ`` (the process's environment by default), checked; every
    problem is named at once by one ``ConfigError``."""
    return read(ReducerConfig, os.environ if environ is None else environ, "the reducers' configuration")


def export_python(settings: ReducerConfig) -> None:
    """Name the interpreter of the Python workers (the project's virtual environment, through
    ``infra/bin/spark-python`` unless ``PYSPARK_PYTHON`` names another) where PySpark looks for
    it: the environment, inherited by the JVM and the workers it starts (the executors' Python
    workers of large micro-batches, the game query's stateful processor). The ``spark.pyspark.python`` session
    setting instead left a Python UDF's workers without their records (tried with Spark 4.3)."""
    os.environ["PYSPARK_PYTHON"] = settings.python
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    # For infra/bin/spark-python (the default): this interpreter, and the installed pyspark put
    # ahead of the pyspark.zip Spark puts first on a worker's path.
    os.environ["SPORTSBOOK_WORKER_PYTHON"] = sys.executable
    os.environ["SPORTSBOOK_WORKER_SITE"] = str(Path(pyspark.__file__).resolve().parents[1])


@functools.cache
def config() -> ReducerConfig:
    """This process's configuration, read once."""
    return load()
