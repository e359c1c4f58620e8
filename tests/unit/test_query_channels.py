"""Shared query channels on an in-memory Redis that runs the store's scripts: one channel per
distinct query, made by a ``share`` command, kept up to date from the markets table's own
changes and, for a kick-off window, from the markets on the window's edge as time passes."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import orjson
import pytest

from reducers.schemas import MarketDefinition
from reducers.subscriptions import QuerySpec, StreamCommand, SubscriptionSpec, shared_channel_id
from spark.jobs.commands import CommandBatchProcessor
from spark.jobs.markets import MarketTableProcessor
from spark.jobs.prices import PriceBatchProcessor
from store import keys
from store.channels import ChannelStore
from tests.factories import definition_build, raw_price_update
from tests.fakes import FakeDeadLetters, fake_store_client

NOW = int(time.time() * 1000)  # set again as each test starts (the suite may run long after import)
IN_PLAY = QuerySpec(in_play=True, headline=True)
SOON = QuerySpec(starting_within_minutes=60, headline=True)


@pytest.fixture(autouse=True)
def _now() -> None:
    global NOW
    NOW = int(time.time() * 1000)


@pytest.fixture
def store():
    return fake_store_client()


def define(store: Any, *definitions: MarketDefinition) -> dict[str, int]:
    rows = [{"key": d.key(), "value": d.encode(), "partition": 0, "offset": at} for at, d in enumerate(definitions)]
    return MarketTableProcessor(redis_client=store, dead_letters=FakeDeadLetters()).apply_rows(rows)


def market(market_id: int, *, version: int = 1, event_status: str = "scheduled", starts_in_min: int = 30, **more):
    return replace(
        definition_build(market_id, version=version),
        event_status=event_status,
        starts_at=NOW + starts_in_min * 60_000,
        **more,
    )


def share(store: Any, query: QuerySpec, *, offset: int = 0) -> str:
    channel = shared_channel_id(query)
    command = StreamCommand(
        type="share", channel_id=channel, user_id=None, spec=SubscriptionSpec(view="markets", query=query), ts=NOW
    )
    CommandBatchProcessor(redis_client=store, dead_letters=FakeDeadLetters()).process_rows(
        [{"key": command.key(), "value": command.encode(), "partition": 0, "offset": offset}]
    )
    return channel


def logged(store: Any, channel: str) -> list[dict[str, Any]]:
    return [orjson.loads(f) for f in reversed(store.lrange(keys.channel_log(channel), 0, -1))]


def test_a_share_makes_one_channel_holding_what_the_query_matches_and_publishes_its_image(store):
    define(store, market(1, event_status="in_play"), market(2), market(3, event_status="in_play", headline=False))

    channel = share(store, IN_PLAY)
    share(store, IN_PLAY, offset=1)  # asked for again: the same channel, made once

    assert store.smembers(keys.channel_markets(channel)) == {b"1"}
    assert [(f["seq"], f.get("image"), f.get("markets")) for f in logged(store, channel)] == [(1, True, [1])]
    assert store.hget(keys.channel_meta(channel), "view") == b"query"


def test_a_kick_off_moves_a_market_from_the_starting_soon_channel_to_the_in_play_one(store):
    define(store, market(1), market(2, starts_in_min=600))
    soon, live = share(store, SOON), share(store, IN_PLAY, offset=1)
    assert store.smembers(keys.channel_markets(soon)) == {b"1"}

    define(store, market(1, version=2, event_status="in_play"))

    assert logged(store, live)[-1] | {"seq": 0} == {
        "seq": 0,
        "type": "view.query",
        "v": 1,
        "channel": live,
        "added": [1],
        "removed": [],
        "changed": [],
    }
    assert logged(store, soon)[-1]["removed"] == [1]
    assert store.smembers(keys.channel_markets(live)) == {b"1"}
    assert store.smembers(keys.channel_markets(soon)) == set()


def test_a_moved_kick_off_of_a_held_market_is_told_as_changed_and_a_replayed_definition_tells_nothing(store):
    define(store, market(1))
    soon = share(store, SOON)
    define(store, market(1, version=2, starts_in_min=45))
    assert logged(store, soon)[-1]["changed"] == [1]
    frames = len(logged(store, soon))

    define(store, market(1, version=2, starts_in_min=45))  # the same record again

    assert len(logged(store, soon)) == frames


def test_a_tombstone_takes_the_market_out_of_every_query(store):
    define(store, market(1, event_status="in_play"))
    live = share(store, IN_PLAY)
    MarketTableProcessor(redis_client=store, dead_letters=FakeDeadLetters()).apply_rows(
        [{"key": b"1", "value": None, "partition": 0, "offset": 9}]
    )
    assert logged(store, live)[-1]["removed"] == [1]


def test_time_moves_markets_into_and_out_of_a_kick_off_window_reading_only_the_windows_edge(store):
    define(store, market(1, starts_in_min=30), market(2, starts_in_min=90))
    soon = share(store, SOON)
    assert store.smembers(keys.channel_markets(soon)) == {b"1"}

    changes = ChannelStore(store).refresh_windows(now_ms=NOW + 45 * 60_000)  # 2 comes within the hour, 1 starts

    assert (set(changes[soon].added), set(changes[soon].removed)) == ({2}, {1})
    assert store.smembers(keys.channel_markets(soon)) == {b"2"}
    assert ChannelStore(store).refresh_windows(now_ms=NOW + 46 * 60_000) == {}


def test_prices_never_reach_a_shared_channel(store):
    define(store, market(1, event_status="in_play"))
    live = share(store, IN_PLAY)
    update = raw_price_update(market_id=1, seq=1, prices=((1, "2.00"),))
    PriceBatchProcessor(redis_client=store, dead_letters=FakeDeadLetters()).process_rows(
        [{"key": update.key(), "value": update.encode(), "partition": 0, "offset": 0, "kafka_ts": NOW}]
    )
    assert [f["type"] for f in logged(store, live)] == ["view.query"]


def test_after_its_first_look_the_refresher_reads_only_the_markets_that_crossed_a_windows_edge(store):
    define(
        store,
        market(1, starts_in_min=30),
        market(2, starts_in_min=90),
        replace(market(3, starts_in_min=50), headline=False),  # inside the window throughout, never matching
    )
    soon = share(store, SOON)
    refresher = ChannelStore(store)
    read: list[set[int]] = []
    definitions = refresher.markets.definitions

    def reading(market_ids):
        read.append(set(market_ids))
        return definitions(market_ids)

    refresher.markets.definitions = reading  # type: ignore[method-assign]
    assert refresher.refresh_windows(now_ms=NOW) == {}  # the first look: the whole window

    changes = refresher.refresh_windows(now_ms=NOW + 45 * 60_000)  # 2 comes within the hour, 1 starts

    assert (set(changes[soon].added), set(changes[soon].removed)) == ({2}, {1})
    assert read == [{3}, {1, 2}]
    assert refresher.refresh_windows(now_ms=NOW + 46 * 60_000) == {}
    assert read[-1] == set()
