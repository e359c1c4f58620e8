"""One reducer query — the commands query, with the progress listener that commits its offsets
and reports its lag — as a process of its own: ``python -m tests.integration.ops.one_query
CHECKPOINT_DIR``. The fault test (test_oncall_fault.py) pauses this process (SIGSTOP), which
stalls the query as a hung driver would, and resumes it (SIGCONT). SIGTERM stops it."""

from __future__ import annotations

import logging
import signal
import sys
import threading
from typing import Any

from spark.config import config
from spark.jobs import commands
from spark.jobs.reducers import COMPONENT
from spark.progress import RedisProgressListener
from spark.session import build_session
from store.clients import redis_client


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    settings = config()
    spark = build_session("sportsbook-one-query")
    client = redis_client(settings.redis_url)
    spark.streams.addListener(RedisProgressListener(client, COMPONENT, bootstrap=settings.kafka_bootstrap))
    query = commands.start(
        spark, bootstrap=settings.kafka_bootstrap, redis_url=settings.redis_url, checkpoint_dir=sys.argv[1]
    )
    stop = threading.Event()

    def stopped(signum: int, frame: Any) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, stopped)
    print("query started", flush=True)
    while not stop.wait(0.5) and query.isActive:
        pass
    query.stop()
    spark.stop()


if __name__ == "__main__":
    main()
