"""Price movement per market over event-time windows, with a watermark.

Prices are grouped by the time they happened at the source (``event_ts``), not the time they
arrived, into tumbling windows. The price reducer folds each batch's accepted records into one
partial per market and window (its first and last snapshot, ``reducers.movers.WindowPartial``)
and writes them to the window topic; this query reads those, not every price record, and merges
them per window in Spark state: the first snapshot of the lowest sequence, the last of the
highest. The watermark bounds how late a partial may arrive and still count (a partial's event
time is its newest record's); later ones are dropped by Spark. Late price records are counted by
the price reducer with the same rule (``reducers.windows``), because Spark's own drop metric
undercounts once it pre-aggregates or filters late rows early. For every window the markets are
ranked by their largest move (basis points) into a Redis sorted set.
"""

from __future__ import annotations

import logging
from typing import Any

import redis
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.streaming import StreamingQuery

from reducers import topics
from reducers.movers import biggest_moves, prices_of, window_movements
from reducers.queries import MOVERS
from spark.config import config
from spark.sinks.replicated import Replicated
from spark.sources import kafka_stream
from store.clients import redis_client
from store.markets import MarketStore

log = logging.getLogger("spark.jobs.movers")
QUERY_NAME = MOVERS.name

_PRICES = T.ArrayType(T.StructType([T.StructField("id", T.LongType()), T.StructField("price", T.StringType())]))
# A window-topic record (``reducers.movers.encode_partial``).
PARTIAL_SCHEMA = T.StructType(
    [
        T.StructField("window_start", T.LongType()),
        T.StructField("market_id", T.LongType()),
        T.StructField("first_seq", T.LongType()),
        T.StructField("first", _PRICES),
        T.StructField("last_seq", T.LongType()),
        T.StructField("last", _PRICES),
        T.StructField("newest_event", T.LongType()),
        T.StructField("updates", T.LongType()),
    ]
)


# The event time of a window-topic record that has none (not one our reducers write): the epoch,
# whose window the watermark drops and the sink skips.
UNTIMED_MS = 0


def movements(partials: DataFrame, *, window: str, watermark: str) -> DataFrame:
    """(window_start ms, market_id, first, last, updates) per window and market, from the window
    topic's records: ``first`` and ``last`` the selections' (id, price) of the window's first and
    last snapshot so far.

    Each record is parsed once. No filter reads the parsed record: Spark pushes a filter below
    the projection that parses and parses again for every member it checks (five parses a record
    with the four null checks this query had, which made it cost as much of the JVM as the price
    query in real-time mode). A record without a market or sequence is left to the aggregation,
    which ignores a null sequence and keeps a null market in a group of its own (the sink skips
    it); one without an event time counts at the epoch (``UNTIMED_MS``), so the event time is never
    null and the window needs no null filter of its own.
    """
    p = F.col("p")
    return (
        partials.select(F.from_json(F.col("value").cast("string"), PARTIAL_SCHEMA).alias("p"))
        .select(
            p["market_id"].alias("market_id"),
            F.timestamp_millis(F.coalesce(p["newest_event"], F.lit(UNTIMED_MS))).alias("event_time"),
            p["first_seq"].alias("first_seq"),
            p["first"].alias("first"),
            p["last_seq"].alias("last_seq"),
            p["last"].alias("last"),
            p["updates"].alias("updates"),
        )
        .withWatermark("event_time", watermark)
        .groupBy(F.window("event_time", window), "market_id")
        .agg(
            F.min_by("first", "first_seq").alias("first"),
            F.max_by("last", "last_seq").alias("last"),
            F.sum("updates").alias("updates"),
        )
        .select(F.unix_millis(F.col("window.start")).alias("window_start"), "market_id", "first", "last", "updates")
    )


def ranked(row: Any) -> bool:
    """Whether a row of ``movements`` is a window of a market to rank: not the group of records
    without a market, nor the epoch's window of records without an event time."""
    return row["market_id"] is not None and row["window_start"] > UNTIMED_MS


class MoversSink:
    """Scores each window's markets (``reducers.movers.biggest_moves``) into the store's rankings."""

    def __init__(self, *, redis_client: redis.Redis) -> None:
        self._store = MarketStore(redis_client)

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        self._store.rank_movers(
            biggest_moves(
                movement
                for row in batch.collect()
                if ranked(row)
                for movement in window_movements(
                    int(row["window_start"]), int(row["market_id"]), prices_of(row["first"]), prices_of(row["last"])
                )
            )
        )


def start(
    spark: SparkSession,
    *,
    bootstrap: str,
    redis_url: str,
    checkpoint_dir: str,
    topic: str | None = None,
    name: str = QUERY_NAME,
) -> StreamingQuery:
    """The movers query over ``topic`` (the window topic unless given), named ``name``."""
    settings = config()
    # The prices come first. The window topic holds a record per market and window of each price
    # batch, not per price record, but a backlog of them is still worked off beside the prices:
    # - one task reads every partition of the window topic: its batches take one core at most,
    #   and the price query's batches beside them stay short (SPARK_MOVERS_TASKS raises it where
    #   cores allow);
    # - a batch reads at most SPARK_MOVERS_MAX_RECORDS records: under a backlog the query falls
    #   behind (its lag is on the lag dashboard) and catches up when the feed slows. Windows are
    #   by event time, so a partial this query reads late still counts in the window it belongs
    #   to.
    stream = kafka_stream(
        spark,
        topic=topic or topics.price_windows(),
        bootstrap=bootstrap,
        starting_offsets=MOVERS.starting_offsets,
        max_offsets_per_trigger=settings.movers_max_records,
    ).coalesce(settings.movers_tasks)
    return (
        movements(stream, window=settings.movers_window, watermark=settings.movers_watermark)
        .writeStream.queryName(name)
        .outputMode("update")
        .option("checkpointLocation", checkpoint_dir)
        .foreachBatch(Replicated(MoversSink(redis_client=redis_client(redis_url)), redis_url=redis_url))
        .trigger(processingTime=settings.triggers[MOVERS.name])
        .start()
    )
