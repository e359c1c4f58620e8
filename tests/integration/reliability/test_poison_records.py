"""Malformed records on every topic the reducers read: each is a dead letter with its reason,
and every query keeps running and applying the records after it.

Runs the reducers' queries in micro-batch mode against the real Kafka, Redis and Spark.
"""

from __future__ import annotations

import secrets
import time
from decimal import Decimal

import orjson
import pytest

from reducers import topics
from reducers.schemas import BetEvent, BetLeg
from reducers.subscriptions import StreamCommand, spec_from_json
from store import keys
from tests.conftest import wait_for
from tests.factories import definition_build, market_ids_define, raw_price_update
from tests.integration.streaming.dead_letters import dead_letter_of

pytestmark = pytest.mark.integration


def now_ms() -> int:
    return int(time.time() * 1000)


def produce(producer, topic: str, key: bytes | None, value: bytes | None) -> None:
    producer.produce(topic, key=key, value=value)
    producer.flush(10)


def assert_dead_lettered(source: str, key: bytes | None, value: bytes | None, reason: str) -> None:
    headers = dict(dead_letter_of(value, source=source, key=key).headers())
    assert headers["reason"] == reason.encode(), headers
    assert headers["origin"].decode().startswith(f"{source}/")
    assert headers["detail"]


def assert_every_query_runs(reducers_running) -> None:
    stopped = {name: str(q.exception()) for name, q in reducers_running.items() if not q.isActive}
    assert not stopped, f"queries stopped: {stopped}"


def channel_id() -> str:
    return secrets.token_urlsafe(24)


def command_of(kind: str, channel: str, **fields) -> bytes:
    return orjson.dumps({"v": 1, "type": kind, "channel_id": channel, "user_id": 7, "ts": now_ms(), **fields})


def test_malformed_commands_are_dead_letters_and_later_commands_still_apply(reducers_running, producer, redis_client):
    channel = channel_id()
    poison = [
        (command_of("subscribe", channel), "missing_field"),  # a subscribe without its spec
        (command_of("change", channel, spec={"view": "markets", "markets": "all"}), "bad_field"),
        (command_of("begin", channel, resync="yes"), "bad_field"),
        (b"\x00\xff binary", "bad_json"),
        (b'["subscribe"]', "bad_json"),
        (b'{"v": 1, "type": "begin", "channel_id": "x", "user_id": 1E+99999999999999999999, "ts": 1}', "bad_json"),
        (None, "empty"),
    ]
    for value, _ in poison:
        produce(producer, topics.commands(), channel.encode(), value)
    # A channel whose stored spec was damaged: its begin decodes but cannot be applied.
    damaged = channel_id()
    redis_client.hset(keys.channel_meta(damaged), mapping={"user": 7, "spec": b"{not json", "status": "pending"})
    begin_damaged = command_of("begin", damaged)
    produce(producer, topics.commands(), damaged.encode(), begin_damaged)
    # After all of that, a good subscribe and begin on the same partition.
    market_ids_define(redis_client, 930_001)
    spec = spec_from_json({"view": "markets", "markets": [930_001]})
    for kind in ("subscribe", "begin"):
        cmd = StreamCommand(
            type=kind, channel_id=channel, user_id=7, spec=spec if kind == "subscribe" else None, ts=now_ms()
        )
        produce(producer, topics.commands(), cmd.key(), cmd.encode())

    wait_for(
        lambda: redis_client.hget(keys.channel_meta(channel), "status") == b"streaming",
        timeout=90,
        what="the good commands after the poison to apply",
    )
    assert_every_query_runs(reducers_running)
    for value, reason in poison:
        assert_dead_lettered(topics.commands(), channel.encode(), value, reason)
    assert_dead_lettered(topics.commands(), damaged.encode(), begin_damaged, "apply_failed")
    counted = redis_client.hgetall(keys.counter("dead_letters"))
    assert int(counted[b"command_missing_field"]) >= 1
    assert int(counted[b"command_apply_failed"]) >= 1


def market_record(market_id: int, **overrides) -> bytes:
    record = orjson.loads(definition_build(market_id).encode())
    record.update(overrides)
    return orjson.dumps(record)


def test_malformed_market_records_are_dead_letters_and_later_definitions_still_apply(
    reducers_running, producer, redis_client
):
    market_id = 930_101
    poison = [
        (str(market_id).encode(), market_record(market_id, selections=[1, 2]), "bad_field"),
        (str(market_id + 1).encode(), market_record(market_id), "bad_key"),  # keyed as another market
        (b"not-an-id", market_record(market_id), "bad_key"),
        (str(market_id).encode(), b"{truncated", "bad_json"),
        (str(market_id).encode(), market_record(market_id, v=9), "bad_version"),
    ]
    for key, value, _ in poison:
        produce(producer, topics.markets(), key, value)
    good = definition_build(market_id, version=3)
    produce(producer, topics.markets(), good.key(), good.encode())

    wait_for(
        lambda: redis_client.hget(keys.market_definition(market_id), "version") == b"3",
        timeout=90,
        what="the good definition after the poison to apply",
    )
    assert_every_query_runs(reducers_running)
    for key, value, reason in poison:
        assert_dead_lettered(topics.markets(), key, value, reason)


