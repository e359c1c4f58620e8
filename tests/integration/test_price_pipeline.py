"""Kafka → Spark (micro-batch) → Redis state and pub-sub, with the real services."""

from __future__ import annotations

import orjson
import pytest
from confluent_kafka import Consumer
from django.conf import settings

from reducers import keys, topics
from tests.conftest import wait_for
from tests.factories import raw_price_update

pytestmark = pytest.mark.integration


def stored_seq(redis_client, market_id: int) -> int | None:
    raw = redis_client.hget(keys.market_state(market_id), "seq")
    return int(raw) if raw is not None else None


def test_produced_prices_reach_redis_state_and_pubsub(price_query, producer, redis_client):
    market_id = 900_001
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
    producer.produce(topics.prices(), key=b"900010", value=b'{"v":1,"market_id":"oops"')
    good = raw_price_update(market_id=market_id, seq=1, prices=((1, "4.00"),))
    producer.produce(topics.prices(), key=good.key(), value=good.encode())
    producer.flush(10)
    wait_for(lambda: stored_seq(redis_client, market_id) == 1, what="good record applied")

    consumer = Consumer(
        {"bootstrap.servers": settings.KAFKA_BOOTSTRAP_SERVERS, "group.id": "dlq-test", "auto.offset.reset": "earliest"}
    )
    consumer.subscribe([topics.prices_dead_letter()])
    try:
        message = wait_for(lambda: consumer.poll(0.5), what="dead letter")
        assert message.error() is None
        headers = dict(message.headers())
        assert headers["reason"] == b"bad_json"
        assert message.value() == b'{"v":1,"market_id":"oops"'
    finally:
        consumer.close()
    assert int(redis_client.hget(keys.counter("dead_letters"), "bad_json")) >= 1
