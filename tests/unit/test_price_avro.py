"""The price record on the topic: Avro's binary encoding of ``reducers/price_update.avsc``,
written and read by ``reducers.schemas``. A record round-trips; what any Avro reader takes is
read the same way here; what is not a record, or breaks a rule, is refused with its reason."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from reducers.schemas import (
    MARKET_STATUSES,
    MAX_RECORD_BYTES,
    MAX_SELECTIONS,
    PRICE_AVRO_SCHEMA,
    PRICE_DEAD_LETTER_REASONS,
    SELECTION_STATUSES,
    SOURCES,
    InvalidRecord,
    PriceUpdate,
    SelectionPrice,
    accepted_record_prices,
    decode_price_update,
)

UPDATE = PriceUpdate(
    market_id=300,
    seq=70,
    status="suspended",
    selections=(SelectionPrice(3001, Decimal("2.50")), SelectionPrice(3002, Decimal("1000.00"), "removed")),
    event_ts=1_795_000_000_000,
    produce_ts=1_795_000_000_005,
    source="trader",
)


def zigzag(value: int) -> bytes:
    """A long as Avro writes it, in the fewest bytes."""
    n = (value << 1) ^ (value >> 63)
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def padded(value: int, width: int) -> bytes:
    """A non-negative long in ``width`` bytes: more than it needs, as Avro's readers allow."""
    n = value << 1
    out = bytearray()
    for _ in range(width - 1):
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def written(
    *,
    v: bytes = zigzag(1),
    market_id: bytes = zigzag(300),
    seq: bytes = zigzag(70),
    status: bytes = zigzag(1),
    selections: bytes | None = None,
    event_ts: bytes = zigzag(1_795_000_000_000),
    produce_ts: bytes = zigzag(1_795_000_000_005),
    source: bytes = zigzag(1),
) -> bytes:
    """UPDATE laid out member by member as the schema says, with any member's bytes replaced."""
    if selections is None:
        selections = zigzag(2) + item(3001, 250) + item(3002, 100000, status=2) + b"\x00"
    return v + market_id + seq + status + selections + event_ts + produce_ts + source


def item(selection_id: int, hundredths: int, status: int = 0) -> bytes:
    return zigzag(selection_id) + hundredths.to_bytes(3, "big", signed=True) + zigzag(status)


def refusal(raw: bytes | None) -> tuple[str, str]:
    with pytest.raises(InvalidRecord) as refused:
        decode_price_update(raw)
    assert refused.value.reason in PRICE_DEAD_LETTER_REASONS
    return refused.value.reason, refused.value.detail


def test_the_schema_in_the_repo_names_the_members_and_symbols_of_the_record():
    schema = json.loads(PRICE_AVRO_SCHEMA)
    fields = {f["name"]: f["type"] for f in schema["fields"]}
    assert list(fields) == ["v", "market_id", "seq", "status", "selections", "event_ts", "produce_ts", "source"]
    assert tuple(fields["status"]["symbols"]) == MARKET_STATUSES
    assert tuple(fields["source"]["symbols"]) == SOURCES
    selection = {f["name"]: f["type"] for f in fields["selections"]["items"]["fields"]}
    assert tuple(selection["status"]["symbols"]) == SELECTION_STATUSES
    assert selection["price"] == {
        "type": "fixed",
        "name": "Price",
        "size": 3,
        "logicalType": "decimal",
        "precision": 6,
        "scale": 2,
    }


def test_a_record_is_written_member_by_member_in_the_schemas_order():
    assert UPDATE.encode() == written()
    assert decode_price_update(written()) == UPDATE


@pytest.mark.parametrize(
    "update",
    [
        UPDATE,
        PriceUpdate(
            market_id=2**63 - 1,
            seq=1,
            status="open",
            selections=tuple(SelectionPrice(i, Decimal("1.01"), "suspended") for i in range(1, MAX_SELECTIONS + 1)),
            event_ts=1,
            produce_ts=2**62,
        ),
        PriceUpdate(
            market_id=64,
            seq=8192,
            status="closed",
            selections=(SelectionPrice(63, Decimal("17")),),
            event_ts=9,
            produce_ts=9,
        ),
    ],
)
def test_a_record_round_trips(update):
    decoded = decode_price_update(update.encode())
    assert decoded == update
    assert decoded.encode() == update.encode()
    assert all(isinstance(s.price, Decimal) for s in decoded.selections)


def test_an_accepted_records_prices_are_read_from_its_bytes_as_the_validator_reads_them():
    # The SQL path keeps a window's first snapshot as the record's bytes (the movers' partials).
    for raw in (
        UPDATE.encode(),
        written(selections=zigzag(1) + item(3001, 250) + zigzag(1) + item(3002, 100000, status=2) + b"\x00"),
    ):
        prices = accepted_record_prices(raw)
        assert prices == tuple((s.id, s.price) for s in decode_price_update(raw).selections)
        assert prices == ((3001, Decimal("2.50")), (3002, Decimal("1000.00")))
        assert all(
            str(price) == str(s.price) for price, s in zip([p for _, p in prices], UPDATE.selections, strict=True)
        )


