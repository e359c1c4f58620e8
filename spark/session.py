"""SparkSession construction from the environment.

``SPARK_MASTER`` picks where the reducers run: ``local[N]`` by default, or a standalone
(``spark://host:7077``) or Kubernetes (``k8s://…``) master. The Kafka connector jars resolved
by Maven into ``.cache/jars/spark-kafka`` are passed with ``spark.jars``.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

from pyspark.sql import SparkSession

ROOT = Path(__file__).resolve().parent.parent


def connector_jars() -> list[str]:
    jar_dir = Path(os.environ.get("SPARK_KAFKA_JARS_DIR", ROOT / ".cache" / "jars" / "spark-kafka"))
    jars = sorted(str(p) for p in jar_dir.glob("*.jar"))
    if not any("spark-sql-kafka" in j for j in jars):
        raise RuntimeError(f"Spark Kafka connector not found in {jar_dir}: run `make deps`")
    return jars


def build_session(app_name: str, *, master: str | None = None, extra: dict[str, str] | None = None) -> SparkSession:
    """A session tuned for small, latency-sensitive streaming batches."""
    logging.getLogger("py4j").setLevel(logging.WARNING)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    conf = {
        "spark.jars": ",".join(connector_jars()),
        "spark.sql.shuffle.partitions": os.environ.get("SPARK_SHUFFLE_PARTITIONS", "4"),
        "spark.ui.enabled": os.environ.get("SPARK_UI_ENABLED", "false"),
        "spark.ui.port": os.environ.get("SPARK_UI_PORT", "4040"),
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.driver.host": os.environ.get("SPARK_DRIVER_HOST", "127.0.0.1"),
        "spark.driver.memory": os.environ.get("SPARK_DRIVER_MEMORY", "1g"),
        "spark.sql.streaming.stateStore.providerClass": (
            "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
        ),
        "spark.sql.session.timeZone": "UTC",
        # ``limit(n).collect()`` reads every partition in its first job (the default starts
        # with one and scales up, a job each): the price reducer's batch-size probe relies on it.
        "spark.sql.limit.initialNumPartitions": os.environ.get("SPARK_LIMIT_INITIAL_PARTITIONS", "1024"),
        "spark.python.worker.reuse": "true",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.ui.showConsoleProgress": "false",
        "spark.log.level": os.environ.get("SPARK_LOG_LEVEL", "WARN"),
    }
    conf.update(extra or {})
    builder = SparkSession.builder.appName(app_name).master(master or os.environ.get("SPARK_MASTER", "local[4]"))
    for key, value in conf.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()
