"""Kafka → Spark (micro-batch) → Redis state and pub-sub, with the real services."""

from __future__ import annotations

import orjson
import pytest
from django.conf import settings

from reducers import topics
from store import keys
from tests.conftest import wait_for
from tests.factories import definition_build, definitions_write, market_ids_define, raw_price_update
from tests.integration.streaming.dead_letters import dead_letter_of

pytestmark = pytest.mark.integration


def stored_seq(redis_client, market_id: int) -> int | None:
    raw = redis_client.hget(keys.market_state(market_id), "seq")
    return int(raw) if raw is not None else None


def test_produced_prices_reach_redis_state_and_pubsub(price_query, producer, redis_client):
    market_id = 900_001
    market_ids_define(redis_client, market_id)
    pubsub = redis_client.pubsub(ignore_subscribe_messages=True)
    pubsub.subscribe(keys.market_channel(market_id))
    for seq, price in ((1, "2.00"), (2, "2.10"), (3, "2.20")):
        update = raw_price_update(market_id=market_id, seq=seq, prices=((1, price), (2, "1.80")))
        producer.produce(topics.prices(), key=update.key(), value=update.encode())
    producer.flush(10)

    wait_for(lambda: stored_seq(redis_client, market_id) == 3, what="seq 3 in Redis")
    state = orjson.loads(redis_client.hget(keys.market_state(market_id), "state"))
    assert state["selections"][0]["price"] == "2.20"
    seqs: list[int] = []

    def published_seq_3() -> bool:
        while (message := pubsub.get_message(timeout=0.1)) is not None:
            seqs.append(orjson.loads(message["data"])["seq"])
        return 3 in seqs

    wait_for(published_seq_3, what="seq 3 published")
    assert seqs == sorted(seqs), "published sequences go forwards"


def test_replayed_and_older_updates_change_nothing(price_query, producer, redis_client):
    market_id = 900_002
    market_ids_define(redis_client, market_id, market_id + 1)
    newest = raw_price_update(market_id=market_id, seq=5, prices=((1, "3.00"),))
    producer.produce(topics.prices(), key=newest.key(), value=newest.encode())
    producer.flush(10)
    wait_for(lambda: stored_seq(redis_client, market_id) == 5, what="seq 5 applied")

    for seq, price in ((5, "9.00"), (4, "8.00"), (2, "7.00")):
        stale = raw_price_update(market_id=market_id, seq=seq, prices=((1, price),))
        producer.produce(topics.prices(), key=stale.key(), value=stale.encode())
    marker = raw_price_update(market_id=market_id + 1, seq=1, prices=((1, "1.50"),))
    producer.produce(topics.prices(), key=marker.key(), value=marker.encode())
    producer.flush(10)
    wait_for(lambda: stored_seq(redis_client, market_id + 1) == 1, what="marker applied after the stale updates")

    state = orjson.loads(redis_client.hget(keys.market_state(market_id), "state"))
    assert state["seq"] == 5
    assert state["selections"][0]["price"] == "3.00"


def test_malformed_record_goes_to_dead_letter_topic_while_good_ones_flow(price_query, producer, redis_client):
    market_id = 900_010
    market_ids_define(redis_client, market_id)
    producer.produce(topics.prices(), key=b"900010", value=b'{"v":1,"market_id":"oops"')
    good = raw_price_update(market_id=market_id, seq=1, prices=((1, "4.00"),))
    producer.produce(topics.prices(), key=good.key(), value=good.encode())
    producer.flush(10)
    wait_for(lambda: stored_seq(redis_client, market_id) == 1, what="good record applied")

    headers = dict(dead_letter_of(b'{"v":1,"market_id":"oops"').headers())
    assert headers["reason"] == b"bad_avro"
    assert int(redis_client.hget(keys.counter("dead_letters"), "bad_avro")) >= 1


def test_a_price_for_an_unknown_market_is_dead_lettered_and_never_stored_or_published(
    price_query, producer, redis_client
):
    unknown, known = 900_020, 900_021
    market_ids_define(redis_client, known)
    pubsub = redis_client.pubsub(ignore_subscribe_messages=True)
    pubsub.subscribe(keys.market_channel(unknown))
    before = int(redis_client.hget(keys.counter("dead_letters"), "unknown_market") or 0)
    stray = raw_price_update(market_id=unknown, seq=1, prices=((1, "2.00"),))
    producer.produce(topics.prices(), key=stray.key(), value=stray.encode())
    producer.flush(10)
    after = raw_price_update(market_id=known, seq=1, prices=((1, "3.00"),))
    producer.produce(topics.prices(), key=after.key(), value=after.encode())
    producer.flush(10)
    wait_for(lambda: stored_seq(redis_client, known) == 1, what="the next price applied: the stream continues")

    headers = dict(dead_letter_of(stray.encode()).headers())
    assert headers["reason"] == b"unknown_market"
    assert headers["origin"].startswith(f"{topics.prices()}/".encode())
    assert int(redis_client.hget(keys.counter("dead_letters"), "unknown_market") or 0) >= before + 1
    assert not redis_client.exists(keys.market_state(unknown))
    assert pubsub.get_message(timeout=1.0) is None, "nothing published for the unknown market"