def bet_record(**overrides) -> bytes:
    record = {
        "v": 1,
        "event_id": secrets.token_hex(8),
        "type": "placed",
        "bet_id": 1,
        "user_id": 1,
        "stake": "10.00",
        "potential_return": "25.00",
        "legs": [{"selection_id": 930_201, "market_id": 1, "event_id": 1, "price": "2.50"}],
        "ts": 1,
    }
    record.update(overrides)
    return orjson.dumps(record)


def test_malformed_bet_events_are_dead_letters_and_later_bets_still_count(reducers_running, producer, redis_client):
    selection = 930_202
    poison = [
        bet_record(stake="1E+999999999999999999"),  # a number Decimal parses but pence cannot hold
        bet_record(potential_return="99999999999999999999.00"),
        bet_record(stake="0.001"),
        bet_record(legs=[1]),
        b"\xff",
    ]
    for value in poison:
        produce(producer, topics.bets(), b"1", value)
    good = BetEvent(
        event_id=secrets.token_hex(8),
        type="placed",
        bet_id=2,
        user_id=1,
        stake=Decimal("10.00"),
        potential_return=Decimal("30.00"),
        legs=(BetLeg(selection_id=selection, market_id=1, event_id=1, price=Decimal("3.00")),),
        ts=1,
    )
    produce(producer, topics.bets(), good.key(), good.encode())

    wait_for(lambda: redis_client.hget(keys.liability(selection), "pence") == b"2000", timeout=90, what="the good bet")
    assert_every_query_runs(reducers_running)
    for value in poison:
        headers = dict(dead_letter_of(value, source=topics.bets()).headers())
        assert headers["reason"] in (b"bad_field", b"bad_json")
    # Nothing of the refused bets reached the liability of their selection.
    assert redis_client.hget(keys.liability(930_201), "pence") is None


def test_malformed_prices_are_dead_letters_and_later_prices_still_apply(reducers_running, producer, redis_client):
    market_id = 930_301
    market_ids_define(redis_client, market_id)
    valid = raw_price_update(market_id=market_id, seq=4, prices=((1, "2.40"),)).encode()
    poison = [
        (b"\xff\xfe\xfd", "bad_avro"),
        (b"[]", "bad_avro"),
        (b'{"v": 1, "market_id": 930301, "seq": 1}', "bad_avro"),  # JSON: the topic carries Avro
        (valid + b"\x00", "bad_avro"),  # bytes after the record
        (valid[:-2], "bad_avro"),
        (raw_price_update(market_id=market_id, seq=6, prices=((1, "1.00"),)).encode(), "price_out_of_range"),
    ]
    for value, _ in poison:
        produce(producer, topics.prices(), str(market_id).encode(), value)
    update = raw_price_update(market_id=market_id, seq=5, prices=((1, "2.50"),))
    produce(producer, topics.prices(), update.key(), update.encode())

    wait_for(lambda: redis_client.hget(keys.market_state(market_id), "seq") == b"5", timeout=90, what="the good price")
    assert_every_query_runs(reducers_running)
    for value, reason in poison:
        assert_dead_lettered(topics.prices(), str(market_id).encode(), value, reason)


def test_a_channel_with_a_damaged_stored_spec_is_skipped_by_the_fan_out_and_the_query_stage(
    reducers_running, producer, redis_client
):
    from store.channels import ChannelStore

    market_id = 930_401
    market_ids_define(redis_client, market_id)
    damaged, healthy = channel_id(), channel_id()
    for channel in (damaged, healthy):
        redis_client.sadd(keys.market_channels(market_id), channel)
        redis_client.sadd(keys.channel_markets(channel), market_id)
        redis_client.sadd(keys.query_channels(), channel)
    redis_client.hset(keys.channel_meta(damaged), mapping={"user": 7, "spec": b"{not json", "status": "streaming"})
    spec = orjson.dumps({"view": "markets", "markets": [market_id], "query": None})
    redis_client.hset(keys.channel_meta(healthy), mapping={"user": 7, "spec": spec, "status": "streaming", "seq": 0})

    store = ChannelStore(redis_client)
    # Neither is a readable query (the session's pages may hold shared query channels of their own).
    ours = {damaged, healthy}
    assert not ours & set(store.shared_queries())
    assert not ours & set(store.refresh_windows())
    assert not ours & set(store.refresh_shared({market_id: (None, None)}))
    update = raw_price_update(market_id=market_id, seq=1, prices=((1, "2.50"),))
    produce(producer, topics.prices(), update.key(), update.encode())
    wait_for(lambda: redis_client.hget(keys.market_state(market_id), "seq") == b"1", timeout=90, what="the price")
    wait_for(
        lambda: int(redis_client.hget(keys.channel_meta(healthy), "seq") or 0) >= 1,
        timeout=30,
        what="the healthy channel's delta",
    )
    assert_every_query_runs(reducers_running)
