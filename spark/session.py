"""SparkSession construction from the reducers' configuration (``spark.config``).

``SPARK_MASTER`` picks where the reducers run: ``local[N]`` by default, or a standalone
(``spark://host:7077``) or Kubernetes (``k8s://…``) master. The Kafka connector jars resolved
by Maven into ``.cache/jars/spark-kafka`` are passed with ``spark.jars``.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from pyspark.sql import SparkSession

from spark.config import GC_OPTIONS, config, export_python

ROOT = Path(__file__).resolve().parent.parent
# The highest niceness Linux has (the lowest priority).
MAX_NICENESS = 19


def connector_jars() -> list[str]:
    jar_dir = config().kafka_jars_dir
    jars = sorted(str(p) for p in jar_dir.glob("*.jar"))
    if not any("spark-sql-kafka" in j for j in jars):
        raise RuntimeError(f"Spark Kafka connector not found in {jar_dir}: run `make deps`")
    return jars


def build_session(app_name: str, *, master: str | None = None, extra: dict[str, str] | None = None) -> SparkSession:
    """A session tuned for small, latency-sensitive streaming batches."""
    logging.getLogger("py4j").setLevel(logging.WARNING)
    settings = config()
    export_python(settings)
    collector = GC_OPTIONS[settings.gc]
    conf = {
        "spark.jars": ",".join(connector_jars()),
        "spark.sql.shuffle.partitions": str(settings.shuffle_partitions),
        "spark.ui.enabled": str(settings.ui_enabled).lower(),
        "spark.ui.port": str(settings.ui_port),
        "spark.driver.bindAddress": settings.driver_bind_address,
        "spark.driver.host": settings.driver_host,
        "spark.driver.memory": settings.driver_memory,
        # Read when the JVM starts: PySpark starts the driver's JVM with this session's settings
        # (a process that runs in a JVM started before, under spark-submit, names its collector
        # there). The executors of a cluster start with theirs.
        "spark.driver.extraJavaOptions": collector,
        "spark.executor.extraJavaOptions": collector,
        "spark.sql.streaming.stateStore.providerClass": (
            "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
        ),
        # A stateful query's commit writes the changes of its batch, not a new snapshot of its
        # state (snapshots are taken in the background): the movers query's commit took about
        # 1.4 s of each batch with snapshots, 0.7 s with changelogs. Queries checkpointed
        # without it resume from their snapshots.
        "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true",
        "spark.sql.session.timeZone": "UTC",
        # How long a query that found nothing new waits before it asks Kafka again. Every ask is
        # an offset request through Kafka's admin client, and the queries triggered as fast as
        # they can (prices, commands) asked about 70 times a second each: a fifth of a core with
        # no records at all. A record arriving after a quiet spell waits at most this long; under
        # a steady feed a batch always finds records and never waits.
        "spark.sql.streaming.pollingDelay": f"{settings.polling_delay_ms}ms",
        # ``limit(n).collect()`` reads every partition in its first job (the default starts
        # with one and scales up, a job each): the price reducer's batch-size probe relies on it.
        "spark.sql.limit.initialNumPartitions": str(settings.limit_initial_partitions),
        # The price query's aggregation is hash-based over objects (``spark.jobs.prices.conflated``);
        # past this many markets in one task Spark falls back to sorting the rest of the task's
        # rows (the default, 128, is below the markets of one Kafka partition in a busy batch).
        "spark.sql.objectHashAggregate.sortBased.fallbackThreshold": "65536",
        "spark.python.worker.reuse": "true",
        # How long the JVM waits for a Python worker it started to connect back. The game query's
        # stateful processor (transformWithStateInPandas) starts a Python worker on the driver for
        # its schemas, which imports pandas and pyarrow first: on a loaded two-core machine that
        # took longer than the default 15 s, and the query failed to start.
        "spark.python.authenticate.socketTimeout": settings.python_socket_timeout,
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.ui.showConsoleProgress": "false",
        "spark.log.level": settings.log_level,
    }
    conf.update(extra or {})
    builder = SparkSession.builder.appName(app_name).master(master or settings.master)
    for key, value in conf.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


def jvm_pid(spark: SparkSession) -> int | None:
    """The process id of the session's JVM, when this process started it (local and client mode):
    the ``spark-submit`` process PySpark launched, which runs ``java`` in its place."""
    proc = getattr(spark.sparkContext._gateway, "proc", None)  # PySpark keeps it there
    return int(proc.pid) if proc is not None else None


def lower_priority(pid: int, niceness: int) -> int:
    """Give every thread of process ``pid`` at least this niceness (0 to 19, higher is a lower CPU
    priority); threads it starts later inherit it from the thread that starts them. Lowering a
    priority needs no privilege. Returns how many threads were changed (none where there is no
    ``/proc``, or the process is gone)."""
    niceness = max(0, min(MAX_NICENESS, niceness))
    changed = 0
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0
    for tid in (int(t) for t in threads):
        try:
            if os.getpriority(os.PRIO_PROCESS, tid) < niceness:
                os.setpriority(os.PRIO_PROCESS, tid, niceness)
                changed += 1
        except OSError:  # the thread ended meanwhile
            continue
    return changed


def autogroup_niceness(pid: int | str = "self", *, proc: Path = Path("/proc")) -> int | None:
    """The niceness of the scheduling group of ``pid``'s session, or ``None`` when the kernel
    does not share the CPU by session (autogroup scheduling off or absent)."""
    try:
        if (proc / "sys" / "kernel" / "sched_autogroup_enabled").read_text().strip() != "1":
            return None
        # "/autogroup-1234 nice 0"
        return int((proc / str(pid) / "autogroup").read_text().split()[-1])
    except (OSError, ValueError, IndexError):  # no autogroup in this kernel, or a format it lacks
        return None


def lower_session_priority(niceness: int, *, proc: Path = Path("/proc")) -> bool:
    """With the kernel's autogroup scheduling on, the CPU is first shared fairly between
    sessions, and a thread's niceness counts only against the threads of its own session. A
    process that leads a session of its own (a harness or a shell's ``setsid`` starts it so)
    gives that session's group at least this niceness, so that its threads rank below the other
    programs' too. Under a manager whose programs share its session (supervisord), the threads'
    own niceness already does. Returns whether the group's niceness was raised (never for 0)."""
    niceness = max(0, min(MAX_NICENESS, niceness))
    current = autogroup_niceness(proc=proc)
    if current is None or current >= niceness or os.getsid(0) != os.getpid():
        return False
    try:
        (proc / "self" / "autogroup").write_text(str(niceness))
    except OSError:
        return False
    return True
