"""Kafka sources: a topic as a stream of raw records."""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from spark.config import config


def kafka_stream(
    spark: SparkSession,
    *,
    topic: str,
    bootstrap: str,
    starting_offsets: str = "earliest",
    max_offsets_per_trigger: int | None = None,
) -> DataFrame:
    """``topic`` as (key, value, partition, offset, kafka_ts ms) rows."""
    reader = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", starting_offsets)
        .option("failOnDataLoss", "false")
        # A task's consumer reads a fixed offset range; an empty fetch of what lies beyond it must
        # not hold the next batch's read for the broker's default 500 ms wait.
        .option("kafka.fetch.max.wait.ms", str(config().kafka_fetch_max_wait_ms))
        # A backlog is read in fetches of up to this many bytes per partition (the client's
        # default is 1 MiB): fewer round trips per batch.
        .option("kafka.max.partition.fetch.bytes", str(config().kafka_partition_fetch_bytes))
    )
    if max_offsets_per_trigger is not None:
        reader = reader.option("maxOffsetsPerTrigger", str(max_offsets_per_trigger))
    return reader.load().select(
        "key",
        "value",
        "partition",
        "offset",
        F.unix_millis(F.col("timestamp")).alias("kafka_ts"),
    )
