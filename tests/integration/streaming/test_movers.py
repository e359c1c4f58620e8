"""Event-time windows of price movement with a watermark, on real Kafka and Spark."""

from __future__ import annotations

import dataclasses
import time
import uuid
from decimal import Decimal

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


def test_a_backlog_is_read_a_bounded_batch_at_a_time_and_every_record_still_counts(
    spark, kafka_topics, producer, redis_client, tmp_path, monkeypatch
):
    # Under a backlog the movers fall behind the prices instead of taking the cores from them:
    # each batch reads at most SPARK_MOVERS_MAX_RECORDS records, and the windows still come out
    # as if the records had been read at once.
    from django.conf import settings

    from odds.core.kafka import admin_client, topics_ensure
    from spark.jobs import movers as movers_job

    capped = dataclasses.replace(movers_job.config(), movers_max_records=4, movers_trigger="2 seconds")
    monkeypatch.setattr(movers_job, "config", lambda: capped)
    topic = f"{topics.prices()}.movers-{uuid.uuid4().hex[:8]}"
    topics_ensure(specs=[topics.TopicSpec(topic, 3)])
    query = movers_job.start(
        spark,
        bootstrap=settings.KAFKA_BOOTSTRAP_SERVERS,
        redis_url=settings.REDIS_URL,
        checkpoint_dir=str(tmp_path / "movers"),
        topic=topic,
        name=f"movers-{uuid.uuid4().hex[:8]}",
    )
    try:
        # The first batch fixes where the query starts reading (the end of the topic).
        wait_for(lambda: query.lastProgress is not None, what="the movers query's first batch")
        market_id = 500_101
        now = int(time.time() * 1000)
        window_start = now - now % 60_000
        for seq in range(1, 13):
            price = Decimal("2.00") + Decimal("0.10") * (seq - 1)  # 2.00, 2.10, … 3.10
            update = raw_price_update(market_id=market_id, seq=seq, prices=((1, str(price)), (2, "1.80")))
            timed = dataclasses.replace(update, event_ts=now, produce_ts=int(time.time() * 1000))
            producer.produce(topic, key=timed.key(), value=timed.encode())
        assert producer.flush(10) == 0

        # From 2.00 (sequence 1) to 3.10 (sequence 12): 55 %.
        wait_for(
            lambda: redis_client.zscore(keys.movers(window_start), str(market_id)) == 5500,
            timeout=60,
            what="the whole backlog's move ranked in its window",
        )

        def read() -> list[int]:
            return [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]

        # A batch's progress is reported after its effects.
        wait_for(lambda: sum(read()) == 12, timeout=20, what="the progress of every batch")
        assert max(read()) <= 4
        assert len(read()) >= 3
    finally:
        query.stop()
        admin_client().delete_topics([topic])
