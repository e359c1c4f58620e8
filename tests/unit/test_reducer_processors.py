"""The reducers' processors without a broker or a Redis server: raw rows as a Kafka source gives
them, the store on an in-memory Redis that runs its Lua scripts (tests/fakes.py), dead letters
kept in memory. The same processors run against the real services in tests/integration."""

from __future__ import annotations

import dataclasses
from decimal import Decimal
from typing import Any

import orjson
import pytest

from reducers.schemas import PriceUpdate
from reducers.subscriptions import StreamCommand, spec_from_json
from spark.jobs.commands import CommandBatchProcessor
from spark.jobs.liability import LiabilityProcessor
from spark.jobs.prices import QUERY_NAME, PriceBatchProcessor
from store import keys
from tests.factories import bet_event_build, market_ids_define, raw_price_update
from tests.fakes import FakeDeadLetters, FakeWindows, fake_store_client


def raw(value: bytes, *, offset: int, partition: int = 0, key: bytes | None = b"k") -> dict[str, Any]:
    return {
        "key": key,
        "value": value,
        "partition": partition,
        "offset": offset,
        "kafka_ts": 1_700_000_000_000 + offset,
    }


def rows_of(*updates: PriceUpdate | bytes) -> list[dict[str, Any]]:
    return [
        raw(update if isinstance(update, bytes) else update.encode(), offset=offset)
        for offset, update in enumerate(updates)
    ]


@pytest.fixture
def store():
    return fake_store_client()


@pytest.fixture
def dead_letters():
    return FakeDeadLetters()


@pytest.fixture
def windows():
    return FakeWindows()


@pytest.fixture
def prices(store, dead_letters, windows):
    return PriceBatchProcessor(redis_client=store, dead_letters=dead_letters, windows=windows)


def define(store, *market_ids: int) -> None:
    market_ids_define(store, *market_ids, dead_letters=FakeDeadLetters())


def state_of(store, market_id: int) -> dict[str, Any] | None:
    raw_state = store.hget(keys.market_state(market_id), "state")
    return orjson.loads(raw_state) if raw_state is not None else None


def next_message(listener: Any) -> dict[str, Any] | None:
    """The next message published on the listener's channels; the subscription's own
    confirmation is skipped (``get_message`` returns None for it)."""
    for _ in range(3):
        message = listener.get_message(timeout=0.2)
        if message is not None:
            return message
    return None


def update(market_id: int, seq: int, price: str) -> PriceUpdate:
    return raw_price_update(market_id=market_id, seq=seq, prices=((1, price), (2, "1.90")))


def test_a_batch_is_conflated_to_each_markets_newest_price_and_published(prices, store):
    define(store, 1, 2)
    listener = store.pubsub(ignore_subscribe_messages=True)
    listener.subscribe(keys.market_channel(1))

    stats = prices.process_rows(
        rows_of(update(1, 2, "2.20"), update(1, 3, "2.30"), update(1, 1, "2.10"), update(2, 1, "5.00"))
    )

    assert stats == {"records": 4, "rejected": 0, "markets": 2, "applied": 2, "frames": 0}
    state = state_of(store, 1)
    assert state is not None
    assert (state["seq"], state["merged"], state["selections"][0]["price"]) == (3, 3, "2.30")
    published = next_message(listener)
    assert published is not None
    assert orjson.loads(published["data"])["seq"] == 3


def test_a_replayed_batch_changes_nothing(prices, store):
    define(store, 1)
    batch = rows_of(update(1, 1, "2.10"), update(1, 2, "2.20"))
    prices.process_rows(batch)
    before = store.hgetall(keys.market_state(1))

    again = prices.process_rows(batch)

    assert (again["markets"], again["applied"]) == (1, 0)
    assert store.hgetall(keys.market_state(1)) == before


def test_an_older_price_after_a_newer_one_is_not_applied(prices, store):
    define(store, 1)
    prices.process_rows(rows_of(update(1, 5, "5.00")))

    stats = prices.process_rows(rows_of(update(1, 4, "4.00")))

    assert stats["applied"] == 0
    state = state_of(store, 1)
    assert state is not None
    assert (state["seq"], state["selections"][0]["price"]) == (5, "5.00")


