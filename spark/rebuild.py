"""Redis that comes back empty is rebuilt from Kafka, without a human.

Kafka is the record of what happened; Redis holds what the reducers made of it. The reducers
write a mark in Redis (``store.pipeline.store_mark_write``) once the store holds everything Kafka has. When the
mark is missing (Redis restarted without its data, or a new empty node took its place), the
driver re-reads, from the beginning of what each topic retains:

* the markets topic (compacted: the newest definition of every market), into the markets table;
* the match-state topic, into the match states;
* the price topic, into the latest state of every market: every record is read, only the
  newest valid one of each market is applied (``newest_prices``).

Each record goes through the same processor as the streaming query, so the rebuild decides
exactly what the queries decide, and every write is apply-if-newer: the queries keep running
meanwhile, and whichever applies a record first, the result is the same. A record that is a
dead letter was dead-lettered when it first arrived and is not sent again. The time it takes
is bounded by what the topics retain (docs/reliability.md has the measured rate).

Subscriber channels live only in Redis: they are gone, and their websockets are told so
(``ended`` with reason ``lost``); clients subscribe again.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import redis
from confluent_kafka import OFFSET_BEGINNING, KafkaException, TopicPartition

from reducers import topics
from reducers.schemas import decode_price_update, price_market_and_seq
from spark.jobs.markets import MarketTableProcessor
from spark.jobs.matches import MatchBatchProcessor
from spark.jobs.prices import PriceBatchProcessor
from store.clients import kafka_consumer, redis_client
from store.pipeline import counter_add, store_mark_write, store_marked

log = logging.getLogger("spark.rebuild")
# Records handed to a processor at once.
CHUNK = 5000
# How often the driver checks that the store still holds its mark.
CHECK_INTERVAL_S = 2.0


class SentAlready:
    """The dead-letter sink of a rebuild: a rejected record was dead-lettered when it first arrived."""

    def send(
        self,
        *,
        key: bytes | None,
        value: bytes | None,
        reason: str,
        detail: str,
        origin: str,
        headers: Sequence[tuple[str, bytes]] = (),
    ) -> None:
        return None

    def flush(self, timeout: float = 30.0) -> None:
        return None


def retained_records(bootstrap: str, topic: str, *, chunk: int = CHUNK) -> Iterator[list[dict[str, Any]]]:
    """Every record the topic retains up to its end when called, in chunks of rows shaped as
    the streaming queries see them (key, value, partition, offset, kafka_ts)."""
    consumer = kafka_consumer(
        bootstrap, f"store-rebuild-{uuid.uuid4().hex}", **{"enable.partition.eof": False, "fetch.max.bytes": 16 << 20}
    )
    try:
        metadata = consumer.list_topics(topic, timeout=30).topics[topic]
        if metadata.error is not None:
            raise KafkaException(metadata.error)
        ends: dict[int, int] = {}
        assigned = []
        for partition in metadata.partitions:
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=30)
            if high > low:
                ends[partition] = high
                assigned.append(TopicPartition(topic, partition, OFFSET_BEGINNING))
        if not assigned:
            return
        consumer.assign(assigned)
        rows: list[dict[str, Any]] = []
        while ends:
            messages = consumer.consume(num_messages=chunk, timeout=0.1)
            if not messages:
                # A compacted partition may end on offsets it no longer holds: its position says.
                for position in consumer.position([TopicPartition(topic, p) for p in ends]):
                    if position.offset >= ends[position.partition]:
                        del ends[position.partition]
            for message in messages:
                if message.error() is not None:
                    raise KafkaException(message.error())
                partition, offset = message.partition(), message.offset()
                if partition is None or offset is None or partition not in ends:
                    continue
                rows.append(
                    {
                        "key": message.key(),
                        "value": message.value(),
                        "partition": partition,
                        "offset": offset,
                        "kafka_ts": message.timestamp()[1],
                    }
                )
                if offset + 1 >= ends[partition]:
                    del ends[partition]
            if len(rows) >= chunk or (rows and not ends):
                yield rows
                rows = []
    finally:
        consumer.close()


def _valid(value: bytes | None) -> bool:
    try:
        decode_price_update(value or b"")
    except Exception:  # whatever the reducer would reject
        return False
    return True


def newest_prices(bootstrap: str, topic: str) -> tuple[list[dict[str, Any]], int]:
    """The newest valid record of every market the price topic retains, and how many records it
    holds. Only the newest of each market can change the store (apply-if-newer), so the others
    are read but never applied: the time taken is the reading, not the applying. The sequence
    is read cheaply from every record; a market whose newest record the reducer would reject
    is looked for again with the full check."""
    newest: dict[int, tuple[int, dict[str, Any]]] = {}
    records = 0
    for rows in retained_records(bootstrap, topic):
        records += len(rows)
        for row in rows:
            found = price_market_and_seq(row["value"])
            # Strictly newer replaces: of two records with one sequence, the first one applied stays.
            if found is not None and (found[0] not in newest or found[1] > newest[found[0]][0]):
                newest[found[0]] = (found[1], row)
    rejected = {market for market, (_, row) in newest.items() if not _valid(row["value"])}
    if rejected:
        for market in rejected:
            del newest[market]
        for rows in retained_records(bootstrap, topic):
            for row in rows:
                found = price_market_and_seq(row["value"])
                if found is None or found[0] not in rejected or not _valid(row["value"]):
                    continue
                if found[0] not in newest or found[1] > newest[found[0]][0]:
                    newest[found[0]] = (found[1], row)
    return [row for _, row in newest.values()], records


def rebuild(client: redis.Redis, *, bootstrap: str, now: Callable[[], float] = time.monotonic) -> dict[str, Any]:
    """Re-apply what Kafka retains of markets, match states and prices, then write the mark."""
    started = now()
    sent_already: Any = SentAlready()
    counts: dict[str, Any] = {}
    table = MarketTableProcessor(redis_client=client, dead_letters=sent_already)
    matches = MatchBatchProcessor(redis_client=client, dead_letters=sent_already)
    prices = PriceBatchProcessor(redis_client=client, dead_letters=sent_already)
    steps: list[tuple[str, str, Callable[[list[Any]], Any]]] = [
        ("markets", topics.markets(), table.apply_rows),
        ("matches", topics.match_states(), matches.process_rows),
    ]
    for name, topic, apply in steps:
        records = 0
        for rows in retained_records(bootstrap, topic):
            apply(rows)
            records += len(rows)
        counts[name] = records
    newest, counts["prices"] = newest_prices(bootstrap, topics.prices())
    for start in range(0, len(newest), CHUNK):
        prices.process_rows(newest[start : start + CHUNK])
    counts["prices_applied"] = len(newest)
    counts["ms"] = int((now() - started) * 1000)
    store_mark_write(client, {"rebuilt_at": int(time.time() * 1000), **counts})
    return counts


class StoreWatch(threading.Thread):
    """Checks the store's mark on an interval; rebuilds the store when it is missing. The first
    check runs at start, so a store never marked (a new deployment) is filled from Kafka too."""

    def __init__(self, *, redis_url: str, bootstrap: str, interval_s: float = CHECK_INTERVAL_S) -> None:
        super().__init__(name="store-watch", daemon=True)
        self._client = redis_client(redis_url, socket_timeout=30, socket_connect_timeout=5)
        self._kafka = bootstrap
        self._interval = interval_s
        self.stopped = threading.Event()
        self.rebuilds = 0

    def check(self) -> dict[str, Any] | None:
        """Rebuild when the mark is missing; the counts of the rebuild, or None."""
        if store_marked(self._client):
            return None
        log.warning("the store has no mark (Redis came back empty or is new): rebuilding it from Kafka")
        counts = rebuild(self._client, bootstrap=self._kafka)
        self.rebuilds += 1
        counter_add(self._client, "store_rebuilds", "count", 1)
        log.warning("store rebuilt from Kafka: %s", counts)
        return counts

    def run(self) -> None:
        while True:
            try:
                self.check()
            except (redis.RedisError, KafkaException) as exc:  # tried again on the next round
                log.warning("store check failed: %s", exc)
            if self.stopped.wait(self._interval):
                return
