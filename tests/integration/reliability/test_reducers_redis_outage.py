"""Redis stopped under the running reducer process, then started again.

A query that meets Redis away fails its batch; the process restarts that query alone with a
backoff until Redis is back, then the batch is replayed and applied. A record that met Redis away
is never a dead letter: the failure was the infrastructure's, not the record's.

Runs on this module's own Kafka and Redis (``stack``): the shared services are never stopped.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator

import orjson
import pytest
import redis as redis_lib

from bench.harness import Process
from reducers import topics
from store import keys
from tests.conftest import wait_for
from tests.factories import definition_build, raw_price_update
from tests.integration.reliability.conftest import Stack

pytestmark = [pytest.mark.integration, pytest.mark.timeout(420)]

MARKET = 420_001


@pytest.fixture
def reducers(stack: Stack, tmp_path) -> Iterator[Process]:
    process = stack.process(
        "reducers-outage",
        [sys.executable, "-m", "spark.jobs.reducers"],
        SPARK_TRIGGER_MODE="microbatch",
        SPARK_MASTER="local[2]",
        SPARK_CHECKPOINT_DIR=str(tmp_path / "checkpoints"),
        SPARK_QUERY_RESTART_BASE_S="1",
        SPARK_QUERY_RESTART_MAX_S="4",
    )
    process.start()
    yield process
    process.stop()


def runs(client: redis_lib.Redis) -> dict[str, dict]:
    return {k.decode(): orjson.loads(v) for k, v in client.hgetall(keys.reducer_queries()).items()}


def stored_seq(client: redis_lib.Redis, market_id: int) -> int | None:
    raw = client.hget(keys.market_state(market_id), "seq")
    return int(raw) if raw is not None else None


def test_queries_that_meet_redis_away_are_restarted_until_it_is_back_and_nothing_is_dead_lettered(
    stack: Stack, reducers: Process
):
    from odds.core.kafka import producer_create

    client = redis_lib.Redis.from_url(stack.redis)
    producer = producer_create(**{"bootstrap.servers": stack.kafka, "linger.ms": 0})
    definition = definition_build(MARKET)
    producer.produce(topics.markets(), key=definition.key(), value=definition.encode())
    producer.flush(10)
    wait_for(lambda: client.get(keys.reducer_progress("prices")), timeout=180, what="the price query running")
    wait_for(lambda: client.hget(keys.market_definition(MARKET), "version"), timeout=60, what="the definition")

    def price(seq: int) -> None:
        update = raw_price_update(market_id=MARKET, seq=seq, prices=((1, f"2.{seq:02d}"),))
        producer.produce(topics.prices(), key=update.key(), value=update.encode())
        producer.flush(10)

    price(1)
    wait_for(lambda: stored_seq(client, MARKET) == 1, timeout=60, what="the first price")

    stack.service("redis", "stop")
    price(2)
    # The price query meets Redis away and is restarted, again and again, while Redis is down.
    wait_for(
        lambda: reducers.output().count("query prices stopped") >= 2,
        timeout=60,
        what="the price query to fail and be restarted while Redis is down",
    )
    assert reducers.alive(), reducers.tail()
    stack.service("redis", "start")
    back = time.monotonic()

    wait_for(lambda: stored_seq(client, MARKET) == 2, timeout=60, what="the price sent while Redis was away")
    applied_s = time.monotonic() - back
    # Every query that met Redis away comes back; one may still be waiting out its restart delay
    # when the price query is running again.
    wait_for(
        lambda: runs(client) and all(run["state"] == "running" for run in runs(client).values()),
        timeout=60,
        what="every query running",
    )
    shown = runs(client)
    assert shown["prices"]["restarts"] >= 1
    assert shown["prices"]["last_error"]
    assert all(run["state"] == "running" for run in shown.values()), shown
    # Redis away was the infrastructure's failure: no record became a dead letter.
    assert client.hgetall(keys.counter("dead_letters")) == {}
    assert reducers.alive()
    print(
        f"price applied {applied_s:.1f} s after Redis came back; prices restarted {shown['prices']['restarts']} times"
    )
