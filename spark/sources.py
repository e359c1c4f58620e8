"""Kafka sources: a topic as a stream of raw records."""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass
from typing import Any, Protocol

from confluent_kafka import TopicPartition
from py4j.protocol import Py4JError
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from reducers import topics
from spark.config import config
from store.clients import kafka_consumer

log = logging.getLogger("spark.sources")

# How long the broker may hold a fetch of the driver's range reader for more data.
RANGE_READ_FETCH_WAIT_MS = 1

# The columns of a raw record, as ``kafka_stream`` and ``RangeReader`` give it.
RAW_COLUMNS = ("key", "value", "partition", "offset", "kafka_ts")


def raw_row(key: bytes | None, value: bytes | None, partition: int, offset: int, kafka_ts: int) -> dict[str, Any]:
    """A raw record read outside Spark, with the columns of a Spark row of ``kafka_stream``
    (``RAW_COLUMNS``; a literal, several times faster than building it from the names)."""
    return {"key": key, "value": value, "partition": partition, "offset": offset, "kafka_ts": kafka_ts}


def kafka_stream(
    spark: SparkSession,
    *,
    topic: str,
    bootstrap: str,
    starting_offsets: str = "earliest",
    max_offsets_per_trigger: int | None = None,
    fetch_max_wait_ms: int | None = None,
    with_topic: bool = False,
) -> DataFrame:
    """``topic`` as (key, value, partition, offset, kafka_ts ms) rows. ``fetch_max_wait_ms``: how
    long the broker holds a fetch that finds nothing new (``SPARK_KAFKA_FETCH_MAX_WAIT_MS``
    unless given). ``topic`` may name several topics, comma-separated; ``with_topic`` adds the
    record's topic as a first column."""
    reader = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", starting_offsets)
        .option("failOnDataLoss", "false")
        # A task's consumer reads a fixed offset range; an empty fetch of what lies beyond it must
        # not hold the next batch's read for the broker's default 500 ms wait.
        .option("kafka.fetch.max.wait.ms", str(fetch_max_wait_ms or config().kafka_fetch_max_wait_ms))
        # A backlog is read in fetches of up to this many bytes per partition (the client's
        # default is 1 MiB): fewer round trips per batch.
        .option("kafka.max.partition.fetch.bytes", str(config().kafka_partition_fetch_bytes))
        # A request to a broker that died is given up after this long and retried against fresh
        # metadata (Spark remakes its offset reader's client between attempts). The clients'
        # defaults (30 s per request, 60 s per call) held every query of a topic whose partition
        # leader was killed for a minute before the new leader was asked.
        .option("kafka.request.timeout.ms", str(config().kafka_request_timeout_ms))
        .option("kafka.default.api.timeout.ms", str(config().kafka_request_timeout_ms))
    )
    if max_offsets_per_trigger is not None:
        reader = reader.option("maxOffsetsPerTrigger", str(max_offsets_per_trigger))
    return reader.load().select(
        *(["topic"] if with_topic else []),
        "key",
        "value",
        "partition",
        "offset",
        F.unix_millis(F.col("timestamp")).alias("kafka_ts"),
    )


@dataclass(frozen=True)
class OffsetRange:
    """The records ``[start, until)`` of one Kafka partition that a micro-batch covers."""

    topic: str
    partition: int
    start: int
    until: int

    @property
    def size(self) -> int:
        return max(self.until - self.start, 0)


def one_task_per_slot(batch: DataFrame) -> DataFrame:
    """``batch`` read by at most as many tasks as the session has task slots.

    A Kafka source reads each partition of the topic in a task of its own, and each task of an
    aggregation builds its own projections (their generated code is cached, but its source is
    written again for every task) and writes its own shuffle files. With more partitions than
    slots (the price topic has twelve, ``local[4]`` four slots) that work is done three times
    over for nothing: a slot runs the tasks one after another anyway. Coalesced, each task reads
    several partitions in turn. Never more tasks than before: a frame already within its slots
    is left as it is. The slots are asked for on every batch, so executors that join or leave
    a cluster count."""
    return batch.coalesce(batch.sparkSession.sparkContext.defaultParallelism)


