"""Price movement per market over event-time windows, with a watermark.

Prices are grouped by the time they happened at the source (``event_ts``), not the time they
arrived, into tumbling windows. The watermark bounds how late a record may arrive and still
count; later records are dropped by Spark. They are counted by the price reducer with the same
rule (``reducers.windows``), because Spark's own drop metric undercounts once it
pre-aggregates or filters late rows early. For every window the
markets are ranked by their largest move (basis points) into a Redis sorted set.
"""

from __future__ import annotations

import logging

import redis
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.streaming import StreamingQuery

from reducers import topics
from reducers.connections import redis_client
from reducers.movers import Movement, best_moves
from reducers.store import MarketStore
from spark.config import config
from spark.sinks.replicated import Replicated
from spark.sources import kafka_stream

log = logging.getLogger("spark.jobs.movers")
QUERY_NAME = "movers"

PRICE_SCHEMA = T.StructType(
    [
        T.StructField("v", T.IntegerType()),
        T.StructField("market_id", T.LongType()),
        T.StructField("seq", T.LongType()),
        T.StructField("event_ts", T.LongType()),
        T.StructField(
            "selections",
            T.ArrayType(T.StructType([T.StructField("id", T.LongType()), T.StructField("price", T.StringType())])),
        ),
    ]
)


def movements(prices: DataFrame, *, window: str, watermark: str) -> DataFrame:
    """(window_start ms, market_id, selection_id, first, last, low, high, updates) per window."""
    return (
        prices.select(F.from_json(F.col("value").cast("string"), PRICE_SCHEMA).alias("r"))
        .where(F.col("r.v") == 1)
        .select(
            F.col("r.market_id").alias("market_id"),
            F.col("r.seq").alias("seq"),
            F.timestamp_millis(F.col("r.event_ts")).alias("event_time"),
            F.explode(F.col("r.selections")).alias("s"),
        )
        .select(
            "market_id",
            "seq",
            "event_time",
            F.col("s.id").alias("selection_id"),
            F.col("s.price").cast(T.DecimalType(7, 2)).alias("price"),
        )
        .where(F.col("market_id").isNotNull() & F.col("price").isNotNull() & F.col("event_time").isNotNull())
        .withWatermark("event_time", watermark)
        .groupBy(F.window("event_time", window), "market_id", "selection_id")
        .agg(
            F.min_by("price", "seq").alias("first"),
            F.max_by("price", "seq").alias("last"),
            F.min("price").alias("low"),
            F.max("price").alias("high"),
            F.count(F.lit(1)).alias("updates"),
        )
        .select(
            F.unix_millis(F.col("window.start")).alias("window_start"),
            "market_id",
            "selection_id",
            "first",
            "last",
            "low",
            "high",
            "updates",
        )
    )


class MoversSink:
    """Scores each window's markets (``reducers.movers.best_moves``) into the store's rankings."""

    def __init__(self, *, redis_client: redis.Redis) -> None:
        self._store = MarketStore(redis_client)

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        self._store.rank_movers(
            best_moves(
                Movement(
                    window_start=int(row["window_start"]),
                    market_id=int(row["market_id"]),
                    first=row["first"],
                    last=row["last"],
                )
                for row in batch.collect()
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
    """The movers query over ``topic`` (the price topic unless given), named ``name``."""
    settings = config()
    # The prices come first. Per record this query costs about as much CPU as the price query
    # (it parses every record again, explodes its selections and keeps windows in a state
    # store), so:
    # - one task reads every partition of the price topic for it: its batches take one core, not
    #   all, and the price query's batches beside them stay short (SPARK_MOVERS_TASKS raises it
    #   where cores allow);
    # - a batch reads at most SPARK_MOVERS_MAX_RECORDS records: under a backlog the query falls
    #   behind the prices (its lag is on the lag dashboard) and catches up when the feed slows.
    #   Windows are by event time, so a record this query reads late still counts in the window
    #   it belongs to.
    stream = kafka_stream(
        spark,
        topic=topic or topics.prices(),
        bootstrap=bootstrap,
        starting_offsets="latest",
        max_offsets_per_trigger=settings.movers_max_records,
    ).coalesce(settings.movers_tasks)
    return (
        movements(stream, window=settings.movers_window, watermark=settings.movers_watermark)
        .writeStream.queryName(name)
        .outputMode("update")
        .option("checkpointLocation", checkpoint_dir)
        .foreachBatch(Replicated(MoversSink(redis_client=redis_client(redis_url)), redis_url=redis_url))
        .trigger(processingTime=settings.movers_trigger)
        .start()
    )