def test_a_price_that_arrives_before_its_definition_is_applied_when_the_definition_arrives(
    price_query, producer, redis_client
):
    market_id = 900_030
    pubsub = redis_client.pubsub(ignore_subscribe_messages=True)
    pubsub.subscribe(keys.market_channel(market_id))
    first = raw_price_update(market_id=market_id, seq=1, prices=((1, "2.40"),))
    producer.produce(topics.prices(), key=first.key(), value=first.encode())
    producer.flush(10)
    assert dict(dead_letter_of(first.encode()).headers())["reason"] == b"unknown_market"
    assert not redis_client.exists(keys.market_state(market_id))

    definition = definition_build(market_id)
    producer.produce(topics.markets(), key=definition.key(), value=definition.encode())
    producer.flush(10)

    wait_for(lambda: stored_seq(redis_client, market_id) == 1, what="the first price applied with its definition")
    message = wait_for(lambda: pubsub.get_message(timeout=0.5), what="the first price published")
    assert orjson.loads(message["data"])["selections"][0]["price"] == "2.40"
    assert not redis_client.exists(keys.unknown_market_price(market_id))


def test_a_definition_written_just_after_the_reducer_looked_is_not_missed(kafka_topics, redis_client, monkeypatch):
    from spark.jobs.prices import PriceBatchProcessor
    from spark.sinks.dead_letter import DeadLetterSink

    market_id = 900_040
    processor = PriceBatchProcessor(
        redis_client=redis_client,
        dead_letters=DeadLetterSink(
            bootstrap_servers=settings.KAFKA_BOOTSTRAP_SERVERS, topic=topics.prices_dead_letter()
        ),
    )
    market_ids_define(redis_client, market_id)
    # The reducer's lookup ran before the markets query wrote the definition above.
    monkeypatch.setattr(processor._sink, "table_statuses", lambda market_ids: [None] * len(market_ids))
    update = raw_price_update(market_id=market_id, seq=1, prices=((1, "5.00"),))
    row = {"key": update.key(), "value": update.encode(), "partition": 0, "offset": 0, "kafka_ts": 1}

    stats = processor.process_rows([row])

    assert (stats["rejected"], stats["applied"]) == (0, 1)
    assert stored_seq(redis_client, market_id) == 1
    assert not redis_client.exists(keys.unknown_market_price(market_id))


def test_a_reopened_market_opens_when_the_markets_table_catches_up(price_query, producer, redis_client):
    """A trader's reopening price can be applied while the markets table still says suspended
    (the definition travels through the outbox and the markets query); when the table catches
    up, the stored state is re-derived and published — not left suspended until the next price."""

    market_id = 900_060
    definitions_write(redis_client, definition_build(market_id, status="suspended", version=2))
    pubsub = redis_client.pubsub(ignore_subscribe_messages=True)
    pubsub.subscribe(keys.market_channel(market_id))
    reopening = raw_price_update(market_id=market_id, seq=3, prices=((1, "2.50"),), status="open")
    producer.produce(topics.prices(), key=reopening.key(), value=reopening.encode())
    producer.flush(10)
    wait_for(lambda: stored_seq(redis_client, market_id) == 3, what="the reopening price applied")
    assert redis_client.hget(keys.market_state(market_id), "status") == b"suspended"

    definitions_write(redis_client, definition_build(market_id, status="open", version=3))

    state = orjson.loads(redis_client.hget(keys.market_state(market_id), "state"))
    assert (state["seq"], state["status"], state["tradable"]) == (3, "open", True)
    assert state["selections"][0]["price"] == "2.50"
    published = []

    def reopened() -> bool:
        message = pubsub.get_message(timeout=0.5)
        if message is not None:
            published.append(orjson.loads(message["data"]))
        return any(m["type"] == "market" and m["status"] == "open" for m in published)

    wait_for(reopened, what="the reopened state published")
    kinds = [(m["type"], m["status"]) for m in published]
    assert kinds.index(("market.status", "open")) < kinds.index(("market", "open"))

    # Replaying the same definition changes nothing and publishes nothing more.
    definitions_write(redis_client, definition_build(market_id, status="open", version=3))
    assert pubsub.get_message(timeout=1) is None


def test_the_micro_batch_price_query_logs_its_progress_in_the_background(price_query):
    # Offset and commit logs written asynchronously: the next batch does not wait for them.
    execution = price_query._jsq.streamingQuery().getClass().getSimpleName()
    assert execution == "AsyncProgressTrackingMicroBatchExecution"


def test_the_micro_batch_price_query_plans_the_raw_records_alone(price_query):
    # Every trigger plans and generates code for the query's frame before the batch function
    # runs, also for a batch the driver reads from Kafka itself: the parse and the verdict are
    # added only to a frame the SQL path reduces (``spark.jobs.prices._validated``).
    plan = price_query._jsq.streamingQuery().logicalPlan().toString()
    assert "Kafka" in plan
    assert "from_json" not in plan


def test_asynchronous_progress_tracking_is_on_by_default_and_can_be_turned_off():
    from spark.config import load
    from spark.jobs.query import async_progress_options

    options = async_progress_options(load({"SPARK_ASYNC_PROGRESS_INTERVAL_MS": "500"}))
    assert options["asyncProgressTrackingEnabled"] == "true"
    assert options["asyncProgressTrackingCheckpointIntervalMs"] == "500"
    assert async_progress_options(load({"SPARK_ASYNC_PROGRESS": "false"})) == {}
