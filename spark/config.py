"""The reducers' configuration: one object per process, read from the environment once.

Every setting of the Spark jobs is named here with its type, its development default and its
check; nothing else in ``spark/`` reads the environment. ``load`` reads and checks them all and
raises ``ConfigError`` naming every problem at once, before a Spark session starts. With
``SPORTSBOOK_ENV=production`` the settings that locate shared state (Kafka, Redis, the
checkpoints) have no default: a reducer that would quietly use a development address refuses to
start instead.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

import pyspark

from reducers.config import ConfigError, Reader
from reducers.queries import QUERIES
from reducers.windows import parse_duration_ms

ROOT = Path(__file__).resolve().parents[1]
TriggerMode = Literal["microbatch", "realtime"]
TRIGGER_MODES: tuple[TriggerMode, ...] = ("microbatch", "realtime")
# How a micro-batch above SPARK_SQL_PATH_MIN_RECORDS is validated and conflated: by the reducer's
# own validator in Python workers, one task per Kafka partition ("executors"), or by Spark SQL
# expressions with Python re-checking the winners and the refused ("sql").
LARGE_BATCH_PATHS = ("executors", "sql")
# The garbage collector of the Spark JVMs (``SPARK_GC``) and the JVM option that picks it.
# Parallel by default: the price query's parse, SQL verdict and aggregation of 200,000 records
# took 3,110-3,580 ms of CPU under it against 3,790-4,390 ms under G1, the JVM's own default
# (bench/results/history.md, "The Spark JVM's garbage collector").
GC_OPTIONS = {"parallel": "-XX:+UseParallelGC", "g1": "-XX:+UseG1GC"}


@dataclasses.dataclass(frozen=True, kw_only=True)
class ReducerConfig:
    """Every setting of the reducer application, typed and checked."""

    environment: str
    # where the shared state is
    kafka_bootstrap: str
    redis_url: str
    # replicas that must hold a batch's writes before it counts as done (0: none waited for)
    redis_replicas: int
    redis_replica_timeout_ms: int
    checkpoint_dir: Path
    # the Spark session
    master: str
    # FAIR: each query's jobs in a pool of its own (spark/jobs/reducers.py, POOLS); FIFO: Spark's default
    scheduler_mode: str
    driver_host: str
    driver_bind_address: str
    driver_memory: str
    # the JVMs' garbage collector (GC_OPTIONS)
    gc: str
    shuffle_partitions: int
    ui_enabled: bool
    ui_port: int
    # host:port of the driver's own /metrics (spark/metrics.py); empty: none
    driver_metrics: str
    log_level: str
    limit_initial_partitions: int
    kafka_jars_dir: Path
    python: str
    # how long the JVM waits for a Python worker it started to connect back
    python_socket_timeout: str
    # the Kafka source
    kafka_fetch_max_wait_ms: int
    kafka_partition_fetch_bytes: int
    kafka_request_timeout_ms: int
    # how long a query that found no new records waits before it asks Kafka again
    polling_delay_ms: int
    # the price query
    trigger_mode: TriggerMode
    max_offsets_per_trigger: int
    sql_path_min_records: int
    large_batch_path: str
    range_read: bool
    unknown_market_keep_s: int
    async_progress: bool
    async_progress_interval_ms: int
    realtime_batch: str
    # real-time mode: the niceness of the reducers' JVM (0 keeps its priority; see spark.session)
    realtime_jvm_niceness: int
    # both modes: the niceness of the reducers' session's scheduling group when they lead a
    # session of their own (0 keeps it; see spark.session.lower_session_priority)
    session_niceness: int
    # each reducer query's processing-time trigger, by name (reducers.queries: its variable and default)
    triggers: dict[str, str]
    movers_tasks: int
    # the game reducer's buckets of punters (each a key of its state: the book and its punters)
    game_buckets: int
    # records a movers batch reads at most: under a backlog the query falls behind the prices
    # and catches up when the feed slows
    movers_max_records: int
    movers_window: str
    movers_watermark: str
    query_refresh_s: float
    # supervision of failed queries
    restart_base_s: float
    restart_max_s: float
    stable_s: float

    @property
    def production(self) -> bool:
        return self.environment == "production"

    @property
    def movers_watermark_ms(self) -> int:
        return parse_duration_ms(self.movers_watermark)

    @property
    def movers_window_ms(self) -> int:
        return parse_duration_ms(self.movers_window)


def _trigger_mode(raw: str) -> TriggerMode:
    """The checked text of ``SPARK_TRIGGER_MODE`` as its type."""
    for mode in TRIGGER_MODES:
        if raw == mode:
            return mode
    raise ConfigError(f"SPARK_TRIGGER_MODE must be one of {', '.join(TRIGGER_MODES)}, got {raw!r}")


def load(environ: Mapping[str, str] | None = None) -> ReducerConfig:
    """The configuration in ``environ`` (the process's environment by default), checked."""
    read = Reader(os.environ if environ is None else environ)
    config = ReducerConfig(
        environment=read.environment,
        kafka_bootstrap=read.text("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9092", production_default=False),
        redis_url=read.redis_url("REDIS_URL", "redis://127.0.0.1:6379/0"),
        redis_replicas=read.whole("REDIS_REPLICAS_ACK", 0),
        redis_replica_timeout_ms=read.whole("REDIS_REPLICA_TIMEOUT_MS", 2000, minimum=1),
        checkpoint_dir=Path(
            read.text("SPARK_CHECKPOINT_DIR", str(ROOT / "var" / "checkpoints"), production_default=False)
        ),
        master=read.text("SPARK_MASTER", "local[4]"),
        scheduler_mode=read.choice("SPARK_SCHEDULER_MODE", "FAIR", ("FAIR", "FIFO")),
        driver_host=read.text("SPARK_DRIVER_HOST", "127.0.0.1"),
        # Where the driver listens; executors on other machines need an address they reach.
        driver_bind_address=read.text("SPARK_DRIVER_BIND_ADDRESS", "127.0.0.1"),
        driver_memory=read.text("SPARK_DRIVER_MEMORY", "1g"),
        gc=read.choice("SPARK_GC", "parallel", tuple(GC_OPTIONS)),
        shuffle_partitions=read.whole("SPARK_SHUFFLE_PARTITIONS", 4, minimum=1),
        ui_enabled=read.flag("SPARK_UI_ENABLED", False),
        ui_port=read.whole("SPARK_UI_PORT", 4040, minimum=1),
        driver_metrics=read.text("SPARK_DRIVER_METRICS", "127.0.0.1:9465"),
        log_level=read.choice("SPARK_LOG_LEVEL", "WARN", ("ALL", "DEBUG", "INFO", "WARN", "ERROR", "FATAL", "OFF")),
        limit_initial_partitions=read.whole("SPARK_LIMIT_INITIAL_PARTITIONS", 1024, minimum=1),
        kafka_jars_dir=Path(read.text("SPARK_KAFKA_JARS_DIR", str(ROOT / ".cache" / "jars" / "spark-kafka"))),
        python=read.text("PYSPARK_PYTHON", str(ROOT / "infra" / "bin" / "spark-python")),
        python_socket_timeout=read.text("SPARK_PYTHON_SOCKET_TIMEOUT", "120s"),
        kafka_fetch_max_wait_ms=read.whole("SPARK_KAFKA_FETCH_MAX_WAIT_MS", 10),
        kafka_partition_fetch_bytes=read.whole("SPARK_KAFKA_PARTITION_FETCH_BYTES", 4 << 20, minimum=1),
        kafka_request_timeout_ms=read.whole("SPARK_KAFKA_REQUEST_TIMEOUT_MS", 10_000, minimum=1000),
        polling_delay_ms=read.whole("SPARK_POLLING_DELAY_MS", 50, minimum=1),
        trigger_mode=_trigger_mode(read.choice("SPARK_TRIGGER_MODE", "microbatch", TRIGGER_MODES)),
        max_offsets_per_trigger=read.whole("SPARK_MAX_OFFSETS_PER_TRIGGER", 200_000, minimum=1),
        sql_path_min_records=read.whole("SPARK_SQL_PATH_MIN_RECORDS", 20_000),
        large_batch_path=read.choice("SPARK_LARGE_BATCH_PATH", "sql", LARGE_BATCH_PATHS),
        range_read=read.flag("SPARK_RANGE_READ", True),
        unknown_market_keep_s=read.whole("SPARK_UNKNOWN_MARKET_KEEP_S", 600, minimum=1),
        async_progress=read.flag("SPARK_ASYNC_PROGRESS", True),
        async_progress_interval_ms=read.whole("SPARK_ASYNC_PROGRESS_INTERVAL_MS", 1000),
        realtime_batch=read.duration("SPARK_REALTIME_BATCH", "5 minutes"),
        realtime_jvm_niceness=read.whole("SPARK_REALTIME_JVM_NICENESS", 10),
        session_niceness=read.whole("SPARK_SESSION_NICENESS", 10),
        triggers={query.name: read.duration(query.trigger_env, query.trigger) for query in QUERIES},
        movers_tasks=read.whole("SPARK_MOVERS_TASKS", 1, minimum=1),
        game_buckets=read.whole("SPARK_GAME_BUCKETS", 64, minimum=1),
        movers_max_records=read.whole("SPARK_MOVERS_MAX_RECORDS", 20_000, minimum=1),
        movers_window=read.duration("MOVERS_WINDOW", "1 minute"),
        movers_watermark=read.duration("MOVERS_WATERMARK", "30 seconds"),
        query_refresh_s=read.seconds("QUERY_REFRESH_SECONDS", 10),
        restart_base_s=read.seconds("SPARK_QUERY_RESTART_BASE_S", 1),
        restart_max_s=read.seconds("SPARK_QUERY_RESTART_MAX_S", 60),
        stable_s=read.seconds("SPARK_QUERY_STABLE_S", 60),
    )
    read.check("the reducers' configuration")
    return config


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