def test_a_malformed_record_is_dead_lettered_with_its_reason_and_the_rest_applied(prices, store, dead_letters):
    define(store, 1)

    stats = prices.process_rows(rows_of(b'{"v":1,"market_id":"oops"', update(1, 1, "2.00")))

    assert stats == {"records": 2, "rejected": 1, "markets": 1, "applied": 1, "frames": 0}
    assert dead_letters.reasons() == ["bad_avro"]
    assert dead_letters.sent[0].origin.endswith("/0/0")
    assert dead_letters.flushed == 1
    assert int(store.hget(keys.counter("dead_letters"), "bad_avro")) == 1


def test_the_newest_valid_price_is_applied_when_a_newer_record_is_invalid(prices, store, dead_letters):
    define(store, 1)
    invalid = update(1, 3, "1.00")  # below the lowest price

    prices.process_rows(rows_of(update(1, 2, "2.00"), invalid))

    state = state_of(store, 1)
    assert state is not None
    assert state["seq"] == 2
    assert dead_letters.reasons() == ["price_out_of_range"]


def test_every_price_of_an_unknown_market_is_dead_lettered_and_its_newest_kept(prices, store, dead_letters):
    define(store, 2)

    stats = prices.process_rows(rows_of(update(1, 1, "2.10"), update(1, 2, "2.20"), update(2, 1, "5.00")))

    assert stats == {"records": 3, "rejected": 2, "markets": 1, "applied": 1, "frames": 0}
    assert dead_letters.reasons() == ["unknown_market", "unknown_market"]
    assert state_of(store, 1) is None
    kept = store.hgetall(keys.unknown_market_price(1))
    assert (int(kept[b"seq"]), int(kept[b"merged"])) == (2, 2)


def test_the_kept_price_is_applied_when_the_markets_definition_arrives(prices, store):
    prices.process_rows(rows_of(update(1, 1, "2.10"), update(1, 2, "2.20")))
    assert state_of(store, 1) is None

    define(store, 1)

    state = state_of(store, 1)
    assert state is not None
    assert (state["seq"], state["merged"]) == (2, 2)
    assert not store.exists(keys.unknown_market_price(1))


def test_records_older_than_the_watermark_are_counted_as_late_and_still_applied(prices, store):
    define(store, 1)
    store.set(keys.watermark(QUERY_NAME), 10_000)
    late = dataclasses.replace(update(1, 1, "2.10"), event_ts=5)

    prices.process_rows(rows_of(late, update(1, 2, "2.20")))

    assert int(store.hget(keys.counter("late_records"), QUERY_NAME)) == 1
    state = state_of(store, 1)
    assert state is not None
    assert state["seq"] == 2


def at(update_: PriceUpdate, event_ts: int) -> PriceUpdate:
    return dataclasses.replace(update_, event_ts=event_ts)


def test_each_batch_hands_the_movers_each_markets_first_and_last_snapshot_per_event_time_window(prices, store, windows):
    define(store, 1, 2)
    # Windows of a minute: 60,000 to 119,999 ms and from 120,000 on.
    prices.process_rows(
        rows_of(
            at(update(1, 2, "2.20"), 60_020),
            at(update(1, 1, "2.10"), 60_010),
            b'{"v":1,"market_id":1,"seq":9',
            at(update(1, 3, "2.50"), 120_000),
            at(update(2, 1, "5.00"), 60_500),
        )
    )
    prices.process_rows(rows_of(at(update(1, 4, "2.40"), 61_000)))

    # One partial per market and window of each batch; the malformed record is in none.
    assert [(p.window_start, p.market_id, p.updates) for p in windows.sent] == [
        (60_000, 1, 2),
        (60_000, 2, 1),
        (120_000, 1, 1),
        (60_000, 1, 1),
    ]
    merged = windows.merged()
    first_window = merged[(60_000, 1)]
    assert (first_window.first_seq, first_window.last_seq, first_window.updates) == (1, 4, 3)
    assert first_window.first == ((1, Decimal("2.10")), (2, Decimal("1.90")))
    assert first_window.last == ((1, Decimal("2.40")), (2, Decimal("1.90")))
    assert (merged[(120_000, 1)].first_seq, merged[(120_000, 1)].last_seq) == (3, 3)


# --- subscriber channels: the command processor with the price processor -------------------


def command_row(kind: str, channel: str, *, offset: int, spec: dict[str, Any] | None = None) -> dict[str, Any]:
    command = StreamCommand(
        type=kind, channel_id=channel, user_id=7, spec=spec_from_json(spec) if spec else None, ts=1_700_000_000_000
    )
    return raw(command.encode(), offset=offset, key=command.key())