def batch_offset_ranges(batch: DataFrame) -> list[OffsetRange] | None:
    """The offset ranges of a Kafka source's micro-batch, read from its plan without reading
    the records; ``None`` for any other kind of frame.

    The walk reads Spark's physical plan through py4j (a batch plans once; an action on the
    same frame reuses the plan): the plan's one leaf, its RDD's lineage down to the data source
    RDD, and each partition's offset range.
    """
    try:
        leaves = batch._jdf.queryExecution().executedPlan().collectLeaves()
        if leaves.size() != 1:
            return None
        rdd = leaves.head().rdd()
        while not rdd.dependencies().isEmpty():
            rdd = rdd.dependencies().head().rdd()
        ranges = []
        for part in rdd.partitions():
            offsets = part.inputPartition().get().offsetRange()
            ranges.append(_offset_range(offsets))
        return ranges
    except Py4JError:
        return None


def query_batch_offset_ranges(execution: Any, batch_id: int) -> list[OffsetRange] | None:
    """The offset ranges of batch ``batch_id`` of a running micro-batch query over one Kafka
    source (``execution``: the query's JVM ``StreamExecution``), from the input partitions Spark
    planned for the batch; ``None`` when the query's current execution is another batch or its
    partitions are not Kafka's (the caller then walks the batch's frame, ``batch_offset_ranges``).

    Eight py4j calls in all, read while the batch function runs, when the query's last
    execution is the batch's own. The walk of a ``foreachBatch`` frame's lineage takes five
    calls per Kafka partition: 14 ms at p50 and 37 ms at p90 of a price trigger of a few
    records over twelve partitions.
    """
    try:
        current = execution.lastExecution()
        if current is None or int(current.currentBatchId()) != batch_id:
            return None
        leaves = current.executedPlan().collectLeaves()
        if leaves.size() != 1:
            return None
        text = str(leaves.head().inputPartitions().toString())
    except Py4JError:
        return None
    found = [_range_of(groups) for groups in _OFFSET_RANGE_TEXT.findall(text)]
    if not found or len(found) != text.count("KafkaOffsetRange("):
        return None
    return found


# Spark's ``KafkaOffsetRange`` as text: ``KafkaOffsetRange(<topic>-<partition>,<from>,<until>,<preferred location>)``
# (Kafka topic names hold letters, digits, '.', '_' and '-').
_OFFSET_RANGE_TEXT = re.compile(r"KafkaOffsetRange\(([\w.-]+)-(\d+),(-?\d+),(-?\d+),")


def _range_of(groups: tuple[str, ...]) -> OffsetRange:
    """An ``OffsetRange`` from the groups of ``_OFFSET_RANGE_TEXT``."""
    topic, partition, start, until = groups
    return OffsetRange(topic, int(partition), int(start), int(until))


def _offset_range(offsets: Any) -> OffsetRange:
    """One partition's range from Spark's ``KafkaOffsetRange``: read from its text in one py4j call
    (the text of a case class; each field asked for apart is a call of its own, and those calls
    were most of the batch-size probe's time), or field by field when the text is not the
    expected one."""
    found = _OFFSET_RANGE_TEXT.match(str(offsets.toString()))
    if found is not None:
        return _range_of(found.groups())
    where = offsets.topicPartition()
    return OffsetRange(
        str(where.topic()), int(where.partition()), int(offsets.fromOffset()), int(offsets.untilOffset())
    )


class ReadsRanges(Protocol):
    """What the price reducer needs of a range reader."""

    def read(self, ranges: list[OffsetRange]) -> list[dict[str, Any]] | None: ...


