"""Every Kafka record round-trips through its one definition (``reducers/schemas.py``, stream
commands in ``reducers/subscriptions.py``), and a malformed record is refused with the reason and
the words the dead-letter topic records."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import orjson
import pytest

from reducers.schemas import (
    BetEvent,
    BetLeg,
    Incident,
    InvalidRecord,
    MarketDefinition,
    MatchClock,
    MatchStateUpdate,
    PriceUpdate,
    SelectionPrice,
    decode_bet_event,
    decode_market_definition,
    decode_match_state,
    decode_price_update,
    decode_price_update_json,
)
from reducers.subscriptions import SlipLeg, StreamCommand, SubscriptionSpec, decode_command

CHANNEL = "c" * 24

RECORDS: list[tuple[Any, Any]] = [
    (
        PriceUpdate(
            10, 3, "open", (SelectionPrice(1, Decimal("2.50")), SelectionPrice(2, Decimal("1.6"), "removed")), 1, 2
        ),
        decode_price_update,
    ),
    (
        PriceUpdate(10, 4, "suspended", (SelectionPrice(1, Decimal("1000")),), 1, 2, source="trader"),
        decode_price_update,
    ),
    (
        MarketDefinition(
            market_id=7,
            version=2,
            event_id=3,
            sport="football",
            competition="League",
            event_name="A v B",
            kind="match_result",
            name="Match result",
            status="suspended",
            event_status="in_play",
            starts_at=5,
            selections=((1, "Home"), (2, "Away")),
            ts=9,
        ),
        decode_market_definition,
    ),
    (
        BetEvent(
            event_id="7:placed",
            type="placed",
            bet_id=7,
            user_id=3,
            stake=Decimal("10.00"),
            potential_return=Decimal("47.75"),
            legs=(BetLeg(selection_id=101, market_id=42, event_id=9, price=Decimal("2.50")),),
            ts=1,
        ),
        decode_bet_event,
    ),
    (
        MatchStateUpdate(
            event_id=17,
            seq=5,
            sport="basketball",
            status="in_play",
            period=2,
            score={"home": 40, "away": 38},
            clock=MatchClock(running=True, elapsed_s=125, at=1, direction="down", limit_s=600, rate=4),
            incidents=(Incident(kind="basket", side="home", period=2, at=1),),
            event_ts=1,
            produce_ts=2,
        ),
        decode_match_state,
    ),
    (
        MatchStateUpdate(
            event_id=18,
            seq=6,
            sport="tennis",
            status="in_play",
            period=2,
            score={"sets": [1, 0], "games": [2, 1], "points": ["15", "AD"], "set_games": [[6, 4]]},
            clock=None,
            event_ts=1,
            produce_ts=2,
        ),
        decode_match_state,
    ),
    (
        StreamCommand(
            type="subscribe",
            channel_id=CHANNEL,
            user_id=3,
            spec=SubscriptionSpec(view="slip", slip=(SlipLeg(101, 42),), stake=Decimal("10.00")),
            ts=1,
        ),
        decode_command,
    ),
    (
        StreamCommand(
            type="begin", channel_id=CHANNEL, user_id=3, spec=None, ts=1, resync=True, since={42: (17, "open")}
        ),
        decode_command,
    ),
    (
        StreamCommand(type="unsubscribe", channel_id=CHANNEL, user_id=3, spec=None, ts=1, reason="expired"),
        decode_command,
    ),
]


@pytest.mark.parametrize(("record", "decode"), RECORDS, ids=lambda r: type(r).__name__)
def test_every_record_round_trips_through_its_definition(record, decode):
    encoded = record.encode()
    assert decode(encoded) == record
    assert decode(encoded).encode() == encoded
    as_json = record.encode_json() if isinstance(record, PriceUpdate) else encoded  # prices travel in Avro
    assert orjson.loads(as_json)["v"] == 1, "the schema version is always on the wire"


def test_a_price_record_round_trips_through_its_json_form_too():
    for record, _ in RECORDS[:2]:
        assert decode_price_update_json(record.encode_json()) == record


def test_amounts_and_prices_travel_as_decimal_strings():
    price, _ = RECORDS[0]
    bet, _ = RECORDS[3]
    assert orjson.loads(price.encode_json())["selections"][0] == {"id": 1, "price": "2.50", "status": "active"}
    body = orjson.loads(bet.encode())
    assert (body["stake"], body["potential_return"], body["legs"][0]["price"]) == ("10.00", "47.75", "2.50")


def test_a_definitions_selections_are_named_objects_on_the_wire():
    definition, _ = RECORDS[2]
    assert orjson.loads(definition.encode())["selections"] == [{"id": 1, "name": "Home"}, {"id": 2, "name": "Away"}]


def test_a_commands_optional_parts_are_left_out_when_empty():
    begin = orjson.loads(StreamCommand(type="begin", channel_id=CHANNEL, user_id=3, spec=None, ts=1).encode())
    assert begin == {
        "v": 1,
        "type": "begin",
        "channel_id": CHANNEL,
        "user_id": 3,
        "spec": None,
        "resync": False,
        "ts": 1,
    }


PRICE = {
    "v": 1,
    "market_id": 10,
    "seq": 3,
    "status": "open",
    "selections": [{"id": 1, "price": "2.50", "status": "active"}],
    "event_ts": 1,
    "produce_ts": 2,
}
BET = {
    "v": 1,
    "event_id": "1:placed",
    "type": "placed",
    "bet_id": 1,
    "user_id": 1,
    "stake": "10.00",
    "potential_return": "25.00",
    "legs": [{"selection_id": 1, "market_id": 1, "event_id": 1, "price": "2.50"}],
    "ts": 1,
}
MATCH = {
    "v": 1,
    "event_id": 17,
    "seq": 5,
    "sport": "football",
    "status": "in_play",
    "period": 2,
    "score": {"home": 1, "away": 0},
    "clock": None,
    "incidents": [],
    "event_ts": 1,
    "produce_ts": 2,
}
DEFINITION = {
    "v": 1,
    "market_id": 7,
    "version": 1,
    "event_id": 7,
    "sport": "football",
    "competition": "L",
    "event_name": "A v B",
    "kind": "match_result",
    "name": "Match result",
    "status": "open",
    "event_status": "scheduled",
    "starts_at": 5,
    "selections": [{"id": 1, "name": "Home"}],
    "ts": 9,
}
BEGIN = {"v": 1, "type": "begin", "channel_id": CHANNEL, "user_id": 1, "ts": 1}
DECODERS = {
    "price": (PRICE, decode_price_update_json),
    "bet": (BET, decode_bet_event),
    "match": (MATCH, decode_match_state),
    "definition": (DEFINITION, decode_market_definition),
    "command": (BEGIN, decode_command),
}
NO_VERSION = object()


@pytest.mark.parametrize(
    ("kind", "changes", "reason", "detail"),
    [
        ("price", {"v": 2}, "bad_version", "expected v=1, got 2"),
        ("price", {"v": NO_VERSION}, "bad_version", "expected v=1, got None"),
        ("price", {"market_id": True}, "bad_field", "market_id must be an integer"),
        ("price", {"seq": 0}, "bad_field", "seq must be positive"),
        ("price", {"selections": [{"id": 1, "price": "2.50"}] * 65}, "bad_field", "at most 64 selections"),
        ("price", {"selections": []}, "bad_field", "selections must be a non-empty list"),
        ("price", {"selections": [1]}, "bad_field", "selection must be an object"),
        (
            "price",
            {"selections": [{"id": 1, "price": "2.505", "status": "gone"}]},
            "bad_field",
            "selection status unknown",
        ),
        ("price", {"selections": [{"id": 0, "price": "0.5"}]}, "bad_field", "id must be positive"),
        ("price", {"selections": [{"id": 1, "price": "1e9"}]}, "price_out_of_range", "1E+9 not within 1.01..1000"),
        ("price", {"selections": [{"id": 1, "price": 2.5}]}, "bad_price", "price must be a decimal string"),
        ("price", {"selections": [{"id": 1, "price": "2.555"}]}, "bad_price", "at most two decimal places"),
        ("price", {"source": None, "event_ts": None}, "bad_field", "source must be one of feed, trader, replay"),
        ("price", {"produce_ts": 1.5}, "bad_field", "produce_ts must be an integer"),
        ("price", {"seq": "one"}, "bad_field", "seq must be an integer"),
        ("bet", {"event_id": "", "legs": []}, "bad_field", "event_id must be a string of at most 64 characters"),
        ("bet", {"stake": "1.001"}, "bad_field", "stake must be in pence (two decimal places)"),
        ("bet", {"legs": ["x"]}, "bad_field", "leg must be an object"),
        ("bet", {"type": "lost"}, "bad_field", "type unknown"),
        (
            "match",
            {"sport": "tennis", "score": {"sets": [1, 0], "games": [2, 1], "points": ["15", "50"]}},
            "bad_field",
            "points must be a pair of 0, 15, 30, 40, AD (a tie-break's: counts)",
        ),
        (
            "match",
            {"sport": "basketball", "clock": {"running": True, "elapsed_s": 5, "at": 1, "direction": "down"}},
            "bad_field",
            "a countdown clock needs limit_s",
        ),
        (
            "match",
            {"incidents": [{"kind": "goal", "side": "left", "period": 1, "at": 1}]},
            "bad_field",
            "incident side must be home, away or empty",
        ),
        (
            "match",
            {"sport": "tennis", "clock": {"running": True, "elapsed_s": 5, "at": 1}},
            "bad_field",
            "tennis has no match clock",
        ),
        ("definition", {"sport": 5}, "bad_field", "sport must be a string"),
        ("definition", {"selections": [{"id": -1, "name": "Home"}]}, "bad_field", "id must be positive"),
        ("definition", {"selections": "all"}, "bad_field", "selections must be a list"),
        (
            "command",
            {"type": "subscribe", "spec": {"view": "slip", "slip": []}},
            "bad_field",
            "a slip view needs at least one leg",
        ),
        ("command", {"user_id": 0}, "bad_field", "user_id must be a positive integer id"),
        (
            "command",
            {"since": {"x": [1, "open"]}},
            "bad_field",
            'since must map market ids to [seq, status], e.g. {"42": [17, "open"]}',
        ),
        ("command", {"type": "change"}, "missing_field", "a change command needs its spec"),
    ],
)
def test_a_malformed_record_is_refused_with_its_reason_and_words(kind, changes, reason, detail):
    base, decode = DECODERS[kind]
    record = {**base, **changes}
    if changes.get("v") is NO_VERSION:
        del record["v"]
    with pytest.raises(InvalidRecord) as refused:
        decode(orjson.dumps(record))
    assert (refused.value.reason, refused.value.detail) == (reason, detail)


def test_a_record_that_is_not_json_is_refused_with_the_json_parsers_words():
    with pytest.raises(InvalidRecord) as refused:
        decode_price_update_json(b"{not json")
    assert (refused.value.reason, refused.value.detail) == (
        "bad_json",
        "unexpected character, expected a string key: line 1 column 2 (char 1)",
    )


@pytest.mark.parametrize(
    "raw",
    [
        b'{"v": 1, "market_id": 930301, "seq": 1E+99999999999999999999}',
        b"\xff\xfe\xfd",
        b'{"v": 1, "market_id": 930301, "seq": 1, "note": "\\ud800"}',
    ],
)
def test_what_the_json_parser_cannot_read_is_bad_json_whatever_else_is_wrong(raw):
    with pytest.raises(InvalidRecord) as refused:
        decode_price_update_json(raw)
    assert refused.value.reason == "bad_json"
