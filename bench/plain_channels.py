"""The reducers' channel work without Spark: one confluent-kafka consumer process, for small runs.

``python -m bench.plain_channels`` reads the command topic and the markets topic from the start
in a consumer group of its own and hands each batch to the processor the reducers' ``commands``
and ``markets`` queries run (``CommandBatchProcessor``, ``MarketTableProcessor``: channels made,
begun and ended, the markets table written, the shared query channels compared with each
batch), and runs the query refresher (``QueryRefresher``) beside them. With ``bench.plain_consumer``
for the prices it stands in for the reducers where starting Spark would take most of a run
(``bench.channels --quick``, ``make soak``). Its heartbeat is ``keys.heartbeat(CONSUMER)``.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from typing import Any

from reducers import topics
from spark.config import config
from spark.jobs.commands import CommandBatchProcessor
from spark.jobs.markets import MarketTableProcessor, QueryRefresher
from spark.sinks.dead_letter import DeadLetterSink
from store import keys
from store.clients import kafka_consumer, redis_client

CONSUMER = "plain-channels"
FETCH = 2_000
POLL_S = 0.01
log = logging.getLogger("bench.plain_channels")


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    settings = config()
    bootstrap = settings.kafka_bootstrap
    client = redis_client(settings.redis_url)
    commands = CommandBatchProcessor(
        redis_client=client,
        dead_letters=DeadLetterSink(bootstrap_servers=bootstrap, topic=topics.commands_dead_letter()),
    )
    markets = MarketTableProcessor(
        redis_client=client,
        dead_letters=DeadLetterSink(bootstrap_servers=bootstrap, topic=topics.markets_dead_letter()),
    )
    refresher = QueryRefresher(redis_client=client, interval_s=settings.query_refresh_s)
    consumer = kafka_consumer(
        bootstrap, f"{topics.namespace()}.bench-plain-channels", **{"auto.offset.reset": "earliest"}
    )
    consumer.subscribe([topics.commands(), topics.markets()])
    stop_requested = threading.Event()

    def stop(signum: int, frame: Any) -> None:
        stop_requested.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    refresher.start()
    beat = 0.0
    try:
        while not stop_requested.is_set():
            if time.monotonic() - beat > 1:
                client.set(keys.heartbeat(CONSUMER), int(time.time()), ex=30)
                beat = time.monotonic()
            messages = consumer.consume(num_messages=FETCH, timeout=POLL_S)
            rows: dict[str, list[dict[str, Any]]] = {topics.commands(): [], topics.markets(): []}
            for m in messages:
                topic = m.topic()
                if m.error() is None and topic is not None:
                    rows[topic].append(
                        {
                            "key": m.key(),
                            "value": m.value(),
                            "partition": m.partition(),
                            "offset": m.offset(),
                            "kafka_ts": m.timestamp()[1],
                        }
                    )
            # The markets first: a channel subscribed in the same poll finds the table written.
            if rows[topics.markets()]:
                log.info("markets: %s", markets.apply_rows(rows[topics.markets()]))
            if rows[topics.commands()]:
                log.info("commands: %s", commands.process_rows(rows[topics.commands()]))
    finally:
        refresher.stopped.set()
        consumer.close()


if __name__ == "__main__":
    main()
