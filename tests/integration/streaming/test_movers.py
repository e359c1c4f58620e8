"""Event-time windows of price movement with a watermark, on real Kafka and Spark."""

from __future__ import annotations

import time
import uuid
from decimal import Decimal

import pytest

from reducers import topics
from reducers.movers import Move
from reducers.schemas import PriceUpdate
from store import keys
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


def movers_on_own_topic(spark, tmp_path, *, partitions: int):
    """A movers query of its own over a fresh window topic of ``partitions``: (topic, query)."""
    from django.conf import settings

    from odds.core.kafka import topics_ensure
    from spark.jobs import movers as movers_job

    topic = f"{topics.price_windows()}.test-{uuid.uuid4().hex[:8]}"
    topics_ensure(specs=[topics.TopicSpec(topic, partitions)])
    query = movers_job.start(
        spark,
        bootstrap=settings.KAFKA_BOOTSTRAP_SERVERS,
        redis_url=settings.REDIS_URL,
        checkpoint_dir=str(tmp_path / "movers"),
        topic=topic,
        name=f"movers-{uuid.uuid4().hex[:8]}",
    )
    return topic, query


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
    # Beside the score: which selection moved, from what to what (drifting out from 2.00 to 2.50).
    kept = Move.decode(redis_client.hget(keys.movers_moves(window_start), str(market_id)))
    assert kept == Move(1, Decimal("2.00"), Decimal("2.50"), 2500)

    before = int(redis_client.hget(keys.counter("late_records"), "prices") or 0)
    produce_at(producer, raw_price_update(market_id=market_id, seq=3, prices=((1, "9.00"),)), now - 15 * 60_000)
    wait_for(
        lambda: int(redis_client.hget(keys.counter("late_records"), "prices") or 0) > before,
        timeout=40,
        what="the late record counted",
    )
    assert redis_client.zscore(keys.movers(window_start - 15 * 60_000), str(market_id)) is None


def test_the_movers_query_reads_the_window_topic_with_one_task(reducers_running):
    # Its stateful batches then take one core at most, and the price query's batches beside them
    # stay short; it never reads the price topic itself.
    query = reducers_running["movers"]
    plan = query._jsq.streamingQuery().logicalPlan().toString()
    assert "Repartition 1, false" in plan
    wait_for(lambda: query.lastProgress is not None, what="movers query running")
    [source] = query.lastProgress["sources"]
    assert source["description"] == f"KafkaV2[Subscribe[{topics.price_windows()}]]"


def test_partials_are_merged_across_batches_a_backlog_is_read_a_bounded_batch_at_a_time_and_late_ones_drop(
    spark, kafka_topics, producer, redis_client, tmp_path, monkeypatch
):
    # The window topic's partials of one window, from many price batches, arriving out of order:
    # the window's move is from the lowest sequence's snapshot to the highest's. Under a backlog
    # the movers fall behind the prices instead of taking the cores from them: each batch reads
    # at most SPARK_MOVERS_MAX_RECORDS records, and the windows still come out as if read at once.
    from odds.core.kafka import admin_client
    from reducers.movers import WindowPartial, encode_partial
    from spark.jobs import movers as movers_job

    settings = movers_job.config()
    capped = settings.model_copy(
        update={"movers_max_records": 4, "triggers": {**settings.triggers, "movers": "2 seconds"}}
    )
    monkeypatch.setattr(movers_job, "config", lambda: capped)
    topic, query = movers_on_own_topic(spark, tmp_path, partitions=3)

    def send(partial: WindowPartial) -> None:
        producer.produce(topic, key=str(partial.market_id).encode(), value=encode_partial(partial))

    try:
        # The first batch fixes where the query starts reading (the end of the topic).
        wait_for(lambda: query.lastProgress is not None, what="the movers query's first batch")
        market_id = 500_101
        now = int(time.time() * 1000)
        window_start = now - now % 60_000
        # Twelve partials of two sequences each, the last one first: 2.00 at sequence 1 to 3.10 at 24.
        for part in reversed(range(12)):
            first, last = Decimal("2.00") + Decimal("0.10") * part, Decimal("2.05") + Decimal("0.10") * part
            if part == 11:
                last = Decimal("3.10")
            send(
                WindowPartial(
                    window_start,
                    market_id,
                    2 * part + 1,
                    ((1, first), (2, Decimal("1.80"))),
                    2 * part + 2,
                    ((1, last), (2, Decimal("1.80"))),
                    now,
                    2,
                )
            )
        assert producer.flush(10) == 0

        # From 2.00 (sequence 1) to 3.10 (sequence 24): 55 %.
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

        # A partial whose newest record is behind the watermark (the newest event time seen
        # less MOVERS_WATERMARK) is dropped: its window is never ranked.
        old_window = window_start - 15 * 60_000
        send(
            WindowPartial(
                old_window, market_id, 30, ((1, Decimal("2.00")),), 31, ((1, Decimal("9.00")),), old_window, 2
            )
        )
        assert producer.flush(10) == 0
        wait_for(lambda: sum(read()) == 13, timeout=30, what="the late partial read")
        assert redis_client.zscore(keys.movers(old_window), str(market_id)) is None
    finally:
        query.stop()
        admin_client().delete_topics([topic])


def test_each_window_record_is_parsed_once_and_malformed_ones_are_skipped(
    spark, kafka_topics, producer, redis_client, tmp_path
):
    # A filter on the parsed record would be pushed below the parse by Spark and parse again
    # for every member it checks: the plan holds one parse. Records the reducers never write (not
    # JSON, no market, no event time, no sequences) neither stop the query nor reach a ranking.
    from odds.core.kafka import admin_client
    from reducers.movers import WindowPartial, encode_partial

    topic, query = movers_on_own_topic(spark, tmp_path, partitions=1)
    try:
        wait_for(lambda: query.lastProgress is not None, what="the movers query's first batch")
        market_id, unseqd = 500_201, 500_202
        now = int(time.time() * 1000)
        window_start = now - now % 60_000
        for value in (
            b"not json",
            b'{"market_id":500203,"first_seq":1,"first":[{"id":1,"price":"2.00"}],"last_seq":2,'
            b'"last":[{"id":1,"price":"4.00"}],"updates":2}',
            b'{"first_seq":1,"first":[{"id":1,"price":"2.00"}],"last_seq":2,"last":[{"id":1,"price":"4.00"}],'
            b'"newest_event":' + str(now).encode() + b',"updates":2}',
            b'{"market_id":500202,"newest_event":' + str(now).encode() + b',"updates":1}',
        ):
            producer.produce(topic, key=b"x", value=value)
        partial = WindowPartial(window_start, market_id, 1, ((1, Decimal("2.00")),), 2, ((1, Decimal("2.20")),), now, 2)
        producer.produce(topic, key=str(market_id).encode(), value=encode_partial(partial))
        assert producer.flush(10) == 0

        wait_for(
            lambda: redis_client.zscore(keys.movers(window_start), str(market_id)) == 1000,
            timeout=60,
            what="the well-formed partial's 10 % move ranked",
        )
        assert query.isActive
        assert redis_client.zscore(keys.movers(window_start), str(unseqd)) is None
        assert redis_client.zscore(keys.movers(0), "500203") is None
        plan = query._jsq.streamingQuery().lastExecution().executedPlan().toString()
        assert plan.count("from_json") == 1
    finally:
        query.stop()
        admin_client().delete_topics([topic])
