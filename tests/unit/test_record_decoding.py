"""Malformed records on the command, markets and bets topics are refused with a reason, never
with an exception the reducers do not expect."""

from __future__ import annotations

import orjson
import pytest

from reducers.schemas import InvalidRecord, decode_bet_event, decode_market_definition, decode_market_row
from reducers.subscriptions import decode_command
from tests.factories import definition_build

CHANNEL = "c" * 24


def command(**fields) -> bytes:
    return orjson.dumps({"v": 1, "channel_id": CHANNEL, "user_id": 1, "ts": 1, **fields})


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (command(type="subscribe"), "missing_field"),
        (command(type="change", spec=None), "missing_field"),
        (command(type="subscribe", spec=[1, 2]), "bad_field"),
        (command(type="begin", resync="yes"), "bad_field"),
        (command(type="explode"), "bad_field"),
        (b"\xff\xfe not utf-8", "bad_json"),
        (b"[1, 2, 3]", "bad_json"),
        (None, "empty"),
        (b'{"v": 1, "type": "subscribe", "channel_id": 5}', "bad_field"),
        (b'{"v": 2, "type": "begin"}', "bad_version"),
    ],
)
def test_a_malformed_command_is_refused_with_its_reason(raw, reason):
    with pytest.raises(InvalidRecord) as refused:
        decode_command(raw)
    assert refused.value.reason == reason


def market_record(**overrides) -> bytes:
    record = orjson.loads(definition_build(7).encode())
    record.update(overrides)
    return orjson.dumps(record)


@pytest.mark.parametrize(
    ("key", "value", "reason"),
    [
        (b"7", market_record(selections=[1, 2]), "bad_field"),
        (b"7", market_record(selections="all"), "bad_field"),
        (b"7", market_record(status="maybe"), "bad_field"),
        (b"8", market_record(), "bad_key"),
        (b"seven", market_record(), "bad_key"),
        ("١٢".encode(), market_record(), "bad_key"),
        (b"9" * 40, None, "bad_key"),
        (None, market_record(), "bad_key"),
        (b"7", b"not json", "bad_json"),
    ],
)
def test_a_malformed_market_record_is_refused_with_its_reason(key, value, reason):
    with pytest.raises(InvalidRecord) as refused:
        decode_market_row(key, value)
    assert refused.value.reason == reason


def test_a_market_tombstone_and_a_good_definition_decode():
    assert decode_market_row(b"7", None) == (7, None)
    record = market_record()  # one record: each call stamps the time it was made
    assert decode_market_row(b"7", record) == (7, decode_market_definition(record))


def bet(**overrides) -> bytes:
    record = {
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
    record.update(overrides)
    return orjson.dumps(record)


@pytest.mark.parametrize(
    "raw",
    [
        bet(stake="1E+999999999999999999"),
        bet(potential_return="1e400"),
        bet(potential_return="99999999999999999999.00"),
        bet(stake="0.001"),
        bet(event_id="x" * 1000),
        bet(legs=[1]),
        bet(stake=10),
        bet(type="accepted"),
        bet(type="rejected", reason="x" * 256),
        bet(type="rejected", reason=7),
        bet(type="pending", until=0),
        bet(type="pending", until="soon"),
    ],
)
def test_a_bet_event_whose_amounts_or_ids_cannot_be_aggregated_is_refused(raw):
    with pytest.raises(InvalidRecord):
        decode_bet_event(raw)


def test_a_well_formed_bet_event_decodes():
    assert decode_bet_event(bet()).potential_return == 25


def test_a_pending_and_a_rejected_bet_event_decode_with_their_decision_time_and_reason():
    held = decode_bet_event(bet(event_id="1:pending", type="pending", until=1_700_000_005_000))
    assert (held.type, held.until, held.reason) == ("pending", 1_700_000_005_000, "")
    refused = decode_bet_event(bet(event_id="1:rejected", type="rejected", reason="the price moved from 2.50 to 2.20"))
    assert (refused.type, refused.reason, refused.until) == ("rejected", "the price moved from 2.50 to 2.20", None)
    assert decode_bet_event(refused.encode()) == refused
