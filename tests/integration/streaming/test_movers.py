"""Event-time windows of price movement with a watermark, on real Kafka and Spark."""

from __future__ import annotations

import time

import pytest

from reducers import keys, topics
from reducers.schemas import PriceUpdate
from tests.conftest import wait_for
from tests.factories import market_ids_define, raw_price_update

pytestmark = pytest.mark.integration


def produce_at(producer, update: PriceUpdate, event_ts: int) -> None:
    timed = PriceUpdate(
        market_id=update.market_id,
        seq=update.seq,
        status=update.status,
        selections=update.selections,
        event_ts=event_ts,
        produce_ts=int(time.time() * 1000),
    )
    producer.produce(topics.prices(), key=timed.key(), value=timed.encode())
    producer.flush(10)


def test_movement_is_ranked_per_event_time_window_and_late_records_are_counted(
    reducers_running, producer, redis_client
):
    query = reducers_running["movers"]
    wait_for(lambda: query.lastProgress is not None, what="movers query running")
    market_id = 500_001
    market_ids_define(redis_client, market_id)
    now = int(time.time() * 1000)
    window_start = now - now % 60_000
    produce_at(producer, raw_price_update(market_id=market_id, seq=1, prices=((1, "2.00"), (2, "1.80"))), now)
    produce_at(producer, raw_price_update(market_id=market_id, seq=2, prices=((1, "2.50"), (2, "1.60"))), now + 1)

    wait_for(
        lambda: redis_client.zscore(keys.movers(window_start), str(market_id)) == 2500,
        timeout=40,
        what="a 25% move ranked in its window",
    )
    assert redis_client.zscore(keys.movers_index(), str(window_start)) == window_start

    before = int(redis_client.hget(keys.counter("late_records"), "prices") or 0)
    produce_at(producer, raw_price_update(market_id=market_id, seq=3, prices=((1, "9.00"),)), now - 15 * 60_000)
    wait_for(
        lambda: int(redis_client.hget(keys.counter("late_records"), "prices") or 0) > before,
        timeout=40,
        what="the late record counted",
    )
    assert redis_client.zscore(keys.movers(window_start - 15 * 60_000), str(market_id)) is None


def test_the_movers_query_reads_the_price_topic_with_one_task(reducers_running):
    # Its stateful batches then take one core, and the price query's batches beside them stay short.
    plan = reducers_running["movers"]._jsq.streamingQuery().logicalPlan().toString()
    assert "Repartition 1, false" in plan
