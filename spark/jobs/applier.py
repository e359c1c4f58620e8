"""Real-time mode's effect: the price reducer applying what the real-time price query checked.

In real-time mode the price query is all JVM (read, check in SQL, write: ``prices.start_realtime``)
into the checked-price topic through Spark's Kafka sink, which real-time mode supports. The
reducer's effect is Python and runs here, in the reducers' process: a consumer in the group
``topics.reducer_group(QUERY_NAME)`` reads the checked-price topic and hands what it has read to
``PriceBatchProcessor.process_rows``: the Python validator as the last word, late records,
unknown-market admission, apply-if-newer with its publish and the subscriber fan-out. Then it
commits the offsets. At least once: a record read again after a crash or a rebalance changes
nothing, its sequence being no newer than the market's.

The applier looks like a streaming query to ``QuerySupervisor`` (``isActive``, ``exception``,
``stop``): if it fails it is restarted alone, with the same backoff, and its state is shown with
the queries' on /healthz and the lag dashboard.
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import UTC, datetime
from typing import Any

import orjson
from confluent_kafka import KafkaError, KafkaException, Message, TopicPartition

from reducers import topics
from spark.config import config
from spark.jobs.prices import HEADER_KAFKA_TS, HEADER_OFFSET, HEADER_SQL_OK, PriceBatchProcessor
from spark.jobs.prices import QUERY_NAME as PRICE_QUERY
from spark.jobs.query import gc_paused
from spark.progress import PROGRESS_TTL_S
from spark.sinks.dead_letter import DeadLetterSink
from spark.sinks.windows import BufferedWindows, WindowTopic
from spark.sources import raw_row
from store.clients import kafka_consumer, redis_client
from store.markets import replicas_acknowledge
from store.pipeline import counter_add, reducer_progress_write, reducer_seen_write

log = logging.getLogger("spark.jobs.applier")

QUERY_NAME = topics.PRICE_APPLIER
# The real-time price query, whose records this applies.
SOURCE_QUERY = PRICE_QUERY
# How long a poll waits for the first record of a batch; the records already fetched behind it
# are taken without waiting. Only bounds how quickly a stop is noticed.
POLL_S = 0.25
# How often the applier's progress report is written for the lag dashboard.
PROGRESS_EVERY_S = 1.0
# How long the window partials of the records applied wait to be sent together to the window
# topic (``BufferedWindows``), at most; the offsets of those records are committed after. A
# crash replays at most this much, and the movers, triggered every ten seconds, see the partials
# this much later.
WINDOWS_EVERY_S = 0.5
# Counter family (``store.pipeline.counter_add``) of records the SQL check accepted and the Python validator
# refused: the SQL check is meant never to accept such a record.
COUNTER_SQL_ACCEPTED_PYTHON_REFUSED = "sql_accepted_python_refused"


def source_row(message: Message) -> tuple[dict[str, Any], bool, bool]:
    """The raw price row a checked-price record stands for (the price topic's partition, offset
    and Kafka timestamp, as the other paths give it), whether the SQL check accepted it, and
    whether the row's place is the price topic's (from the headers).

    A record without the headers the real-time query writes (written by something else) is
    still a price record: it is reduced like any other, with the checked-price topic's own offset
    and timestamp, and the SQL check's verdict taken as a refusal."""
    headers = dict(message.headers() or [])
    offset, kafka_ts = _whole(headers.get(HEADER_OFFSET)), _whole(headers.get(HEADER_KAFKA_TS))
    partition = int(message.partition() or 0)
    if offset is None or kafka_ts is None:
        log.warning(
            "checked-price record %s[%s]@%s has no %s and %s headers; reduced with its own",
            message.topic(),
            partition,
            message.offset(),
            HEADER_OFFSET,
            HEADER_KAFKA_TS,
        )
        row = raw_row(message.key(), message.value(), partition, int(message.offset() or 0), message.timestamp()[1])
        return row, False, False
    row = raw_row(message.key(), message.value(), partition, offset, kafka_ts)
    return row, headers.get(HEADER_SQL_OK) == b"1", True


