"""The most Spark does with the price topic on this machine: the ceiling of the reducers.

``python -m bench.spark_ceiling`` runs one streaming query with the price reducer's source (the
same topic, Kafka options and batch cap) and session, decodes every record with the price
topic's Avro schema (``spark.validation.parse_record``) and keeps the newest record per market
with one aggregation, and does nothing with the result: no validation, no Redis, no fan-out.
Its progress reports go to Redis like the reducers' (query name ``ceiling``), and the records
it has read are counted under ``keys.bench_rows(QUERY_NAME)`` so the benchmark knows when a
backlog is worked off.
"""

from __future__ import annotations

import logging
import signal
import tempfile
import threading
from collections.abc import Callable
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from spark.config import config
from spark.jobs.prices import read_prices
from spark.progress import RedisProgressListener
from spark.session import build_session
from spark.sources import RAW_COLUMNS, one_task_per_slot
from spark.validation import parse_record
from store import keys
from store.clients import redis_client

QUERY_NAME = "ceiling"
log = logging.getLogger("bench.spark_ceiling")


def newest_per_market(batch: DataFrame) -> DataFrame:
    """Decode each record and keep, per market, the one with the highest sequence.

    Aggregated as the price reducer aggregates (``spark.jobs.prices.conflated``): the records
    that do not decode are listed, which makes Spark aggregate in a hash map of objects; with the
    newest record alone it sorts every row of the batch first, which was no faster here. Read by
    one task per task slot, as the price reducer reads a large batch.
    """
    parsed = one_task_per_slot(batch).select(*RAW_COLUMNS, parse_record(F.col("value")).alias("r"))
    raw = F.struct(*RAW_COLUMNS)
    return parsed.groupBy(F.col("r.market_id").alias("market_id")).agg(
        F.max_by(raw, F.col("r.seq")).alias("w"),
        F.count(F.lit(1)).alias("merged"),
        F.collect_list(F.when(F.col("r.seq").isNull(), raw)).alias("unparsed"),
    )


def run_until_stopped(
    plan: DataFrame, batch: Callable[[DataFrame, int], None], *, name: str, output_mode: str | None = None
) -> None:
    """Run ``plan`` as a query named ``name``, each batch through ``batch``, batches back to back,
    with a checkpoint directory of its own (removed afterwards), until the process is asked to
    stop (SIGTERM or SIGINT); a query that stops by itself is an error."""
    stop_requested = threading.Event()

    def stop(signum: int, frame: Any) -> None:
        stop_requested.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    with tempfile.TemporaryDirectory(prefix=f"{name}-checkpoint-") as checkpoint:
        writer = plan.writeStream.queryName(name).option("checkpointLocation", checkpoint)
        if output_mode is not None:
            writer = writer.outputMode(output_mode)
        query = writer.foreachBatch(batch).trigger(processingTime="0 seconds").start()
        log.info("%s query running", name)
        while not stop_requested.wait(0.5):
            if not query.isActive:
                raise RuntimeError(f"the {name} query stopped: {query.exception()}")
        query.stop()


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    bootstrap = config().kafka_bootstrap
    client = redis_client(config().redis_url)
    spark = build_session("sportsbook-bench-ceiling")
    spark.streams.addListener(RedisProgressListener(client, QUERY_NAME))

    def batch(frame: DataFrame, batch_id: int) -> None:
        rows = newest_per_market(frame).collect()
        client.incrby(keys.bench_rows(QUERY_NAME), sum(int(row["merged"]) for row in rows))

    run_until_stopped(read_prices(spark, bootstrap=bootstrap, mode="microbatch"), batch, name=QUERY_NAME)
    spark.stop()


if __name__ == "__main__":
    main()
