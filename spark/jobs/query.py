"""The one way a reducer query reading a Kafka topic batch by batch is started: its source from
the registry (``reducers.queries``), its checkpoint, its processor under ``Replicated`` and its
trigger. A query whose plan is more than its source (the prices' modes, the movers' windows)
starts itself, from the same registry entry."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql.streaming import StreamingQuery

from reducers.queries import ReducerQuery
from spark.config import config
from spark.sinks.dead_letter import DeadLetters, dead_letter_sink
from spark.sinks.replicated import Replicated
from spark.sources import kafka_stream


def dead_letters_of(query: ReducerQuery, *, bootstrap: str) -> DeadLetters:
    """Where the query's refused records go (its source's dead-letter topic)."""
    return dead_letter_sink(bootstrap=bootstrap, source_topic=query.source())


def start_query(
    spark: SparkSession,
    query: ReducerQuery,
    *,
    process: Callable[[Any, int], None],
    bootstrap: str,
    redis_url: str,
    checkpoint_dir: str,
) -> StreamingQuery:
    """Start ``query`` with ``process`` as its batch function and return it."""
    return (
        kafka_stream(spark, topic=query.source(), bootstrap=bootstrap, starting_offsets=query.starting_offsets)
        .writeStream.queryName(query.name)
        .option("checkpointLocation", checkpoint_dir)
        .foreachBatch(Replicated(process, redis_url=redis_url))
        .trigger(processingTime=config().triggers[query.name])
        .start()
    )