class RangeReader:
    """Reads given offset ranges of Kafka into the rows ``kafka_stream`` yields, with one
    consumer on the driver and no Spark job.

    A micro-batch of a few records costs more as a Spark job (scheduling its tasks, reading on
    the executors, collecting to the driver: 100 to 200 ms for ten records here) than the records
    themselves. The query still decides the batch's offsets and checkpoints them; this reads
    exactly those records, as Spark would, and nothing else. The consumer assigns itself the
    partitions it reads: it never joins the group it names and commits nothing.
    """

    def __init__(self, bootstrap: str, *, timeout_s: float | None = None) -> None:
        settings = config()
        self._timeout_s = settings.kafka_request_timeout_ms / 1000 if timeout_s is None else timeout_s
        self._consumer = kafka_consumer(
            bootstrap,
            topics.range_reader_group(),
            **{
                # Spark's Java reader reads uncommitted records (librdkafka's default is committed).
                "isolation.level": "read_uncommitted",
                # Offsets gone to retention are skipped, as Spark does with failOnDataLoss=false.
                "auto.offset.reset": "earliest",
                # Every record asked for is already in the log: a fetch has nothing to wait for
                # (at Spark's 10 ms, reading ten records took about 13 ms, at 1 ms 5 to 9 ms).
                "fetch.wait.max.ms": RANGE_READ_FETCH_WAIT_MS,
                "socket.timeout.ms": settings.kafka_request_timeout_ms,
            },
        )

    def read(self, ranges: list[OffsetRange]) -> list[dict[str, Any]] | None:
        """The records of ``ranges`` in offset order per partition; ``None`` when they could not
        all be read within the Kafka request timeout (the caller then reads them through Spark)."""
        wanted = [r for r in ranges if r.size]
        if not wanted:
            return []
        left = {(r.topic, r.partition): r.until for r in wanted}
        expected = sum(r.size for r in wanted)
        self._consumer.assign([TopicPartition(r.topic, r.partition, r.start) for r in wanted])
        rows: list[dict[str, Any]] = []
        deadline = time.monotonic() + self._timeout_s
        try:
            while left:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    log.warning("reading offset ranges %s timed out; reading them through Spark", wanted)
                    return None
                # consume() returns as soon as it holds as many records as asked for (or at the
                # timeout): ask for the ones still missing, so a read never waits on the clock.
                asked = max(expected - len(rows), 1)
                for message in self._consumer.consume(num_messages=asked, timeout=min(remaining, 0.1)):
                    if message.error():
                        log.warning("reading offset ranges: %s", message.error())
                        continue
                    topic, partition, offset = message.topic(), message.partition(), message.offset()
                    if topic is None or partition is None or offset is None:
                        continue  # only an error lacks them
                    until = left.get((topic, partition))
                    if until is None:
                        continue  # a partition already read to its end
                    if offset < until:
                        rows.append(raw_row(message.key(), message.value(), partition, offset, message.timestamp()[1]))
                    if offset >= until - 1:
                        del left[(topic, partition)]
            return rows
        finally:
            self._consumer.unassign()

    def close(self) -> None:
        self._consumer.close()


_range_readers: dict[tuple[str, str, str], RangeReader] = {}


def range_reader(bootstrap: str, *, query: str) -> RangeReader:
    """The driver's range reader for ``bootstrap`` and one query, kept across restarts of the
    query. One per query: the queries' batch functions run at once on threads of their own, and a
    reader's consumer is assigned the ranges of one read at a time."""
    key = (bootstrap, topics.namespace(), query)
    if key not in _range_readers:
        _range_readers[key] = RangeReader(bootstrap)
    return _range_readers[key]


class BatchRows:
    """A micro-batch's raw rows (``RAW_COLUMNS``), for a query whose batch function reads every
    record on the driver anyway: read from Kafka by a ``RangeReader`` (the batch's offset ranges
    from the running query, as Spark planned them), or collected by a Spark job when the ranges
    are not known or could not be read.

    Collecting a batch of a couple of hundred bets was a Spark job of 300-450 ms on two cores
    (scheduling its tasks, reading on the executors, sending the rows to the driver), most of a
    liability batch; the same records read on the driver take a few milliseconds."""

    def __init__(self, reader: ReadsRanges | None) -> None:
        self._reader = reader
        self._execution: Any = None

    def follow(self, query: Any) -> None:
        """Read each batch's offset ranges from ``query``, the running query (a few py4j calls),
        rather than from the batch's frame."""
        self._execution = query._jsq.streamingQuery()

    def ranges(self, batch: DataFrame, batch_id: int) -> list[OffsetRange] | None:
        """The batch's offset ranges: from the running query when it follows one, else from the
        batch's frame; ``None`` when neither knows them (not a Kafka source)."""
        if self._execution is not None:
            ranges = query_batch_offset_ranges(self._execution, batch_id)
            if ranges is not None:
                return ranges
        return batch_offset_ranges(batch)

    def read(self, batch: DataFrame, ranges: list[OffsetRange] | None) -> tuple[list[Any], str]:
        """The rows of ``ranges`` and how they were read: "kafka" (the range reader), or "spark"
        (a job collecting the batch) when there is no reader, no ranges, or the read failed."""
        rows = self._reader.read(ranges) if self._reader is not None and ranges is not None else None
        if rows is None:
            return batch.select(*RAW_COLUMNS).collect(), "spark"
        return rows, "kafka"

    def of(self, batch: DataFrame, batch_id: int) -> tuple[list[Any], str]:
        """The batch's rows and how they were read (``read``)."""
        return self.read(batch, self.ranges(batch, batch_id) if self._reader is not None else None)