def channel_frames(listener: Any) -> list[dict[str, Any]]:
    frames = []
    while (message := next_message(listener)) is not None:
        frames.append(orjson.loads(message["data"]))
    return frames


@pytest.fixture
def commands(store, dead_letters):
    return CommandBatchProcessor(redis_client=store, dead_letters=dead_letters)


def test_a_channel_gets_nothing_before_begin_then_its_image_then_deltas_without_gaps(prices, commands, store):
    define(store, 1, 2)
    prices.process_rows(rows_of(update(1, 1, "2.00")))
    channel = "c" * 24
    listener = store.pubsub(ignore_subscribe_messages=True)
    listener.subscribe(keys.subscriber_channel(channel))

    commands.process_rows([command_row("subscribe", channel, offset=0, spec={"view": "markets", "markets": [1, 2]})])
    prices.process_rows(rows_of(update(1, 2, "2.10")))
    assert channel_frames(listener) == []

    commands.process_rows([command_row("begin", channel, offset=1)])
    prices.process_rows(rows_of(update(1, 3, "2.30"), update(2, 1, "3.00")))
    prices.process_rows(rows_of(update(1, 4, "2.40")))
    frames = channel_frames(listener)

    assert [frame["type"] for frame in frames] == ["view.image", "view.delta", "view.delta"]
    assert [frame["seq"] for frame in frames] == [1, 2, 3]
    assert [(m["market_id"], m["seq"]) for m in frames[0]["markets"]] == [(1, 2)]
    assert sorted((m["market_id"], m["seq"]) for m in frames[1]["markets"]) == [(1, 3), (2, 1)]
    assert [(m["market_id"], m["seq"]) for m in frames[2]["markets"]] == [(1, 4)]
    resume_log = [orjson.loads(x) for x in store.lrange(keys.channel_log(channel), 0, -1)]
    assert [frame["seq"] for frame in reversed(resume_log)] == [1, 2, 3]


def test_a_malformed_command_is_dead_lettered_and_the_commands_after_it_are_applied(commands, store, dead_letters):
    define(store, 1)
    channel = "d" * 24
    rows = [
        raw(b'{"v": 1, "type": "subscribe"', offset=0),
        command_row("subscribe", channel, offset=1, spec={"view": "markets", "markets": [1]}),
    ]

    outcomes = commands.process_rows(rows)

    assert outcomes["rejected"] == 1
    assert store.exists(keys.channel_meta(channel))
    assert store.smembers(keys.market_channels(1)) == {channel.encode()}
    assert len(dead_letters.sent) == 1
    assert dead_letters.sent[0].value == rows[0]["value"]
    assert dead_letters.flushed == 1


def test_unsubscribe_removes_the_channel_from_both_maps(commands, store):
    define(store, 1, 2)
    channel = "e" * 24
    commands.process_rows([command_row("subscribe", channel, offset=0, spec={"view": "markets", "markets": [1, 2]})])
    assert store.smembers(keys.market_channels(2)) == {channel.encode()}

    commands.process_rows([command_row("unsubscribe", channel, offset=1)])

    assert not store.exists(keys.channel_meta(channel))
    assert not store.exists(keys.channel_markets(channel))
    assert not store.smembers(keys.market_channels(1))
    assert not store.smembers(keys.market_channels(2))


# --- liability ------------------------------------------------------------------------------


def test_liability_counts_a_redelivered_bet_once_and_subtracts_a_voided_one(store, dead_letters):
    liability = LiabilityProcessor(redis_client=store, dead_letters=dead_letters)
    placed = bet_event_build("placed", event_id="e1", bet_id=1, stake="10.00", legs=((9, "3.00"),))
    events = [placed, placed, bet_event_build("placed", event_id="e2", bet_id=2, stake="5.00", legs=((9, "2.00"),))]
    voided = bet_event_build("voided", event_id="e3", bet_id=1, stake="10.00", legs=((9, "3.00"),))
    rows = [raw(e.encode(), offset=i, key=e.key()) for i, e in enumerate(events)]

    assert liability.process_rows(rows) == {"applied": 2, "duplicates": 1, "rejected": 0}
    assert liability.process_rows([*rows, raw(voided.encode(), offset=3, key=voided.key())]) == {
        "applied": 1,
        "duplicates": 3,
        "rejected": 0,
    }
    assert (int(store.hget(keys.liability(9), "pence")), int(store.hget(keys.liability(9), "bets"))) == (500, 1)
    assert store.zscore(keys.liability_index(), "9") == 500
    assert dead_letters.sent == []
