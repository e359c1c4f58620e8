"""All reducer queries in one Spark application: prices, commands, markets table, liability, movers.

``python -m spark.jobs.reducers`` is what `make up` runs. Each query has its own checkpoint
under ``SPARK_CHECKPOINT_DIR/<namespace>-<query>``; a restart resumes every query from its
checkpoint and every subscription from Redis.
"""

from __future__ import annotations

import logging
import signal
import time
from pathlib import Path
from typing import Any

import redis
from pyspark.sql import SparkSession
from pyspark.sql.streaming import StreamingQuery

from reducers import topics
from spark.jobs import commands, liability, markets, movers, prices
from spark.jobs.markets import QueryRefresher
from spark.progress import RedisProgressListener
from spark.session import ROOT, build_session
from spark.sources import env

log = logging.getLogger("spark.jobs.reducers")
COMPONENT = "reducers"


def start_all(
    spark: SparkSession, *, bootstrap: str, redis_url: str, checkpoint_root: Path, mode: str
) -> list[StreamingQuery]:
    def checkpoint(name: str) -> str:
        return str(checkpoint_root / f"{topics.namespace()}-{name}")

    return [
        markets.start(spark, bootstrap=bootstrap, redis_url=redis_url, checkpoint_dir=checkpoint("markets")),
        commands.start(spark, bootstrap=bootstrap, redis_url=redis_url, checkpoint_dir=checkpoint("commands")),
        liability.start(spark, bootstrap=bootstrap, redis_url=redis_url, checkpoint_dir=checkpoint("liability")),
        movers.start(spark, bootstrap=bootstrap, redis_url=redis_url, checkpoint_dir=checkpoint("movers")),
        prices.start(
            spark, bootstrap=bootstrap, redis_url=redis_url, checkpoint_dir=checkpoint(f"prices-{mode}"), mode=mode
        ),
    ]


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    bootstrap = env("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9092")
    redis_url = env("REDIS_URL", "redis://127.0.0.1:6379/0")
    mode = env("SPARK_TRIGGER_MODE", "microbatch")
    checkpoint_root = Path(env("SPARK_CHECKPOINT_DIR", str(ROOT / "var" / "checkpoints")))
    spark = build_session("sportsbook-reducers", extra=prices.REALTIME_SQL_CONF if mode == "realtime" else None)
    client = redis.Redis.from_url(redis_url)
    spark.streams.addListener(RedisProgressListener(client, COMPONENT, bootstrap=bootstrap))
    queries = start_all(spark, bootstrap=bootstrap, redis_url=redis_url, checkpoint_root=checkpoint_root, mode=mode)
    refresher = QueryRefresher(redis_client=client, interval_s=float(env("QUERY_REFRESH_SECONDS", "10")))
    refresher.start()
    log.info("reducers running: %s (price path in %s mode)", ", ".join(q.name for q in queries), mode)

    def stop(signum: int, frame: Any) -> None:
        log.info("signal %s: stopping", signum)
        refresher.stopped.set()
        for query in queries:
            query.stop()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    while all(q.isActive for q in queries):
        time.sleep(0.5)
    for query in queries:
        if query.isActive:
            query.stop()
        elif query.exception() is not None:
            log.error("query %s failed: %s", query.name, query.exception())
    spark.stop()


if __name__ == "__main__":
    main()
