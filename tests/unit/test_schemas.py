from decimal import Decimal

import orjson
import pytest

from reducers.schemas import (
    PRICE_DEAD_LETTER_REASONS,
    InvalidRecord,
    PriceUpdate,
    SelectionPrice,
    decode_price_update,
    decode_price_update_json,
)


def record(**overrides) -> bytes:
    body = {
        "v": 1,
        "market_id": 10,
        "seq": 3,
        "status": "open",
        "selections": [{"id": 1, "price": "2.50", "status": "active"}, {"id": 2, "price": "1.60"}],
        "event_ts": 1_700_000_000_000,
        "produce_ts": 1_700_000_000_001,
    }
    body.update(overrides)
    return orjson.dumps(body)


def test_valid_record_decodes_prices_as_decimals():
    update = decode_price_update_json(record())
    assert update.market_id == 10
    assert update.selections[0].price == Decimal("2.50")
    assert isinstance(update.selections[1].price, Decimal)


def test_encode_then_decode_is_identity():
    update = PriceUpdate(
        market_id=5,
        seq=9,
        status="suspended",
        selections=(SelectionPrice(1, Decimal("3.25")),),
        event_ts=1,
        produce_ts=2,
        source="trader",
    )
    assert decode_price_update(update.encode()) == update


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"{not json", "bad_json"),
        (b"[1,2]", "bad_json"),
        (None, "empty"),
        (b"x" * 20000, "too_large"),
        (record(v=2), "bad_version"),
        (record(market_id=-1), "bad_field"),
        (record(market_id="10"), "bad_field"),
        (record(seq=True), "bad_field"),
        (record(status="paused"), "bad_field"),
        (record(selections=[]), "bad_field"),
        (record(selections=[{"id": 1, "price": 2.5}]), "bad_price"),
        (record(selections=[{"id": 1, "price": "NaN"}]), "bad_price"),
        (record(selections=[{"id": 1, "price": "abc"}]), "bad_price"),
        (record(selections=[{"id": 1, "price": "1.001"}]), "price_out_of_range"),
        (record(selections=[{"id": 1, "price": "-3"}]), "price_out_of_range"),
        (record(selections=[{"id": 1, "price": "5000"}]), "price_out_of_range"),
        (record(selections=[{"id": 1, "price": "2.555"}]), "bad_price"),
        (record(source="elsewhere"), "bad_field"),
    ],
)
def test_invalid_record_is_rejected_with_reason(raw, reason):
    with pytest.raises(InvalidRecord) as info:
        decode_price_update_json(raw)
    assert info.value.reason == reason
    # The JSON form is a recording's; on the price topic (Avro) bytes that do not decode are bad_avro.
    assert reason in PRICE_DEAD_LETTER_REASONS or reason == "bad_json", "every reason is listed with the others"


def test_a_watch_since_is_read_as_sequence_and_status_by_market():
    from reducers.frames import held_states

    assert held_states(None) == {}
    assert held_states({"42": [17, "open"], "7": [0, "suspended"]}) == {42: (17, "open"), 7: (0, "suspended")}


@pytest.mark.parametrize(
    "raw",
    [
        [],
        {"42": 17},
        {"42": [17]},
        {"42": [17, "open", 1]},
        {"-1": [1, "open"]},
        {"4x": [1, "open"]},
        {"\u0667": [1, "open"]},  # an Arabic-Indic seven: a digit to str.isdigit, not an id
        {"42": [True, "open"]},
        {"42": [1.5, "open"]},
        {"42": [2**63, "open"]},
        {"42": [1, ""]},
        {"42": [1, "x" * 17]},
    ],
)
def test_a_malformed_watch_since_is_refused(raw):
    from reducers.frames import held_states

    assert held_states(raw) is None
