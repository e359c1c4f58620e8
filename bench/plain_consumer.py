"""The price reducer without Spark: one confluent-kafka consumer process, for comparison.

``python -m bench.plain_consumer`` reads the price topic from the start in a consumer group of
its own, gathers what the broker has (up to ``SPARK_MAX_OFFSETS_PER_TRIGGER`` records, the
micro-batch cap) and hands it to the same reducer the real-time path uses
(``PriceBatchProcessor.process_rows``: Python validation, conflation, unknown-market admission,
the Redis apply and publish, subscriber fan-out, the movers' window partials), into the same
Redis and Kafka, at the reducers' session priority (``SPARK_SESSION_NICENESS``). The records it
has read are counted under ``keys.bench_rows(CONSUMER)``.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from typing import Any

from reducers import topics
from spark.config import config
from spark.jobs.applier import WINDOWS_EVERY_S
from spark.jobs.prices import PriceBatchProcessor
from spark.session import lower_session_priority
from spark.sinks.dead_letter import DeadLetterSink
from spark.sinks.windows import BufferedWindows, WindowTopic
from store import keys
from store.clients import kafka_consumer, redis_client

CONSUMER = "plain"
FETCH = 20_000
# How long a poll waits for more records before the batch is applied: a backlog drain takes
# what the broker has; the end-to-end floor (bench/e2e.py) waits only a few milliseconds.
log = logging.getLogger("bench.plain_consumer")


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    settings = config()
    # The same place in the machine's priorities as the reducers it stands in for (they lower
    # their session below the web workers' when they lead one): the floor is of the same pipe.
    lower_session_priority(settings.session_niceness)
    bootstrap = settings.kafka_bootstrap
    client = redis_client(settings.redis_url)
    cap = settings.max_offsets_per_trigger
    poll_s = float(os.environ.get("PLAIN_CONSUMER_POLL_S", "0.05"))
    # The movers' window partials too: the same effects as the reducers' price query, sent as the
    # real-time applier sends them, together every WINDOWS_EVERY_S at most.
    windows = BufferedWindows(WindowTopic(bootstrap_servers=bootstrap), every_s=WINDOWS_EVERY_S)
    processor = PriceBatchProcessor(
        redis_client=client,
        dead_letters=DeadLetterSink(bootstrap_servers=bootstrap, topic=topics.prices_dead_letter()),
        windows=windows,
    )
    consumer = kafka_consumer(
        bootstrap,
        f"{topics.namespace()}.bench-plain",
        **{"auto.offset.reset": "earliest", "fetch.max.bytes": 64 << 20, "max.partition.fetch.bytes": 8 << 20},
    )
    consumer.subscribe([topics.prices()])
    stop_requested = threading.Event()

    def stop(signum: int, frame: Any) -> None:
        stop_requested.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    client.set(keys.heartbeat(CONSUMER), int(time.time()))
    try:
        while not stop_requested.is_set():
            rows: list[dict[str, Any]] = []
            while len(rows) < cap:
                messages = consumer.consume(num_messages=min(FETCH, cap - len(rows)), timeout=poll_s)
                rows.extend(
                    {
                        "key": m.key(),
                        "value": m.value(),
                        "partition": m.partition(),
                        "offset": m.offset(),
                        "kafka_ts": m.timestamp()[1],
                    }
                    for m in messages
                    if m.error() is None
                )
                if len(messages) < FETCH:
                    break
            if rows:
                processor.process_rows(rows)
                client.incrby(keys.bench_rows(CONSUMER), len(rows))
            if not rows or windows.due():
                windows.flush()
        windows.flush()
    finally:
        consumer.close()


if __name__ == "__main__":
    main()
