"""Subscriber channels through the real command topic, Spark reducers and Redis pub-sub."""

from __future__ import annotations

import secrets
import time
from decimal import Decimal

import orjson
import pytest
from confluent_kafka import Consumer, TopicPartition
from django.conf import settings

from reducers import topics
from reducers.schemas import MarketDefinition
from reducers.subscriptions import QuerySpec, StreamCommand, SubscriptionSpec, shared_channel_id, spec_from_json
from store import keys
from tests.conftest import wait_for
from tests.factories import market_ids_define, raw_price_update

pytestmark = pytest.mark.integration


def now_ms() -> int:
    return int(time.time() * 1000)


def send(producer, topic: str, key: bytes, value: bytes | None) -> None:
    producer.produce(topic, key=key, value=value)
    producer.flush(10)


def command(producer, kind: str, channel: str, spec: dict | None = None, user: int = 7) -> None:
    cmd = StreamCommand(
        type=kind, channel_id=channel, user_id=user, spec=spec_from_json(spec) if spec else None, ts=now_ms()
    )
    send(producer, topics.commands(), cmd.key(), cmd.encode())


def price(producer, market_id: int, seq: int, *prices: str, status: str = "open") -> None:
    update = raw_price_update(
        market_id=market_id, seq=seq, prices=tuple((i + 1, p) for i, p in enumerate(prices)), status=status
    )
    send(producer, topics.prices(), update.key(), update.encode())


def definition(producer, market_id: int, *, sport: str, event_status: str, status: str = "open", version: int = 1):
    record = MarketDefinition(
        market_id=market_id,
        version=version,
        event_id=market_id,
        sport=sport,
        competition="Test",
        event_name=f"Event {market_id}",
        kind="match_winner",
        name="Match winner",
        status=status,
        event_status=event_status,
        starts_at=now_ms() + 3_600_000,
        selections=((1, "A"), (2, "B")),
        ts=now_ms(),
    )
    send(producer, topics.markets(), record.key(), record.encode())


def stored_seq(redis_client, market_id: int) -> int | None:
    raw = redis_client.hget(keys.market_state(market_id), "seq")
    return int(raw) if raw is not None else None


class Frames:
    """Collects one channel's frames from Redis pub-sub."""

    def __init__(self, redis_client, channel: str) -> None:
        self.pubsub = redis_client.pubsub(ignore_subscribe_messages=True)
        self.pubsub.subscribe(keys.subscriber_channel(channel))
        self.frames: list[dict] = []

    def poll(self) -> list[dict]:
        while (message := self.pubsub.get_message(timeout=0.05)) is not None:
            self.frames.append(orjson.loads(message["data"]))
        return self.frames

    def wait(self, predicate, what: str) -> list[dict]:
        return wait_for(lambda: predicate(self.poll()) and self.frames, what=what)


def new_channel() -> str:
    return secrets.token_urlsafe(24)


