"""Markets table: the compacted markets topic read as a table into Redis, and the query stage.

Each record is a market definition keyed by market id (the newest version wins) or a tombstone
that removes the market. After every batch — and on a timer, because "starting within 60
minutes" changes as time passes — every query channel is resolved again: markets that start
matching join its view, markets that stop matching leave it.

A price that reached the price reducer before its market's definition reached this table was
dead-lettered and its newest snapshot kept (``MarketStateSink.keep_unknown``); once the
definition is written here, that price is applied and fanned out like any other.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import redis
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming import StreamingQuery

from reducers import keys, topics
from reducers.schemas import InvalidRecord, MarketDefinition, decode_market_row
from spark.faults import failure_of
from spark.sinks.channels import ChannelStore
from spark.sinks.dead_letter import DeadLetterSink, Rejects, dead_letter_sink
from spark.sinks.redis_state import MarketStateSink
from spark.sources import env, kafka_stream

log = logging.getLogger("spark.jobs.markets")
QUERY_NAME = "markets"


class MarketTableProcessor:
    """Applies a batch of the markets topic; a record that cannot be decoded or applied is a
    dead letter, and the records after it are applied as usual."""

    def __init__(self, *, redis_client: redis.Redis, dead_letters: DeadLetterSink) -> None:
        self._redis = redis_client
        self._channels = ChannelStore(redis_client)
        self._prices = MarketStateSink(redis_client)
        self._dead_letters = dead_letters

    def apply_rows(self, rows: list[Any]) -> dict[str, int]:
        counts = {"upserted": 0, "removed": 0, "stale": 0, "rejected": 0}
        defined: list[int] = []
        status_changed: list[int] = []
        rejects = Rejects(
            sink=self._dead_letters, redis_client=self._redis, source_topic=topics.markets(), counter_prefix="market_"
        )
        for row in sorted(rows, key=lambda r: (r["partition"], r["offset"])):
            try:
                market_id, definition = decode_market_row(row["key"], row["value"])
            except InvalidRecord as exc:
                rejects.add(row, exc.reason, exc.detail)
                counts["rejected"] += 1
                continue
            except Exception as exc:  # anything else a record can raise is that record's fault
                rejects.add(row, *failure_of(exc, stage="decode"))
                counts["rejected"] += 1
                continue
            try:
                outcome = self._apply_one(market_id, definition)
            except Exception as exc:
                rejects.add(row, *failure_of(exc, stage="apply"))
                counts["rejected"] += 1
                continue
            counts["upserted" if outcome == "status_changed" else outcome] += 1
            if outcome != "removed":
                # A stale definition still releases a kept price: the batch may be a replay after
                # a crash between writing the definition and applying the price.
                defined.append(market_id)
            if outcome in ("removed", "status_changed"):
                status_changed.append(market_id)
        rejects.flush()
        counts["kept_prices_applied"] = self._apply_kept_prices(defined)
        # A price applied before this row changed carries the old row's verdict: re-derive it.
        restated = self._prices.restatus(status_changed)
        self._channels.fan_out(restated)
        counts["restated"] = len(restated)
        return counts

    def _apply_one(self, market_id: int, definition: MarketDefinition | None) -> str:
        """Write one record into the table: "removed", "stale", "upserted" or "status_changed"."""
        key = keys.market_definition(market_id)
        if definition is None:
            # Tombstone: the market is gone; keep a closed marker so late prices are not tradable.
            pipe = self._redis.pipeline(transaction=True)
            pipe.delete(key)
            pipe.hset(key, mapping={"status": "closed", "removed": 1})
            pipe.srem(keys.market_definitions_index(), market_id)
            pipe.execute()
            return "removed"
        stored, stored_status = self._redis.hmget(key, "version", "status")
        if stored is not None and int(stored) >= definition.version:
            return "stale"
        pipe = self._redis.pipeline(transaction=True)
        pipe.delete(key)
        pipe.hset(key, mapping={"version": definition.version, "status": definition.status, "def": definition.encode()})
        pipe.sadd(keys.market_definitions_index(), market_id)
        pipe.sadd(keys.event_markets(definition.event_id), market_id)
        pipe.execute()
        if stored_status is None or stored_status.decode() != definition.status:
            return "status_changed"
        return "upserted"

    def _apply_kept_prices(self, market_ids: list[int]) -> int:
        """Apply the prices kept while these markets were unknown; read only after their
        definitions were written, so a price kept at any earlier moment is found."""
        items = self._prices.kept_prices(market_ids)
        if not items:
            return 0
        applied = self._prices.apply(items)
        self._channels.fan_out(applied)
        # Forgotten only once applied: a crash before this line replays the batch, which applies
        # the kept price again (harmless: apply-if-newer).
        self._prices.discard_kept([item.update.market_id for item in items])
        return len(applied)

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        counts = self.apply_rows(batch.collect())
        changed = self._channels.refresh_queries()
        log.info("batch %s: %s; query channels changed: %d", batch_id, counts, len(changed))


class QueryRefresher(threading.Thread):
    """Re-resolves query channels periodically (time moves markets in and out of queries)."""

    def __init__(self, *, redis_client: redis.Redis, interval_s: float) -> None:
        super().__init__(name="query-refresher", daemon=True)
        self._channels = ChannelStore(redis_client)
        self._interval = interval_s
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(self._interval):
            try:
                self._channels.refresh_queries()
            except redis.RedisError as exc:
                log.warning("query refresh failed: %s", exc)


def start(spark: SparkSession, *, bootstrap: str, redis_url: str, checkpoint_dir: str) -> StreamingQuery:
    processor = MarketTableProcessor(
        redis_client=redis.Redis.from_url(redis_url),
        dead_letters=dead_letter_sink(bootstrap=bootstrap, source_topic=topics.markets()),
    )
    return (
        kafka_stream(spark, topic=topics.markets(), bootstrap=bootstrap, starting_offsets="earliest")
        .writeStream.queryName(QUERY_NAME)
        .option("checkpointLocation", checkpoint_dir)
        .foreachBatch(processor)
        .trigger(processingTime=env("SPARK_MARKETS_TRIGGER", "1 second"))
        .start()
    )
