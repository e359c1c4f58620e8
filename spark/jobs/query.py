"""The one way a reducer query reading a Kafka topic batch by batch is started: its source from
the registry (``reducers.queries``), its checkpoint, its processor under ``Replicated`` and its
trigger. A query whose plan is more than its source (the prices' modes, the movers' windows)
starts itself, from the same registry entry."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql.streaming import StreamingQuery

from reducers.queries import ReducerQuery
from spark.config import ReducerConfig, config
from spark.sinks.dead_letter import DeadLetters, dead_letter_sink
from spark.sinks.replicated import Replicated
from spark.sources import kafka_stream


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while a batch's records are decoded and reduced. That work
    allocates several objects per record and makes no cycles; with collection on, the collector
    ran over the batch's growing set of live objects again and again: 40-50 % of the decoding
    time of 50,000 price records, and over half of a goal's settlement of 100,000 game punters
    (docs/performance.md). Collection resumes, as configured, when the batch's work is done."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


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
    """Start ``query`` with ``process`` as its batch function and return it. A ``process`` with
    a ``follow`` method is given the running query (``spark.sources.BatchRows.follow``)."""
    writer = (
        kafka_stream(spark, topic=query.source(), bootstrap=bootstrap, starting_offsets=query.starting_offsets)
        .writeStream.queryName(query.name)
        .option("checkpointLocation", checkpoint_dir)
    )
    if query.async_progress:
        for key, value in async_progress_options(config()).items():
            writer = writer.option(key, value)
    started = (
        writer.foreachBatch(Replicated(process, redis_url=redis_url))
        .trigger(processingTime=config().triggers[query.name])
        .start()
    )
    follow = getattr(process, "follow", None)
    if follow is not None:
        # A batch run before this reads its ranges from its frame.
        follow(started)
    return started


def async_progress_options(settings: ReducerConfig) -> dict[str, str]:
    """Writer options for asynchronous progress tracking of a micro-batch query whose effects
    tolerate a replay (``ReducerQuery.async_progress``: the price query, the liability query).

    Writing the offset log and the commit log takes about half of a small price batch (90 and
    70 ms of 320 at the demo rate); a trader's suspension waits for the batch in flight and then
    its own. With these options the logs are written in the background, at most once per
    ``SPARK_ASYNC_PROGRESS_INTERVAL_MS``, and the next batch starts at once. After a crash the
    query replays from the last logged offsets, up to that interval of records: at least once,
    which the reducer's effects tolerate (a record at or below a market's sequence changes
    nothing). Spark checks the sink against a list that leaves out ``foreachBatch`` because a
    ``foreachBatch`` sink may rely on batch ids for exactly-once; this one does not, so the
    check is overridden. ``SPARK_ASYNC_PROGRESS=false`` turns it off; a query restarted without
    it on a checkpoint written with it resumes from the last logged batch (tried with Spark 4.x).
    """
    if not settings.async_progress:
        return {}
    return {
        "asyncProgressTrackingEnabled": "true",
        "asyncProgressTrackingCheckpointIntervalMs": str(settings.async_progress_interval_ms),
        "_asyncProgressTrackingOverrideSinkSupportCheck": "true",
    }