def _whole(value: str | bytes | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


class PriceApplier:
    """The consumer loop in a thread of its own; ``start`` returns it running."""

    def __init__(self, *, bootstrap: str, redis_url: str, name: str = QUERY_NAME) -> None:
        self.name = name
        self._bootstrap = bootstrap
        self._redis_url = redis_url
        self._stopped = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=f"applier-{name}", daemon=True)

    @classmethod
    def start(cls, *, bootstrap: str, redis_url: str, name: str = QUERY_NAME) -> PriceApplier:
        applier = cls(bootstrap=bootstrap, redis_url=redis_url, name=name)
        applier._thread.start()
        return applier

    @property
    def isActive(self) -> bool:  # noqa: N802  # the name StreamingQuery gives it
        return self._thread.is_alive()

    def exception(self) -> BaseException | None:
        return self._error

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join(timeout=30)

    def _run(self) -> None:
        try:
            self._loop()
        except BaseException as exc:  # the supervisor reads it, logs it and restarts the applier
            log.exception("%s stopped", self.name)
            self._error = exc

    def _loop(self) -> None:
        settings = config()
        client = redis_client(self._redis_url)
        windows = BufferedWindows(WindowTopic(bootstrap_servers=self._bootstrap), every_s=WINDOWS_EVERY_S)
        processor = PriceBatchProcessor(
            redis_client=client,
            dead_letters=DeadLetterSink(bootstrap_servers=self._bootstrap, topic=topics.prices_dead_letter()),
            windows=windows,
        )
        consumer = kafka_consumer(
            self._bootstrap,
            topics.reducer_group(self.name),
            # A fetch that finds nothing waits at the broker, which answers as soon as a record
            # arrives (librdkafka's default wait, 500 ms).
            **{"auto.offset.reset": "earliest"},
        )
        checked_topic = topics.prices_checked()
        consumer.subscribe([checked_topic])
        # Commits, to the real-time price query's group, the price topic's offsets of what has
        # been applied: that query commits nothing itself between its real-time batches, and
        # its lag on the dashboard is the whole path's (see spark/jobs/reducers.py).
        source_group = kafka_consumer(self._bootstrap, topics.reducer_group(SOURCE_QUERY))
        cap = settings.max_offsets_per_trigger
        window = _Window()
        # Offsets of records applied whose window partials are not yet sent, per checked-price
        # partition and per price-topic partition: committed once the partials are stored.
        ends: dict[tuple[str, int], int] = {}
        source_ends: dict[int, int] = {}

        def commit() -> None:
            windows.flush()
            if ends:
                consumer.commit(offsets=[TopicPartition(t, p, o) for (t, p), o in ends.items()], asynchronous=True)
                ends.clear()
            if source_ends:
                source_group.commit(
                    offsets=[TopicPartition(topics.prices(), p, o) for p, o in source_ends.items()], asynchronous=True
                )
                source_group.poll(0)
                source_ends.clear()

        reducer_seen_write(client, self.name, int(time.time() * 1000))
        try:
            while not self._stopped.is_set():
                first = consumer.poll(POLL_S)
                if first is None:
                    commit()
                    window.report(self, client)
                    continue
                # The records make no reference cycles: no cyclic collection while a poll's
                # records are read and reduced (in this process, next to the JVM gateway's
                # objects, it walked a large heap again and again).
                with gc_paused():
                    messages = [first, *consumer.consume(num_messages=cap - 1, timeout=0)]
                    started = time.perf_counter()
                    rows: list[dict[str, Any]] = []
                    sql_accepted: set[int] = set()
                    for message in messages:
                        error = message.error()
                        if error is not None:
                            # A fatal error ends this consumer (the supervisor starts a new one);
                            # anything else (a broker away, a rebalance) the client retries itself.
                            if error.fatal():
                                raise KafkaException(error)
                            if error.code() != KafkaError._PARTITION_EOF:
                                log.warning("%s: %s", self.name, error)
                            continue
                        row, accepted, from_source = source_row(message)
                        rows.append(row)
                        if from_source:
                            source_ends[row["partition"]] = max(source_ends.get(row["partition"], 0), row["offset"] + 1)
                        if accepted:
                            sql_accepted.add(id(row))
                        ends[(checked_topic, row["partition"])] = int(message.offset() or 0) + 1
                    if rows:
                        processor.process_rows(rows)
                        self._audit(processor.last_refused, sql_accepted, client)
                        replicas_acknowledge(
                            client, replicas=settings.redis_replicas, timeout_ms=settings.redis_replica_timeout_ms
                        )
                        # No partial kept (every record since the last commit was refused): what
                        # was read is stored, so it is committed now, not at the next quiet poll,
                        # which a steady stream of refused records would never bring.
                        if windows.due() or not windows.holding():
                            commit()
                now_ms = time.time() * 1000
                window.add(len(rows), time.perf_counter() - started, [now_ms - row["kafka_ts"] for row in rows])
                window.report(self, client)
            # Stopped: what was applied is stored and committed (a failure leaves it to a replay).
            commit()
        finally:
            consumer.close()
            source_group.close()

    def _audit(self, refused: list[Any], sql_accepted: set[int], client: Any) -> None:
        """Count and log the records the SQL check accepted and the Python validator refused."""
        disagreed = [row for row in refused if id(row) in sql_accepted]
        if not disagreed:
            return
        for row in disagreed:
            log.error(
                "the SQL check accepted a price record the validator refused: %s[%s]@%s",
                topics.prices(),
                row["partition"],
                row["offset"],
            )
        counter_add(client, COUNTER_SQL_ACCEPTED_PYTHON_REFUSED, topics.prices(), len(disagreed))


