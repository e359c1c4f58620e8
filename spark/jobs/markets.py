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
from reducers.schemas import InvalidRecord, decode_market_definition
from spark.sinks.channels import ChannelStore
from spark.sinks.redis_state import MarketStateSink
from spark.sources import env, kafka_stream

log = logging.getLogger("spark.jobs.markets")
QUERY_NAME = "markets"


class MarketTableProcessor:
    def __init__(self, *, redis_client: redis.Redis) -> None:
        self._redis = redis_client
        self._channels = ChannelStore(redis_client)
        self._prices = MarketStateSink(redis_client)

    def apply_rows(self, rows: list[Any]) -> dict[str, int]:
        counts = {"upserted": 0, "removed": 0, "stale": 0, "rejected": 0}
        defined: list[int] = []
        status_changed: list[int] = []
        for row in sorted(rows, key=lambda r: (r["partition"], r["offset"])):
            try:
                market_id = int(row["key"])
                definition = decode_market_definition(row["value"])
            except (InvalidRecord, TypeError, ValueError) as exc:
                log.warning("rejected market record at %s/%s: %s", row["partition"], row["offset"], exc)
                self._redis.hincrby(keys.counter("dead_letters"), "market_record", 1)
                counts["rejected"] += 1
                continue
            key = keys.market_definition(market_id)
            if definition is None:
                # Tombstone: the market is gone; keep a closed marker so late prices are not tradable.
                pipe = self._redis.pipeline(transaction=True)
                pipe.delete(key)
                pipe.hset(key, mapping={"status": "closed", "removed": 1})
                pipe.srem(keys.market_definitions_index(), market_id)
                pipe.execute()
                status_changed.append(market_id)
                counts["removed"] += 1
                continue
            # A stale definition still releases a kept price: the batch may be a replay after a
            # crash between writing the definition and applying the price.
            defined.append(market_id)
            stored, stored_status = self._redis.hmget(key, "version", "status")
            if stored is not None and int(stored) >= definition.version:
                counts["stale"] += 1
                continue
            if stored_status is None or stored_status.decode() != definition.status:
                status_changed.append(market_id)
            pipe = self._redis.pipeline(transaction=True)
            pipe.delete(key)
            pipe.hset(
                key, mapping={"version": definition.version, "status": definition.status, "def": definition.encode()}
            )
            pipe.sadd(keys.market_definitions_index(), market_id)
            pipe.execute()
            counts["upserted"] += 1
        counts["kept_prices_applied"] = self._apply_kept_prices(defined)
        # A price applied before this row changed carries the old row's verdict: re-derive it.
        restated = self._prices.restatus(status_changed)
        self._channels.fan_out(restated)
        counts["restated"] = len(restated)
        return counts

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
    processor = MarketTableProcessor(redis_client=redis.Redis.from_url(redis_url))
    return (
        kafka_stream(spark, topic=topics.markets(), bootstrap=bootstrap, starting_offsets="earliest")
        .writeStream.queryName(QUERY_NAME)
        .option("checkpointLocation", checkpoint_dir)
        .foreachBatch(processor)
        .trigger(processingTime=env("SPARK_MARKETS_TRIGGER", "1 second"))
        .start()
    )
