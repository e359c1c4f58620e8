"""The game query as a process of its own, for the crash test (test_game_crash.py):
``python -m tests.integration.reliability.game_query CHECKPOINT_DIR``. Once the first batch
that settles answers is written (its punters by the workers, the rest by the sink), the sink
marks the moment in Redis (``CRASH_POINT``) and waits: the test kills the process there, after
the batch's writes and before Spark commits it. SIGTERM stops it."""

from __future__ import annotations

import logging
import signal
import sys
import threading
import time
from typing import Any

from spark.config import config
from spark.jobs import game
from spark.session import build_session
from spark.sinks.dead_letter import dead_letter_sink
from store.clients import redis_client

# Set by the sink once a settling batch is written (the test's cue to kill the process); while
# it is set, a settling batch waits for the kill instead of returning.
CRASH_POINT = "crash-point"


class CrashingSink(game.GameSink):
    def __init__(self, *, redis_url: str, bootstrap: str, crash: bool) -> None:
        from reducers import topics

        super().__init__(
            redis_client=redis_client(redis_url),
            answers=dead_letter_sink(bootstrap=bootstrap, source_topic=topics.game_answers()),
            events=dead_letter_sink(bootstrap=bootstrap, source_topic=topics.game_events()),
        )
        self._crash = crash

    def process(self, table: Any, batch_id: int) -> dict[str, int]:
        counts = super().process(table, batch_id)
        if self._crash and counts["settled"]:
            from reducers.topics import namespace

            self._redis.set(f"{namespace()}:{CRASH_POINT}", batch_id)
            print(f"batch {batch_id} written; waiting to be killed", flush=True)
            time.sleep(3600)
        return counts


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    settings = config()
    spark = build_session("sportsbook-game-query")
    sink = CrashingSink(redis_url=settings.redis_url, bootstrap=settings.kafka_bootstrap, crash=sys.argv[2] == "crash")
    query = game.start(
        spark,
        bootstrap=settings.kafka_bootstrap,
        redis_url=settings.redis_url,
        checkpoint_dir=sys.argv[1],
        sink=sink,
    )
    stop = threading.Event()

    def stopped(signum: int, frame: Any) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, stopped)
    print("query started", flush=True)
    while not stop.wait(0.5) and query.isActive:
        pass
    if not query.isActive:
        print(f"query ended: {query.exception()}", flush=True)
    query.stop()
    spark.stop()


if __name__ == "__main__":
    main()