class _Window:
    """Records applied since the last progress report, written as a query's would be."""

    def __init__(self) -> None:
        self.rows = 0
        self.busy_s = 0.0
        self.since = time.monotonic()
        self.batch_id = 0
        self.polls = 0
        # Per record: milliseconds from the price topic's Kafka timestamp to its effect.
        self.ages_ms: list[float] = []

    def add(self, rows: int, busy_s: float, ages_ms: list[float]) -> None:
        self.rows += rows
        self.busy_s += busy_s
        self.polls += 1
        self.ages_ms.extend(ages_ms)

    def report(self, applier: PriceApplier, client: Any) -> None:
        elapsed = time.monotonic() - self.since
        if elapsed < PROGRESS_EVERY_S:
            return
        now = datetime.now(UTC)
        report = orjson.dumps(
            {
                "name": applier.name,
                "timestamp": now.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
                "batchId": self.batch_id,
                "numInputRows": self.rows,
                "inputRowsPerSecond": self.rows / elapsed if elapsed else 0.0,
                "processedRowsPerSecond": self.rows / self.busy_s if self.busy_s else 0.0,
                "durationMs": {"triggerExecution": round(self.busy_s * 1000)},
                "polls": self.polls,
                "kafkaToAppliedMs": _percentiles(self.ages_ms),
            }
        )
        if self.rows:
            log.info(
                "%s: %d records in %d polls, busy %d ms, price topic to applied p50/p99/max %s ms",
                applier.name,
                self.rows,
                self.polls,
                round(self.busy_s * 1000),
                "/".join(str(v) for v in _percentiles(self.ages_ms).values()),
            )
        pipe = client.pipeline(transaction=False)
        reducer_progress_write(pipe, applier.name, report, ttl_s=PROGRESS_TTL_S)
        reducer_seen_write(pipe, applier.name, int(now.timestamp() * 1000))
        if self.rows:
            # The real-time price query reports only when its batch ends; records coming through
            # it are its sign of life.
            reducer_seen_write(pipe, SOURCE_QUERY, int(now.timestamp() * 1000))
        pipe.execute()
        self.rows, self.busy_s, self.since, self.polls, self.ages_ms = 0, 0.0, time.monotonic(), 0, []
        self.batch_id += 1


def _percentiles(values: list[float]) -> dict[str, int]:
    """p50, p99 and max of ``values``, rounded (none when there are none)."""
    if not values:
        return {}
    ordered = sorted(values)

    def at(q: float) -> int:
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))])

    return {"p50": at(0.5), "p99": at(0.99), "max": round(ordered[-1])}