def test_a_price_with_more_places_than_the_record_keeps_is_not_written():
    with pytest.raises(ValueError, match="more than 2 decimal places"):
        PriceUpdate(
            market_id=1,
            seq=1,
            status="open",
            selections=(SelectionPrice(1, Decimal("2.505")),),
            event_ts=1,
            produce_ts=1,
        ).encode()


@pytest.mark.parametrize(
    "raw",
    [
        # the selections in two blocks, then in one block that gives its size in bytes
        written(selections=zigzag(1) + item(3001, 250) + zigzag(1) + item(3002, 100000, status=2) + b"\x00"),
        written(
            selections=zigzag(-2)
            + zigzag(len(item(3001, 250) + item(3002, 100000, status=2)))
            + item(3001, 250)
            + item(3002, 100000, status=2)
            + b"\x00"
        ),
        # numbers in more bytes than they need
        written(v=padded(1, 3), market_id=padded(300, 10), source=padded(1, 5)),
    ],
    ids=["two blocks", "a block with its size", "padded numbers"],
)
def test_every_encoding_an_avro_reader_takes_is_read_as_it_reads_it(raw):
    assert decode_price_update(raw) == UPDATE


@pytest.mark.parametrize(
    ("raw", "reason", "detail"),
    [
        (None, "empty", "record has no value"),
        (b"\x02" * (MAX_RECORD_BYTES + 1), "too_large", f"{MAX_RECORD_BYTES + 1} bytes > {MAX_RECORD_BYTES}"),
        (b"", "bad_avro", "record ends early, at byte 0"),
        (written()[:-3], "bad_avro", f"record ends early, at byte {len(written()) - 3}"),
        (written() + b"\x00", "bad_avro", f"1 bytes after the record's end at byte {len(written())}"),
        (
            b'{"v":1,"market_id":1}',
            "bad_avro",
            "a JSON record: the price topic carries Avro (price_update.avsc)",
        ),
        (written(market_id=b"\xff" * 10 + b"\x01"), "bad_avro", "a number longer than 10 bytes ends at byte 11"),
        (written(status=b"\xff" * 5 + b"\x01"), "bad_avro", "a number longer than 5 bytes ends at byte 10"),
        (
            written(selections=zigzag(10**6) + item(1, 250) + b"\x00"),
            "bad_avro",
            "1000000 selections do not fit in the record's 28 bytes",
        ),
        (written(v=zigzag(2)), "bad_version", "expected v=1, got 2"),
        (written(v=zigzag(2), market_id=zigzag(0)), "bad_version", "expected v=1, got 2"),
        (written(market_id=zigzag(0)), "bad_field", "market_id must be positive"),
        (written(market_id=zigzag(-5)), "bad_field", "market_id must be positive"),
        (written(seq=zigzag(0)), "bad_field", "seq must be positive"),
        (written(status=zigzag(3)), "bad_field", "status must be one of open, suspended, closed"),
        (written(status=zigzag(-1)), "bad_field", "status must be one of open, suspended, closed"),
        (written(selections=b"\x00"), "bad_field", "selections must be a non-empty list"),
        (
            written(selections=zigzag(65) + item(1, 250) * 65 + b"\x00"),
            "bad_field",
            f"at most {MAX_SELECTIONS} selections",
        ),
        (written(selections=zigzag(1) + item(1, 250, status=3) + b"\x00"), "bad_field", "selection status unknown"),
        (written(selections=zigzag(1) + item(0, 250) + b"\x00"), "bad_field", "id must be positive"),
        (
            written(selections=zigzag(1) + item(1, 100) + b"\x00"),
            "price_out_of_range",
            "1.00 not within 1.01..1000",
        ),
        (
            written(selections=zigzag(1) + item(1, 100001) + b"\x00"),
            "price_out_of_range",
            "1000.01 not within 1.01..1000",
        ),
        (
            written(selections=zigzag(1) + item(1, -250) + b"\x00"),
            "price_out_of_range",
            "-2.50 not within 1.01..1000",
        ),
        # the first problem in the rules' order: a selection's status before its id and price
        (
            written(selections=zigzag(1) + item(0, 5, status=9) + b"\x00"),
            "bad_field",
            "selection status unknown",
        ),
        (written(source=zigzag(3)), "bad_field", "source must be one of feed, trader, replay"),
        (written(event_ts=zigzag(0)), "bad_field", "event_ts must be positive"),
        (written(produce_ts=zigzag(-1)), "bad_field", "produce_ts must be positive"),
    ],
)
def test_what_is_not_a_valid_record_is_refused_with_its_reason_and_words(raw, reason, detail):
    assert refusal(raw) == (reason, detail)