def test_begin_stream_sends_the_image_then_deltas_without_gaps(reducers_running, producer, redis_client):
    market_a, market_b = 700_001, 700_002
    market_ids_define(redis_client, market_a, market_b)
    price(producer, market_a, 1, "2.00", "1.90")
    wait_for(lambda: stored_seq(redis_client, market_a) == 1, what="first price applied")

    channel = new_channel()
    frames = Frames(redis_client, channel)
    command(producer, "subscribe", channel, {"view": "markets", "markets": [market_a, market_b]})
    wait_for(lambda: redis_client.exists(keys.channel_meta(channel)), what="subscription stored")
    price(producer, market_a, 2, "2.10", "1.80")
    wait_for(lambda: stored_seq(redis_client, market_a) == 2, what="price before begin applied")
    assert frames.poll() == [], "nothing is streamed before begin"

    command(producer, "begin", channel)
    image = frames.wait(lambda f: len(f) >= 1, "the image")[0]
    assert image["type"] == "view.image"
    assert image["seq"] == 1
    assert [(m["market_id"], m["seq"]) for m in image["markets"]] == [(market_a, 2)]

    for seq in range(3, 8):
        price(producer, market_a, seq, f"2.{seq}0", "1.70")
    price(producer, market_b, 1, "3.00", "1.40")
    frames.wait(
        lambda f: (
            any(m["market_id"] == market_a and m["seq"] == 7 for fr in f for m in fr["markets"])
            and any(m["market_id"] == market_b for fr in f for m in fr["markets"])
        ),
        "the deltas",
    )
    seqs = [f["seq"] for f in frames.frames]
    assert seqs == list(range(1, len(seqs) + 1)), "channel sequence has no gap and no duplicate"
    assert all(f["type"] == "view.delta" for f in frames.frames[1:])
    final: dict[int, dict] = {}
    for frame in frames.frames:
        for market in frame["markets"]:
            if market["seq"] > final.get(market["market_id"], {"seq": 0})["seq"]:
                final[market["market_id"]] = market
    assert final[market_a]["selections"][0]["price"] == "2.70"
    log = [orjson.loads(x) for x in redis_client.lrange(keys.channel_log(channel), 0, -1)]
    assert [f["seq"] for f in reversed(log)] == seqs, "the resume log holds the same frames"


def test_slip_view_carries_combined_odds_and_potential_return(reducers_running, producer, redis_client):
    market_a, market_b = 700_011, 700_012
    market_ids_define(redis_client, market_a, market_b)
    price(producer, market_a, 1, "2.00", "1.80")
    price(producer, market_b, 1, "1.50", "2.50")
    wait_for(lambda: stored_seq(redis_client, market_b) == 1, what="prices applied")
    channel = new_channel()
    frames = Frames(redis_client, channel)
    spec = {
        "view": "slip",
        "slip": [{"selection_id": 1, "market_id": market_a}, {"selection_id": 2, "market_id": market_b}],
        "stake": "10.00",
    }
    command(producer, "subscribe", channel, spec)
    command(producer, "begin", channel)
    image = frames.wait(lambda f: len(f) >= 1, "slip image")[0]
    assert image["slip"]["combined_odds"] == "5.00"
    assert image["slip"]["potential_return"] == "50.00"
    assert image["slip"]["placeable"] is True

    price(producer, market_b, 2, "1.50", "2.50", status="suspended")
    delta = frames.wait(lambda f: len(f) >= 2, "slip delta")[1]
    assert delta["slip"]["placeable"] is False
    assert [leg["suspended"] for leg in delta["slip"]["legs"]] == [False, True]


def test_unsubscribe_cleans_both_maps(reducers_running, producer, redis_client):
    markets = [700_021, 700_022]
    channel = new_channel()
    command(producer, "subscribe", channel, {"view": "markets", "markets": markets})
    wait_for(lambda: redis_client.scard(keys.channel_markets(channel)) == 2, what="channel → markets")
    assert all(redis_client.sismember(keys.market_channels(m), channel) for m in markets)

    command(producer, "unsubscribe", channel)
    wait_for(lambda: not redis_client.exists(keys.channel_meta(channel)), what="channel removed")
    assert not redis_client.exists(keys.channel_markets(channel))
    assert not any(redis_client.sismember(keys.market_channels(m), channel) for m in markets)
    assert redis_client.zscore(keys.channels_index(), channel) is None


