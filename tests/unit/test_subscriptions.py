from dataclasses import replace
from decimal import Decimal

import pytest

from reducers.schemas import InvalidRecord, MarketDefinition
from reducers.subscriptions import (
    QuerySpec,
    StreamCommand,
    decode_command,
    map_changes,
    query_matches,
    spec_from_json,
)

NOW = 1_800_000_000_000


BASE = MarketDefinition(
    market_id=1,
    version=1,
    event_id=1,
    sport="football",
    competition="Premier League",
    event_name="A v B",
    kind="match_result",
    name="Match result",
    status="open",
    event_status="scheduled",
    starts_at=NOW + 30 * 60_000,
    selections=((1, "A"),),
    ts=NOW,
)


def definition(**overrides) -> MarketDefinition:
    return replace(BASE, **overrides)


def test_spec_collects_markets_from_list_slip_and_bets():
    spec = spec_from_json(
        {
            "view": "bets",
            "markets": [1, 2, 2],
            "slip": [{"selection_id": 10, "market_id": 3}],
            "bets": [{"bet_id": 5, "stake": "2.00", "legs": [{"selection_id": 11, "market_id": 4, "price": "2.50"}]}],
        }
    )
    assert spec.markets == (1, 2)
    assert spec.explicit_markets() == {1, 2, 3, 4}
    assert spec.bets[0].legs[0][2] == Decimal("2.50")


@pytest.mark.parametrize(
    "raw",
    [
        [],
        {"view": "everything", "markets": [1]},
        {"view": "markets"},
        {"view": "markets", "markets": ["1"]},
        {"view": "markets", "markets": [0]},
        {"view": "slip", "slip": []},
        {"view": "slip", "slip": [{"selection_id": 1}]},
        {"view": "slip", "slip": [{"selection_id": 1, "market_id": 2}], "stake": 10.5},
        {"view": "slip", "slip": [{"selection_id": 1, "market_id": 2}], "stake": "-1"},
        {"view": "markets", "query": {}},
        {"view": "markets", "query": {"sport": "football", "colour": "red"}},
        {"view": "markets", "query": {"starting_within_minutes": 0}},
        {"view": "markets", "markets": list(range(1, 600))},
    ],
)
def test_invalid_spec_is_rejected(raw):
    with pytest.raises(InvalidRecord):
        spec_from_json(raw)


def test_command_round_trips_through_its_encoding():
    command = StreamCommand(
        type="subscribe", channel_id="c" * 32, user_id=3, spec=spec_from_json({"markets": [9]}), ts=NOW
    )
    decoded = decode_command(command.encode())
    assert decoded.spec is not None
    assert decoded.spec.markets == (9,)
    assert (decoded.type, decoded.channel_id, decoded.user_id) == ("subscribe", "c" * 32, 3)


@pytest.mark.parametrize(
    "raw",
    [
        b"nope",
        b'{"v": 2}',
        b'{"v": 1, "type": "explode", "channel_id": "cccccccccccccccc", "user_id": 1, "ts": 1}',
        b'{"v": 1, "type": "begin", "channel_id": "short", "user_id": 1, "ts": 1}',
    ],
)
def test_malformed_command_is_rejected(raw):
    with pytest.raises(InvalidRecord):
        decode_command(raw)


def test_query_matches_sport_and_kick_off_window():
    query = QuerySpec(sport="football", starting_within_minutes=60)
    assert query_matches(query, definition(), now_ms=NOW)
    assert not query_matches(query, definition(starts_at=NOW + 90 * 60_000), now_ms=NOW)
    assert not query_matches(query, definition(sport="tennis"), now_ms=NOW)
    assert not query_matches(query, definition(event_status="in_play"), now_ms=NOW)


def test_a_market_starts_matching_when_time_passes():
    query = QuerySpec(sport="football", starting_within_minutes=60)
    later = definition(starts_at=NOW + 90 * 60_000)
    assert not query_matches(query, later, now_ms=NOW)
    assert query_matches(query, later, now_ms=NOW + 31 * 60_000)


def test_in_play_query_and_closed_markets():
    query = QuerySpec(sport="tennis", in_play=True)
    assert query_matches(query, definition(sport="tennis", event_status="in_play"), now_ms=NOW)
    assert not query_matches(query, definition(sport="tennis", event_status="scheduled"), now_ms=NOW)
    assert not query_matches(query, definition(sport="tennis", event_status="in_play", status="closed"), now_ms=NOW)


def test_map_changes_name_what_to_add_and_remove():
    assert map_changes(old={1, 2, 3}, new={2, 3, 4}) == ({4}, {1})
    assert map_changes(old=set(), new=set()) == (set(), set())