def test_a_querys_shared_channel_takes_markets_that_start_matching_and_lets_go_of_those_that_stop(
    reducers_running, producer, redis_client
):
    first, later, football = 700_031, 700_032, 700_033
    definition(producer, first, sport="tennis", event_status="in_play")
    definition(producer, football, sport="football", event_status="in_play")
    definition(producer, later, sport="tennis", event_status="scheduled")
    wait_for(lambda: redis_client.sismember(keys.market_definitions_index(), later), what="definitions in table")

    query = QuerySpec(sport="tennis", in_play=True)
    channel = shared_channel_id(query)
    frames = Frames(redis_client, channel)
    share = StreamCommand(
        type="share", channel_id=channel, user_id=None, spec=SubscriptionSpec(view="markets", query=query), ts=now_ms()
    )
    send(producer, topics.commands(), share.key(), share.encode())
    image = frames.wait(lambda f: len(f) >= 1, "query image")[0]
    assert (image["type"], image["image"], image["markets"]) == ("view.query", True, [first])

    definition(producer, later, sport="tennis", event_status="in_play", version=2)
    joined = frames.wait(lambda f: len(f) >= 2, "the market joining")[1]
    assert (joined["seq"], joined["added"], joined["removed"]) == (2, [later], [])
    definition(producer, first, sport="tennis", event_status="finished", version=2)
    left = frames.wait(lambda f: len(f) >= 3, "the market leaving")[2]
    assert (left["seq"], left["added"], left["removed"]) == (3, [], [first])
    assert redis_client.smembers(keys.channel_markets(channel)) == {str(later).encode()}
    assert not redis_client.sismember(keys.market_channels(later), channel), "prices never route to it"
    assert football not in image["markets"]


def test_market_table_suspension_makes_prices_untradable(reducers_running, producer, redis_client):
    market_id = 700_041
    definition(producer, market_id, sport="football", event_status="in_play", status="suspended")
    wait_for(lambda: redis_client.hget(keys.market_definition(market_id), "status") == b"suspended", what="table")
    price(producer, market_id, 1, "2.00", "1.80")
    wait_for(lambda: stored_seq(redis_client, market_id) == 1, what="price applied")
    state = orjson.loads(redis_client.hget(keys.market_state(market_id), "state"))
    assert state["tradable"] is False
    assert state["status"] == "suspended"


def test_tombstone_removes_the_market_from_the_table(reducers_running, producer, redis_client):
    market_id = 700_051
    definition(producer, market_id, sport="football", event_status="scheduled")
    wait_for(lambda: redis_client.sismember(keys.market_definitions_index(), market_id), what="definition")
    send(producer, topics.markets(), str(market_id).encode(), None)
    wait_for(lambda: not redis_client.sismember(keys.market_definitions_index(), market_id), what="tombstone")
    assert redis_client.hget(keys.market_definition(market_id), "status") == b"closed"
    price(producer, market_id, 1, "2.00", "1.80")
    wait_for(lambda: stored_seq(redis_client, market_id) == 1, what="late price applied")
    assert orjson.loads(redis_client.hget(keys.market_state(market_id), "state"))["tradable"] is False


def test_processed_offsets_are_committed_to_the_reducer_consumer_group(reducers_running, producer, redis_client):
    market_ids_define(redis_client, 700_061)
    price(producer, 700_061, 1, "2.00", "1.80")
    wait_for(lambda: stored_seq(redis_client, 700_061) == 1, what="price applied")
    consumer = Consumer(
        {"bootstrap.servers": settings.KAFKA_BOOTSTRAP_SERVERS, "group.id": topics.reducer_group("prices")}
    )
    try:
        metadata = consumer.list_topics(topics.prices(), timeout=10)
        partitions = [TopicPartition(topics.prices(), p) for p in metadata.topics[topics.prices()].partitions]

        def caught_up() -> bool:
            committed = {tp.partition: tp.offset for tp in consumer.committed(partitions, timeout=10)}
            log_end = {tp.partition: consumer.get_watermark_offsets(tp, timeout=10)[1] for tp in partitions}
            return all(max(committed[p], 0) == log_end[p] for p in log_end)

        wait_for(caught_up, what="committed offsets equal to log-end offsets")
    finally:
        consumer.close()
    lag = orjson.loads(redis_client.get(keys.reducer_lag("prices")))
    assert lag["partitions"], "lag is reported per partition"
    assert {p["topic"] for p in lag["partitions"]} == {topics.prices()}
    assert Decimal(str(lag["partitions"][0]["seconds"])) >= 0
