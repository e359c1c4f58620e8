"""Versioned schemas of every record on the Kafka topics, with their validation rules.

Each record is one dataclass here (stream commands: ``reducers/subscriptions.py``): its field
types carry the rules, and pydantic encodes it (``encode``) and decodes and validates it
(``decode_*``) from that one definition. Records are JSON but for the price record, which is
Avro (``price_update.avsc``; see below). Prices and amounts travel as decimal strings
(``"2.50"``) or, in Avro, as a decimal of scale 2, and are ``Decimal`` in Python; floats never
hold a price or an amount. The
limits below are the single source of truth: the Spark jobs build their SQL validation from the
same constants.

A record the rules refuse raises ``InvalidRecord`` naming the first problem in the order the
rules check them (``reason``: the dead-letter reason; ``detail``: words).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Annotated, Any, Final, TypeVar

import orjson
from annotated_types import Ge, Le, Len
from pydantic import (
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    Strict,
    StringConstraints,
    TypeAdapter,
    ValidationError,
    with_config,
)
from pydantic_core import ErrorDetails

from reducers.frames import MAX_WIRE_INT, ClockState, IncidentState, SelectionState, SuspensionState
from reducers.rules import BOOK_CURRENCY, CURRENCY_SYMBOLS
from reducers.suspensions import REASONS as SUSPENSION_REASON_TABLE

PRICE_SCHEMA_VERSION: Final = 1
MIN_PRICE = Decimal("1.01")
MAX_PRICE = Decimal("1000")
MAX_SELECTIONS = 64
MAX_RECORD_BYTES = 16 * 1024

# Why a price record went to the dead-letter topic: its ``reason`` header and its field in the
# dead-letter counter. The decoder below raises every reason but the last; the price reducer
# adds ``unknown_market`` for a valid price whose market the markets table does not know.
UNKNOWN_MARKET = "unknown_market"
# Bytes on the price topic that are not a record of its Avro schema.
BAD_AVRO = "bad_avro"
PRICE_DEAD_LETTER_REASONS = (
    "empty",
    "too_large",
    BAD_AVRO,
    "bad_version",
    "bad_field",
    "bad_price",
    "price_out_of_range",
    UNKNOWN_MARKET,
)

MARKET_STATUSES = ("open", "suspended", "closed")
SELECTION_STATUSES = ("active", "suspended", "removed")
SOURCES = ("feed", "trader", "replay")


def one_of(*values: str) -> StringConstraints:
    """The constraint of a string field that must be one of ``values`` (checked by pydantic's
    own regex, without a call into Python)."""
    return StringConstraints(pattern="^(" + "|".join(re.escape(v) for v in values) + ")$")


MarketStatus = Annotated[str, one_of(*MARKET_STATUSES)]
SelectionStatus = Annotated[str, one_of(*SELECTION_STATUSES)]
Source = Annotated[str, one_of(*SOURCES)]

# A positive id, sequence or epoch-ms time, and a count (zero allowed): JSON integers, never
# booleans, floats or strings.
PositiveInt = Annotated[int, Strict(), Ge(1), Le(MAX_WIRE_INT)]
Count = Annotated[int, Strict(), Ge(0), Le(MAX_WIRE_INT)]


class InvalidRecord(ValueError):
    """A record that cannot be applied. ``reason`` is a short machine-readable code."""

    def __init__(self, reason: str, detail: str = "", *, field: str | None = None) -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail
        self.field = field


def parse_price(raw: Any) -> Decimal:
    """Parse a decimal-odds price given as a string; reject floats, NaN and out-of-range values."""
    if not isinstance(raw, str):
        raise InvalidRecord("bad_price", "price must be a decimal string")
    try:
        price = Decimal(raw)
    except InvalidOperation as exc:
        raise InvalidRecord("bad_price", f"not a number: {raw[:20]!r}") from exc
    if not price.is_finite():
        raise InvalidRecord("bad_price", "price must be finite")
    if price < MIN_PRICE or price > MAX_PRICE:
        raise InvalidRecord("price_out_of_range", f"{price} not within {MIN_PRICE}..{MAX_PRICE}")
    exponent = price.as_tuple().exponent
    if isinstance(exponent, int) and exponent < -2:
        raise InvalidRecord("bad_price", "at most two decimal places")
    return price


def parse_amount(raw: Any, name: str) -> Decimal:
    if not isinstance(raw, str):
        raise InvalidRecord("bad_field", f"{name} must be a decimal string", field=name)
    try:
        value = Decimal(raw)
    except InvalidOperation as exc:
        raise InvalidRecord("bad_field", f"{name} is not a number", field=name) from exc
    if not value.is_finite() or value < 0:
        raise InvalidRecord("bad_field", f"{name} must be a non-negative amount", field=name)
    return value


# A price on the wire: a decimal string that ``parse_price`` accepts.
Price = Annotated[Decimal, BeforeValidator(parse_price)]


# --- turning pydantic's verdict into the record's reason ---

T = TypeVar("T")
Explain = Callable[[ErrorDetails, str], InvalidRecord]


def _must_be_int(problem: ErrorDetails, name: str) -> InvalidRecord:
    if problem["type"] == "greater_than_equal":
        limit = problem.get("ctx", {}).get("ge")
        return InvalidRecord("bad_field", f"{name} must be positive" if limit == 1 else f"{name} must be at least 0")
    return InvalidRecord("bad_field", f"{name} must be an integer")


def _must_be_str(problem: ErrorDetails, name: str) -> InvalidRecord:
    return InvalidRecord("bad_field", f"{name} must be a string")


def _says(reason: str, detail: str) -> Explain:
    return lambda problem, name: InvalidRecord(reason, detail)


class SchemaVersion(int):
    """The version of a record built in Python (its field's default). On the wire the version
    must be given: a record without one is refused like one of another version."""


def version_is(number: int) -> Callable[[Any], int]:
    """The check of a record's ``v``: equal to ``number`` (given on the wire)."""

    def check(raw: Any) -> int:
        got = None if isinstance(raw, SchemaVersion) else raw
        if got != number:
            raise InvalidRecord("bad_version", f"expected v={number}, got {got!r}")
        return number

    return check


@dataclass(frozen=True)
class Rules:
    """How a record's problems are told: the order its rules check the fields in (paths of
    field names, list positions left out) and the words for each field's problem (the field's
    own ``InvalidRecord`` wins when its validator raised one)."""

    order: tuple[tuple[str, ...], ...]
    explain: Mapping[tuple[str, ...], Explain]

    def rank(self, problem: ErrorDetails) -> list[int]:
        key: list[int] = []
        path: tuple[str, ...] = ()
        for part in problem["loc"]:
            if isinstance(part, int):
                key.append(part)
                continue
            path = (*path, part)
            key.append(self.order.index(path) if path in self.order else len(self.order))
        return key

    def refusal(self, exc: ValidationError, raw: bytes | str) -> InvalidRecord:
        """The ``InvalidRecord`` for the first problem pydantic found in ``raw``. A record orjson
        cannot read (a number beyond a double, invalid UTF-8, …) is ``bad_json`` in its words,
        whatever else is wrong with it."""
        try:
            orjson.loads(raw)
        except orjson.JSONDecodeError as not_json:
            return InvalidRecord("bad_json", str(not_json)[:80])
        problems = exc.errors(include_url=False)
        locs = [p["loc"] for p in problems]
        # "too short after validation": a list whose items were refused; the item's problem says more.
        problems = [
            p
            for p in problems
            if not (
                p["type"] == "too_short"
                and any(len(o) > len(p["loc"]) and o[: len(p["loc"])] == p["loc"] for o in locs)
            )
        ]
        problem = min(problems, key=self.rank)
        error = problem.get("ctx", {}).get("error")
        if isinstance(error, InvalidRecord):
            return error
        if problem["type"] == "json_invalid":
            return InvalidRecord("bad_json", problem["msg"][:80])
        path = tuple(p for p in problem["loc"] if isinstance(p, str))
        if not path:
            return InvalidRecord("bad_json", "record must be a JSON object")
        explain = self.explain.get(path)
        if explain is None:
            return InvalidRecord("bad_field", f"{'.'.join(path)}: {problem['msg']}")
        return explain(problem, path[-1])


def decode_record(adapter: TypeAdapter[T], rules: Rules, raw: bytes | None) -> T:
    """Decode and validate a record with its adapter; ``InvalidRecord`` as ``rules`` tell it."""
    if raw is None:
        raise InvalidRecord("empty", "record has no value")
    try:
        return adapter.validate_json(raw)
    except ValidationError as exc:
        raise rules.refusal(exc, raw) from None


STRICT = ConfigDict(strict=True)


# --- price updates (partitioned topic keyed by market id; each record a full snapshot) ---


@with_config(STRICT)
@dataclass(frozen=True)
class SelectionPrice:
    id: PositiveInt
    price: Price
    status: SelectionStatus = "active"

    def to_json(self) -> SelectionState:
        return {"id": self.id, "price": str(self.price), "status": self.status}


@with_config(STRICT)
@dataclass(frozen=True)
class PriceUpdate:
    """A full snapshot of one market's book at one moment of the source.

    ``seq`` increases by one per update of a market at the source; ``event_ts`` is when it
    happened at the source and ``produce_ts`` when it was handed to Kafka (epoch ms).
    """

    v: Annotated[int, BeforeValidator(version_is(PRICE_SCHEMA_VERSION)), Field(validate_default=True)] = field(
        default=SchemaVersion(PRICE_SCHEMA_VERSION), kw_only=True
    )
    market_id: PositiveInt
    seq: PositiveInt
    status: MarketStatus
    selections: Annotated[tuple[SelectionPrice, ...], Len(1, MAX_SELECTIONS)]
    event_ts: PositiveInt
    produce_ts: PositiveInt
    source: Source = "feed"

    def to_json(self) -> dict[str, Any]:
        return _PRICE_UPDATE.dump_python(self, mode="json")

    def encode(self) -> bytes:
        """The record's value on the price topic: Avro (``encode_price_avro``)."""
        return encode_price_avro(self)

    def encode_json(self) -> bytes:
        """The record as JSON, the form of a feed's recording (``decode_price_update_json``)."""
        return _PRICE_UPDATE.dump_json(self)

    def key(self) -> bytes:
        return str(self.market_id).encode()


_PRICE_UPDATE = TypeAdapter(PriceUpdate)
_PRICE_RULES = Rules(
    order=(
        ("v",),
        ("market_id",),
        ("seq",),
        ("status",),
        ("selections",),
        ("selections", "status"),
        ("selections", "id"),
        ("selections", "price"),
        ("source",),
        ("event_ts",),
        ("produce_ts",),
    ),
    explain={
        ("market_id",): _must_be_int,
        ("seq",): _must_be_int,
        ("status",): _says("bad_field", f"status must be one of {', '.join(MARKET_STATUSES)}"),
        ("selections",): lambda problem, name: InvalidRecord(
            "bad_field",
            "selection must be an object"
            if len(problem["loc"]) > 1
            else f"at most {MAX_SELECTIONS} selections"
            if problem["type"] == "too_long"
            else "selections must be a non-empty list",
        ),
        ("selections", "status"): _says("bad_field", "selection status unknown"),
        ("selections", "id"): _must_be_int,
        ("selections", "price"): _says("bad_price", "price must be a decimal string"),
        ("source",): _says("bad_field", f"source must be one of {', '.join(SOURCES)}"),
        ("event_ts",): _must_be_int,
        ("produce_ts",): _must_be_int,
    },
)


def decode_price_update_json(raw: bytes | None) -> PriceUpdate:
    """Decode and validate a price record written as JSON (``PriceUpdate.encode_json``: a feed's
    recording, one record a line)."""
    if raw is not None and len(raw) > MAX_RECORD_BYTES:
        raise InvalidRecord("too_large", f"{len(raw)} bytes > {MAX_RECORD_BYTES}")
    return decode_record(_PRICE_UPDATE, _PRICE_RULES, raw)


# --- the price record on the topic: Avro's binary encoding of price_update.avsc ---
#
# The price topic carries ``PriceUpdate`` in Avro's binary encoding (no container, no schema id)
# of the schema in ``price_update.avsc``: longs for ids, sequence and times, enums for the
# statuses and the source, and the price as a decimal of scale 2 in a fixed of three bytes. The
# Spark reducers read it with Spark's own Avro reader (``spark/validation.py``); Python writes
# and reads it here, by hand: the record is small and fixed in shape, and this reader refuses
# what the rules refuse (``decode_price_update``).

PRICE_AVRO_SCHEMA: Final = (Path(__file__).parent / "price_update.avsc").read_text()
# The price's fixed: three bytes of a two's complement integer, the price in hundredths.
PRICE_BYTES: Final = 3
PRICE_SCALE: Final = 2
# The fewest bytes a selection takes: an id of one byte, the price and a status of one byte.
_MIN_SELECTION_BYTES = 1 + PRICE_BYTES + 1
_LONG_BITS = (1 << 64) - 1
_INT_BITS = (1 << 32) - 1
# Each price's Decimal, by its hundredths: a feed has a few thousand prices.
_PRICES: dict[int, Decimal] = {}


class _Undecodable(Exception):
    """Bytes that are not a record of the schema; ``args[0]`` says where."""


def _varint(buf: bytes, pos: int, limit: int, mask: int) -> tuple[int, int]:
    """The zig-zag varint at ``pos`` (at most ``limit`` bytes; bits beyond ``mask`` dropped, as
    Avro's Java reader does) and the position after it. ``IndexError`` past the end."""
    n = 0
    shift = 0
    for _ in range(limit):
        b = buf[pos]
        pos += 1
        n |= (b & 0x7F) << shift
        if b < 0x80:
            n &= mask
            return (n >> 1) ^ -(n & 1), pos
        shift += 7
    raise _Undecodable(f"a number longer than {limit} bytes ends at byte {pos}")


def _write_long(out: bytearray, value: int) -> None:
    if 0 <= value < 0x40:
        out.append(value << 1)
        return
    n = ((value << 1) ^ (value >> 63)) & _LONG_BITS
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)


def price_hundredths(price: Decimal) -> int:
    """A price in hundredths, as the record's fixed holds it (``ValueError`` if it has more
    places than the record keeps)."""
    scaled = price.scaleb(PRICE_SCALE)
    whole = int(scaled)
    if scaled != whole:
        raise ValueError(f"price {price} has more than {PRICE_SCALE} decimal places")
    return whole


def encode_price_avro(update: PriceUpdate) -> bytes:
    """``update`` in Avro's binary encoding of ``price_update.avsc`` (``PriceUpdate.encode``)."""
    out = bytearray()
    _write_long(out, update.v)
    _write_long(out, update.market_id)
    _write_long(out, update.seq)
    out.append(MARKET_STATUSES.index(update.status) << 1)
    _write_long(out, len(update.selections))
    for selection in update.selections:
        _write_long(out, selection.id)
        out += price_hundredths(selection.price).to_bytes(PRICE_BYTES, "big", signed=True)
        out.append(SELECTION_STATUSES.index(selection.status) << 1)
    out.append(0)  # the end of the selections' one block
    _write_long(out, update.event_ts)
    _write_long(out, update.produce_ts)
    out.append(SOURCES.index(update.source) << 1)
    return bytes(out)


# A record as the schema reads it, before the rules: (v, market_id, seq, status index,
# [(id, hundredths, status index)], event_ts, produce_ts, source index).
AvroPrice = tuple[int, int, int, int, list[tuple[int, int, int]], int, int, int]


def read_price_avro(raw: bytes) -> AvroPrice:
    """The members of a price record in Avro's binary encoding, as any Avro reader takes them
    (arrays in any number of blocks, a block with or without its size, numbers in more bytes
    than they need), without the rules; ``_Undecodable`` for bytes that are not such a record,
    or that go on after it. (A one-byte number, the most common, is read where it stands.)"""
    try:
        return _read_price_avro(raw)
    except IndexError:
        raise _Undecodable(f"record ends early, at byte {len(raw)}") from None


def _read_price_avro(raw: bytes) -> AvroPrice:
    size = len(raw)
    b = raw[0]
    v, pos = ((b >> 1) ^ -(b & 1), 1) if b < 0x80 else _varint(raw, 0, 10, _LONG_BITS)
    market_id, pos = _varint(raw, pos, 10, _LONG_BITS)
    b = raw[pos]
    seq, pos = ((b >> 1) ^ -(b & 1), pos + 1) if b < 0x80 else _varint(raw, pos, 10, _LONG_BITS)
    b = raw[pos]
    status, pos = ((b >> 1) ^ -(b & 1), pos + 1) if b < 0x80 else _varint(raw, pos, 5, _INT_BITS)
    selections: list[tuple[int, int, int]] = []
    while True:
        b = raw[pos]
        count, pos = ((b >> 1) ^ -(b & 1), pos + 1) if b < 0x80 else _varint(raw, pos, 10, _LONG_BITS)
        if count == 0:
            break
        if count < 0:
            _size, pos = _varint(raw, pos, 10, _LONG_BITS)
            count = -count
        if count * _MIN_SELECTION_BYTES > size - pos:
            raise _Undecodable(f"{count} selections do not fit in the record's {size} bytes")
        for _ in range(count):
            b = raw[pos]
            selection_id, pos = ((b >> 1) ^ -(b & 1), pos + 1) if b < 0x80 else _varint(raw, pos, 10, _LONG_BITS)
            end = pos + PRICE_BYTES
            if end > size:
                raise _Undecodable(f"record ends early, at byte {size}")
            hundredths = int.from_bytes(raw[pos:end], "big", signed=True)
            b = raw[end]
            selection_status, pos = ((b >> 1) ^ -(b & 1), end + 1) if b < 0x80 else _varint(raw, end, 5, _INT_BITS)
            selections.append((selection_id, hundredths, selection_status))
    event_ts, pos = _varint(raw, pos, 10, _LONG_BITS)
    produce_ts, pos = _varint(raw, pos, 10, _LONG_BITS)
    b = raw[pos]
    source, pos = ((b >> 1) ^ -(b & 1), pos + 1) if b < 0x80 else _varint(raw, pos, 5, _INT_BITS)
    if pos != size:
        raise _Undecodable(f"{size - pos} bytes after the record's end at byte {pos}")
    return v, market_id, seq, status, selections, event_ts, produce_ts, source


def accepted_record_prices(raw: bytes) -> tuple[tuple[int, Decimal], ...]:
    """The (selection id, price) pairs of a price record already accepted (by this module's
    validator or by the SQL verdict, which never accepts what it refuses), read without the
    rules: the movers' first snapshot of a window, kept by the SQL path as the record's bytes."""
    return tuple((selection_id, _decimal(hundredths)) for selection_id, hundredths, _ in read_price_avro(raw)[4])


def price_market_and_seq(raw: bytes | None) -> tuple[int, int] | None:
    """A price record's market and sequence, read from its first members alone (None when it
    has none): a cheap look, not a check."""
    if not raw:
        return None
    try:
        _v, pos = _varint(raw, 0, 10, _LONG_BITS)
        market_id, pos = _varint(raw, pos, 10, _LONG_BITS)
        seq, _ = _varint(raw, pos, 10, _LONG_BITS)
    except (IndexError, _Undecodable):
        return None
    return market_id, seq


B = TypeVar("B")


def _built(cls: type[B], members: dict[str, Any]) -> B:
    """An instance of the frozen dataclass ``cls`` with ``members`` (all of its fields), checked
    already: set as ``copy`` sets them, without ``__init__``'s call per field (half of a
    decode's time when built through it)."""
    instance = object.__new__(cls)
    instance.__dict__.update(members)
    return instance


def _positive(value: int, name: str) -> None:
    if value < 1:
        raise InvalidRecord("bad_field", f"{name} must be positive")


def _symbol(symbols: tuple[str, ...], index: int, words: str) -> str:
    if 0 <= index < len(symbols):
        return symbols[index]
    raise InvalidRecord("bad_field", words)


def _decimal(hundredths: int) -> Decimal:
    """The price the record's fixed holds, as a ``Decimal`` of two places."""
    return Decimal(hundredths).scaleb(-PRICE_SCALE)


def _price(hundredths: int) -> Decimal:
    price = _PRICES.get(hundredths)
    if price is None:
        price = _decimal(hundredths)
        if price < MIN_PRICE or price > MAX_PRICE:
            raise InvalidRecord("price_out_of_range", f"{price} not within {MIN_PRICE}..{MAX_PRICE}")
        if len(_PRICES) < 1_000_000:
            _PRICES[hundredths] = price
    return price


def _not_a_record(raw: bytes, problem: _Undecodable) -> str:
    """Why ``raw`` is not a price record, in words: a JSON record is named as such."""
    if raw[:1] == b"{":
        return "a JSON record: the price topic carries Avro (price_update.avsc)"
    return str(problem)


def describe_price_record(raw: bytes) -> str:
    """A price-topic record in words for people (the dead-letter pages): its members as JSON
    when the bytes are a record of the schema, whatever the rules say of them (an enum index
    with no symbol is shown as its number); otherwise why they are not, and the bytes, as text
    when they are UTF-8 (a JSON record written to the topic by mistake) or in hex."""
    try:
        v, market_id, seq, status, items, event_ts, produce_ts, source = read_price_avro(raw)
    except _Undecodable as exc:
        try:
            shown = raw.decode("utf-8")
        except UnicodeDecodeError:
            shown = raw.hex(" ")
        return f"not a price record in Avro ({_not_a_record(raw, exc)}): {shown}"

    def symbol(symbols: tuple[str, ...], index: int) -> str | int:
        return symbols[index] if 0 <= index < len(symbols) else index

    members = {
        "v": v,
        "market_id": market_id,
        "seq": seq,
        "status": symbol(MARKET_STATUSES, status),
        "selections": [
            {
                "id": selection_id,
                "price": str(_decimal(hundredths)),
                "status": symbol(SELECTION_STATUSES, selection_status),
            }
            for selection_id, hundredths, selection_status in items
        ],
        "event_ts": event_ts,
        "produce_ts": produce_ts,
        "source": symbol(SOURCES, source),
    }
    return orjson.dumps(members).decode()


def decode_price_update(raw: bytes | None) -> PriceUpdate:
    """Decode and validate one record value of the price topic (Avro, ``price_update.avsc``).
    The rules and their order are those of ``PriceUpdate`` (``decode_price_update_json``);
    bytes that are not a record of the schema are ``bad_avro``."""
    if raw is None:
        raise InvalidRecord("empty", "record has no value")
    if len(raw) > MAX_RECORD_BYTES:
        raise InvalidRecord("too_large", f"{len(raw)} bytes > {MAX_RECORD_BYTES}")
    try:
        v, market_id, seq, status, items, event_ts, produce_ts, source = read_price_avro(raw)
    except _Undecodable as exc:
        raise InvalidRecord(BAD_AVRO, _not_a_record(raw, exc)) from None
    if v != PRICE_SCHEMA_VERSION:
        raise InvalidRecord("bad_version", f"expected v={PRICE_SCHEMA_VERSION}, got {v!r}")
    _positive(market_id, "market_id")
    _positive(seq, "seq")
    market_status = _symbol(MARKET_STATUSES, status, f"status must be one of {', '.join(MARKET_STATUSES)}")
    if not items:
        raise InvalidRecord("bad_field", "selections must be a non-empty list")
    if len(items) > MAX_SELECTIONS:
        raise InvalidRecord("bad_field", f"at most {MAX_SELECTIONS} selections")
    selections = []
    for selection_id, hundredths, selection_status in items:
        state = _symbol(SELECTION_STATUSES, selection_status, "selection status unknown")
        _positive(selection_id, "id")
        selections.append(_built(SelectionPrice, {"id": selection_id, "price": _price(hundredths), "status": state}))
    origin = _symbol(SOURCES, source, f"source must be one of {', '.join(SOURCES)}")
    _positive(event_ts, "event_ts")
    _positive(produce_ts, "produce_ts")
    return _built(
        PriceUpdate,
        {
            "v": PRICE_SCHEMA_VERSION,
            "market_id": market_id,
            "seq": seq,
            "status": market_status,
            "selections": tuple(selections),
            "event_ts": event_ts,
            "produce_ts": produce_ts,
            "source": origin,
        },
    )


# --- market definitions (compacted topic; a tombstone — null value — removes the market) ---

MARKET_SCHEMA_VERSION: Final = 1
# Market ids are PostgreSQL bigints: at most 19 digits.
MARKET_KEY_MAX_DIGITS = 19
DEFINITION_STATUSES = ("open", "suspended", "closed", "settled")
EVENT_STATUSES = ("scheduled", "in_play", "finished", "cancelled")
DefinitionStatus = Annotated[str, one_of(*DEFINITION_STATUSES)]
EventStatus = Annotated[str, one_of(*EVENT_STATUSES)]


def _named_selections(raw: Any) -> tuple[tuple[Any, str], ...]:
    """A definition's selections on the wire, ``[{"id": 101, "name": "Home"}, …]``, as (id, name)."""
    if not isinstance(raw, list):
        raise InvalidRecord("bad_field", "selections must be a list")
    if not all(isinstance(s, dict) for s in raw):
        raise InvalidRecord("bad_field", "selections must be objects")
    return tuple((s.get("id"), str(s.get("name", ""))) for s in raw)


NamedSelections = Annotated[
    tuple[tuple[PositiveInt, str], ...],
    BeforeValidator(_named_selections),
    PlainSerializer(lambda pairs: [{"id": i, "name": n} for i, n in pairs]),
]


@with_config(STRICT)
@dataclass(frozen=True)
class MarketDefinition:
    """What a market is and whether it trades; keyed by market id on the compacted markets topic.

    ``version`` increases on every change of the market; a consumer keeps the highest version.
    """

    v: Annotated[int, BeforeValidator(version_is(MARKET_SCHEMA_VERSION)), Field(validate_default=True)] = field(
        default=SchemaVersion(MARKET_SCHEMA_VERSION), kw_only=True
    )
    market_id: PositiveInt
    version: PositiveInt
    event_id: PositiveInt
    sport: str
    competition: str
    event_name: str
    kind: str
    name: str
    status: DefinitionStatus
    event_status: EventStatus
    starts_at: PositiveInt
    selections: NamedSelections
    ts: PositiveInt
    # The competition's id, and whether the market is its event's first (the one event lists
    # show); records from before these fields name no competition and count as headline.
    competition_id: PositiveInt | None = None
    headline: bool = True

    def to_json(self) -> dict[str, Any]:
        return _MARKET_DEFINITION.dump_python(self, mode="json")

    def encode(self) -> bytes:
        return _MARKET_DEFINITION.dump_json(self)

    def key(self) -> bytes:
        return str(self.market_id).encode()


_MARKET_DEFINITION = TypeAdapter(MarketDefinition)
_MARKET_RULES = Rules(
    order=(
        ("v",),
        ("status",),
        ("event_status",),
        ("selections",),
        ("sport",),
        ("competition",),
        ("event_name",),
        ("kind",),
        ("name",),
        ("market_id",),
        ("version",),
        ("event_id",),
        ("starts_at",),
        ("ts",),
        ("competition_id",),
        ("headline",),
    ),
    explain={
        ("status",): _says("bad_field", "status unknown"),
        ("event_status",): _says("bad_field", "event_status unknown"),
        **{(name,): _must_be_str for name in ("sport", "competition", "event_name", "kind", "name")},
        **{(name,): _must_be_int for name in ("market_id", "version", "event_id", "starts_at", "ts", "competition_id")},
        ("headline",): _says("bad_field", "headline must be true or false"),
        ("selections",): lambda problem, name: (
            InvalidRecord("bad_field", "selections must be a list")
            if problem["type"] == "missing"
            else _must_be_int(problem, "id")
        ),
    },
)


def decode_market_definition(raw: bytes | None) -> MarketDefinition | None:
    """Decode a markets-topic value; ``None`` for a tombstone (the market was removed)."""
    if raw is None:
        return None
    return decode_record(_MARKET_DEFINITION, _MARKET_RULES, raw)


def decode_market_row(key: bytes | None, value: bytes | None) -> tuple[int, MarketDefinition | None]:
    """A markets-topic record as (market id, definition or ``None`` for a tombstone).

    The key is the market id in ASCII digits and must agree with the definition's own id: a
    record keyed by one market but describing another would be compacted under the wrong key.
    """
    if key is None or not 0 < len(key) <= MARKET_KEY_MAX_DIGITS or not key.isdigit() or not key.isascii():
        raise InvalidRecord("bad_key", "the key must be the market id in digits")
    market_id = int(key)
    if market_id < 1:
        raise InvalidRecord("bad_key", "the market id must be positive")
    definition = decode_market_definition(value)
    if definition is not None and definition.market_id != market_id:
        raise InvalidRecord("bad_key", f"key {market_id} names another market than the record's {definition.market_id}")
    return market_id, definition


# --- bet events (bets topic, keyed by bet id) ---

BET_SCHEMA_VERSION: Final = 1
BET_EVENT_TYPES = (
    "placed",
    "voided",
    "cashed_out",
    "settled",
    "pending",
    "referred",
    "rejected",
    "offered",
    "reopened",
    "resettled",
)
BetEventType = Annotated[str, one_of(*BET_EVENT_TYPES)]
BET_EVENT_ID_MAX_CHARS = 64
# The reason a rejected bet carries (``odds_bet.reject_message``'s length).
BET_EVENT_REASON_MAX_CHARS = 255
# A bet's stake or potential return; far above any bet the book takes, far below 2**63 pence.
MAX_BET_EVENT_AMOUNT = Decimal("1000000000000")


def _bet_amount(name: str) -> Callable[[Any], Decimal]:
    """An amount of a bet event: pence exactly, and small enough that liability in pence stays
    within a 64-bit counter however many bets add up."""

    def parse(raw: Any) -> Decimal:
        amount = parse_amount(raw, name)
        if amount > MAX_BET_EVENT_AMOUNT:
            raise InvalidRecord("bad_field", f"{name} must be at most {MAX_BET_EVENT_AMOUNT}", field=name)
        exponent = amount.as_tuple().exponent
        if isinstance(exponent, int) and exponent < -2:
            raise InvalidRecord("bad_field", f"{name} must be in pence (two decimal places)", field=name)
        return amount

    return parse


@with_config(STRICT)
@dataclass(frozen=True)
class BetLeg:
    selection_id: PositiveInt
    market_id: PositiveInt
    event_id: PositiveInt
    price: Price


@with_config(STRICT)
@dataclass(frozen=True)
class BetEvent:
    """A change in a bet's life. ``event_id`` is unique per change, so consumers de-duplicate.

    ``placed`` adds the bet's exposure to liability; ``voided``, ``cashed_out`` and ``settled``
    subtract it (adder/subtractor semantics of a table aggregation). ``pending`` (held by the
    in-play delay until ``until``), ``referred`` (above the customer's stake limit, for a trader to
    decide by ``until``; ``reason`` says by how much) and ``rejected`` (with its ``reason``) change
    no book: the trading desk's ticker shows them.
    """

    v: Annotated[int, BeforeValidator(version_is(BET_SCHEMA_VERSION)), Field(validate_default=True)] = field(
        default=SchemaVersion(BET_SCHEMA_VERSION), kw_only=True
    )
    event_id: Annotated[str, Len(1, BET_EVENT_ID_MAX_CHARS)]
    type: BetEventType
    bet_id: PositiveInt
    user_id: PositiveInt
    stake: Annotated[Decimal, BeforeValidator(_bet_amount("stake"))]
    potential_return: Annotated[Decimal, BeforeValidator(_bet_amount("potential_return"))]
    legs: Annotated[tuple[BetLeg, ...], Len(1)]
    ts: PositiveInt
    # The wallet's currency, which the stake and return are in; an event written before wallets
    # had currencies has none and is in the book's currency.
    currency: Annotated[str, one_of(*CURRENCY_SYMBOLS)] = field(default=BOOK_CURRENCY, kw_only=True)
    # Why a ``rejected`` bet was refused, in the words the punter saw, or why a ``referred`` one
    # went to a trader; empty otherwise.
    reason: Annotated[str, Len(0, BET_EVENT_REASON_MAX_CHARS)] = field(default="", kw_only=True)
    # When a ``pending`` or ``referred`` bet is decided at the latest (epoch ms); None otherwise.
    until: PositiveInt | None = field(default=None, kw_only=True)

    def to_json(self) -> dict[str, Any]:
        return _BET_EVENT.dump_python(self, mode="json")

    def encode(self) -> bytes:
        return _BET_EVENT.dump_json(self)

    def key(self) -> bytes:
        return str(self.bet_id).encode()


_BET_EVENT = TypeAdapter(BetEvent)
_BET_RULES = Rules(
    order=(
        ("v",),
        ("type",),
        ("event_id",),
        ("legs",),
        ("legs", "selection_id"),
        ("legs", "market_id"),
        ("legs", "event_id"),
        ("legs", "price"),
        ("bet_id",),
        ("user_id",),
        ("stake",),
        ("potential_return",),
        ("ts",),
        ("currency",),
        ("reason",),
        ("until",),
    ),
    explain={
        ("type",): _says("bad_field", "type unknown"),
        ("event_id",): _says("bad_field", f"event_id must be a string of at most {BET_EVENT_ID_MAX_CHARS} characters"),
        ("legs",): lambda problem, name: InvalidRecord(
            "bad_field", "leg must be an object" if len(problem["loc"]) > 1 else "legs must be a non-empty list"
        ),
        **{("legs", name): _must_be_int for name in ("selection_id", "market_id", "event_id")},
        ("legs", "price"): _says("bad_price", "price must be a decimal string"),
        **{(name,): _must_be_int for name in ("bet_id", "user_id", "ts")},
        ("stake",): _says("bad_field", "stake must be a decimal string"),
        ("potential_return",): _says("bad_field", "potential_return must be a decimal string"),
        ("currency",): _says("bad_field", f"currency must be one of {', '.join(CURRENCY_SYMBOLS)}"),
        ("reason",): _says("bad_field", f"reason must be a string of at most {BET_EVENT_REASON_MAX_CHARS} characters"),
        ("until",): _must_be_int,
    },
)


def decode_bet_event(raw: bytes | None) -> BetEvent:
    return decode_record(_BET_EVENT, _BET_RULES, raw)


# --- match state (partitioned topic keyed by event id; each record a full snapshot) ---

MATCH_STATE_SCHEMA_VERSION: Final = 1
MATCH_SPORTS = ("football", "tennis", "basketball")
MATCH_STATUSES = ("scheduled", "in_play", "break", "finished")
CLOCK_DIRECTIONS = ("up", "down")
MATCH_SIDES = ("home", "away")
INCIDENT_KINDS = (
    "kick_off",
    "goal",
    "card",
    "half_time",
    "full_time",
    "point_won",
    "game_won",
    "set_won",
    "basket",
    "quarter_end",
    "red_card",
    "var_check",
)
Sport = Annotated[str, one_of(*MATCH_SPORTS)]
MatchStatus = Annotated[str, one_of(*MATCH_STATUSES)]
ClockDirection = Annotated[str, one_of(*CLOCK_DIRECTIONS)]
IncidentKind = Annotated[str, one_of(*INCIDENT_KINDS)]
IncidentSide = Annotated[str, one_of(*MATCH_SIDES, "")]
TENNIS_POINTS = ("0", "15", "30", "40", "AD")
# A tie-break counts its points: "0" to "99" (past seven it runs until one side leads by two).
TIEBREAK_POINTS = re.compile(r"^(0|[1-9][0-9]?)$")
MAX_INCIDENTS = 32
MAX_PERIODS = 8  # four quarters and overtimes
SUSPENSION_REASONS = tuple(SUSPENSION_REASON_TABLE)
SuspensionReasonText = Annotated[str, one_of(*SUSPENSION_REASONS)]
MATCH_DEAD_LETTER_REASONS = ("empty", "too_large", "bad_json", "bad_version", "bad_field")


@with_config(STRICT)
@dataclass(frozen=True)
class MatchClock:
    """A match clock: ``elapsed_s`` seconds of the period had passed at epoch ms ``at``.

    A running clock advances one second per second from ``at``; a ``down`` clock shows
    ``limit_s - elapsed`` (basketball's quarter countdown).
    """

    running: bool
    elapsed_s: Count
    at: PositiveInt
    direction: ClockDirection = "up"
    limit_s: Count | None = None
    rate: PositiveInt = 1  # match seconds per wall-clock second: 1 in a real match, more in an accelerated demo

    def to_json(self) -> ClockState:
        return {
            "running": self.running,
            "elapsed_s": self.elapsed_s,
            "at": self.at,
            "direction": self.direction,
            "limit_s": self.limit_s,
            "rate": self.rate,
        }


@with_config(STRICT)
@dataclass(frozen=True, kw_only=True)
class Incident:
    """Something that happened in the match: ``kind`` by ``side`` ("" for both) in ``period``."""

    kind: IncidentKind
    side: IncidentSide = ""
    period: Count
    at: PositiveInt

    def to_json(self) -> IncidentState:
        return {"kind": self.kind, "side": self.side, "period": self.period, "at": self.at}


@with_config(STRICT)
@dataclass(frozen=True, kw_only=True)
class MatchSuspension:
    """Why the event's markets are suspended now (``reducers.suspensions``) and since when (epoch ms)."""

    reason: SuspensionReasonText
    since: PositiveInt

    def to_json(self) -> SuspensionState:
        return {"reason": self.reason, "since": self.since}


@with_config(STRICT)
@dataclass(frozen=True, kw_only=True)
class MatchStateUpdate:
    """A full snapshot of one event's match state at one moment of the source.

    ``seq`` increases by one per update of an event at the source. ``score`` is in the sport's
    own terms: football and basketball ``{"home": n, "away": n}`` and, optionally, ``"periods":
    [[h, a], ...]`` (each half's or quarter's score); tennis ``{"sets": [h, a], "games": [h, a],
    "points": ["15", "30"], "set_games": [[6, 4], ...]}`` and, optionally, ``"server": "home"``
    (a tie-break's points are counts: ``["5", "3"]``). Tennis has no clock (``clock`` is
    ``None``). ``incidents`` are the newest first, at most ``MAX_INCIDENTS``. ``suspension`` says
    why the event's markets are suspended now, if the source suspended them (``None`` otherwise).
    """

    v: Annotated[int, BeforeValidator(version_is(MATCH_STATE_SCHEMA_VERSION)), Field(validate_default=True)] = field(
        default=SchemaVersion(MATCH_STATE_SCHEMA_VERSION), kw_only=True
    )
    event_id: PositiveInt
    seq: PositiveInt
    sport: Sport
    status: MatchStatus
    period: Count
    score: dict[str, Any]
    clock: MatchClock | None = None
    incidents: Annotated[tuple[Incident, ...], Len(0, MAX_INCIDENTS)] = ()
    event_ts: PositiveInt
    produce_ts: PositiveInt
    suspension: MatchSuspension | None = None

    def __post_init__(self) -> None:
        # The score in the sport's own terms, and what the sport's clock may be: rules across fields.
        if self.sport == "tennis" and self.clock is not None:
            raise InvalidRecord("bad_field", "tennis has no match clock")
        if self.clock is not None and self.clock.direction == "down" and self.clock.limit_s is None:
            raise InvalidRecord("bad_field", "a countdown clock needs limit_s")
        object.__setattr__(self, "score", match_score_from_json(sport=self.sport, raw=self.score))
        object.__setattr__(self, "incidents", tuple(self.incidents))

    def to_json(self) -> dict[str, Any]:
        return _MATCH_STATE.dump_python(self, mode="json")

    def encode(self) -> bytes:
        return _MATCH_STATE.dump_json(self)

    def key(self) -> bytes:
        return str(self.event_id).encode()


def _count(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidRecord("bad_field", f"{name} must be a whole number, not negative")
    return value


def _pair(value: Any, name: str) -> list[int]:
    if not isinstance(value, list) or len(value) != 2:
        raise InvalidRecord("bad_field", f"{name} must be a pair [home, away]")
    return [_count(value[0], name), _count(value[1], name)]


def match_score_from_json(*, sport: str, raw: Any) -> dict[str, Any]:
    """Validate a score in the sport's own terms; raise ``InvalidRecord`` naming the problem."""
    if not isinstance(raw, dict):
        raise InvalidRecord("bad_field", "score must be an object")
    if sport == "tennis":
        points = raw.get("points")
        tiebreak = raw.get("games") == [6, 6]
        if not isinstance(points, list) or len(points) != 2 or not all(_tennis_point(p, tiebreak) for p in points):
            raise InvalidRecord(
                "bad_field", f"points must be a pair of {', '.join(TENNIS_POINTS)} (a tie-break's: counts)"
            )
        set_games = raw.get("set_games", [])
        if not isinstance(set_games, list) or len(set_games) > 5:
            raise InvalidRecord("bad_field", "set_games must be a list of at most 5 pairs")
        score: dict[str, Any] = {
            "sets": _pair(raw.get("sets"), "sets"),
            "games": _pair(raw.get("games"), "games"),
            "points": list(points),
            "set_games": [_pair(s, "set_games") for s in set_games],
        }
        server = raw.get("server")
        if server is not None:
            if server not in MATCH_SIDES:
                raise InvalidRecord("bad_field", "server must be home or away")
            score["server"] = server
        return score
    score = {"home": _count(raw.get("home"), "home score"), "away": _count(raw.get("away"), "away score")}
    periods = raw.get("periods")
    if periods is not None:
        if not isinstance(periods, list) or len(periods) > MAX_PERIODS:
            raise InvalidRecord("bad_field", f"periods must be a list of at most {MAX_PERIODS} pairs")
        score["periods"] = [_pair(p, "periods") for p in periods]
    return score


def _tennis_point(value: Any, tiebreak: bool) -> bool:
    if not isinstance(value, str):
        return False
    return TIEBREAK_POINTS.match(value) is not None if tiebreak else value in TENNIS_POINTS


def _whole_number(problem: ErrorDetails, name: str) -> InvalidRecord:
    return InvalidRecord("bad_field", f"{name} must be a whole number, not negative")


_MATCH_STATE = TypeAdapter(MatchStateUpdate)
_MATCH_RULES = Rules(
    order=(
        ("v",),
        ("sport",),
        ("status",),
        ("clock",),
        ("clock", "running"),
        ("clock", "direction"),
        ("clock", "rate"),
        ("clock", "elapsed_s"),
        ("clock", "at"),
        ("clock", "limit_s"),
        ("incidents",),
        ("incidents", "kind"),
        ("incidents", "side"),
        ("incidents", "period"),
        ("incidents", "at"),
        ("event_id",),
        ("seq",),
        ("period",),
        ("score",),
        ("event_ts",),
        ("produce_ts",),
        ("suspension",),
        ("suspension", "reason"),
        ("suspension", "since"),
    ),
    explain={
        ("sport",): _says("bad_field", f"sport must be one of {', '.join(MATCH_SPORTS)}"),
        ("status",): _says("bad_field", f"status must be one of {', '.join(MATCH_STATUSES)}"),
        ("clock",): _says("bad_field", "clock must be an object or null"),
        ("clock", "running"): _says("bad_field", "clock running must be true or false"),
        ("clock", "direction"): _says("bad_field", f"clock direction must be one of {', '.join(CLOCK_DIRECTIONS)}"),
        ("clock", "rate"): _must_be_int,
        ("clock", "elapsed_s"): lambda problem, name: _whole_number(problem, "clock elapsed_s"),
        ("clock", "at"): _must_be_int,
        ("clock", "limit_s"): lambda problem, name: _whole_number(problem, "clock limit_s"),
        ("incidents",): lambda problem, name: InvalidRecord(
            "bad_field",
            f"incident kind must be one of {', '.join(INCIDENT_KINDS)}"
            if len(problem["loc"]) > 1
            else f"incidents must be a list of at most {MAX_INCIDENTS}",
        ),
        ("incidents", "kind"): _says("bad_field", f"incident kind must be one of {', '.join(INCIDENT_KINDS)}"),
        ("incidents", "side"): _says("bad_field", "incident side must be home, away or empty"),
        ("incidents", "period"): lambda problem, name: _whole_number(problem, "incident period"),
        ("incidents", "at"): _must_be_int,
        ("event_id",): _must_be_int,
        ("seq",): _must_be_int,
        ("period",): _whole_number,
        ("score",): _says("bad_field", "score must be an object"),
        ("event_ts",): _must_be_int,
        ("produce_ts",): _must_be_int,
        ("suspension",): _says("bad_field", "suspension must be an object or null"),
        ("suspension", "reason"): _says(
            "bad_field", f"suspension reason must be one of {', '.join(SUSPENSION_REASONS)}"
        ),
        ("suspension", "since"): _must_be_int,
    },
)


def match_state_from_json(obj: Any) -> MatchStateUpdate:
    """Validate a match-state record given as JSON values; raise ``InvalidRecord`` naming the first problem."""
    return decode_record(_MATCH_STATE, _MATCH_RULES, orjson.dumps(obj))


def decode_match_state(raw: bytes | None) -> MatchStateUpdate:
    """Decode and validate one match-state Kafka record value."""
    if raw is not None and len(raw) > MAX_RECORD_BYTES:
        raise InvalidRecord("too_large", f"{len(raw)} bytes > {MAX_RECORD_BYTES}")
    return decode_record(_MATCH_STATE, _MATCH_RULES, raw)


# --- the predictor game: match events (one partition, read whole) and answers (keyed by punter) ---

GAME_SCHEMA_VERSION: Final = 1
# What happened in a match, as the game reads it: ``score`` is a goal, a basket or a game won by
# ``side``; ``minute`` is the clock passing a minute (only the newest minute of a feed's look);
# ``void`` is a trader voiding ``question_id``.
GAME_EVENT_KINDS = ("kick_off", "score", "card", "half_time", "minute", "full_time", "void")
GameEventKind = Annotated[str, one_of(*GAME_EVENT_KINDS)]
# Every option a question can offer (``reducers.game.OPTIONS`` says which a kind offers).
GAME_CHOICES = ("home", "away", "draw", "none", "yes", "no")
GameChoice = Annotated[str, one_of(*GAME_CHOICES)]
GAME_ANSWER_ID_CHARS = (16, 64)
GAME_VOID_REASON_MAX = 200
GAME_DEAD_LETTER_REASONS = ("empty", "too_large", "bad_json", "bad_version", "bad_field", "bad_key")


def _score_pair(raw: Any) -> tuple[int, int]:
    """A game event's score: ``{"home": n, "away": n}`` (goals, points, games won)."""
    if not isinstance(raw, dict) or set(raw) != {"home", "away"}:
        raise InvalidRecord("bad_field", "score must be an object with home and away")
    return _count(raw["home"], "home score"), _count(raw["away"], "away score")


@with_config(STRICT)
@dataclass(frozen=True, kw_only=True)
class GameEvent:
    """Something that happened in a match, as the predictor game reads it (``game_events`` topic,
    keyed by event id, one partition).

    ``seq`` increases per event at the source; the game applies an event's records in ``seq``
    order and a record at or below the sequence it applied changes nothing. ``minute`` is the
    match clock's minute then, ``at`` the source's time (epoch ms). A ``void`` (a trader's) names
    ``question_id`` and ``reason``; its ``seq`` orders nothing (voiding twice changes nothing).
    """

    v: Annotated[int, BeforeValidator(version_is(GAME_SCHEMA_VERSION)), Field(validate_default=True)] = field(
        default=SchemaVersion(GAME_SCHEMA_VERSION), kw_only=True
    )
    kind: GameEventKind
    event_id: PositiveInt
    seq: PositiveInt
    sport: Sport
    minute: Count = 0
    side: IncidentSide = ""
    score: Annotated[
        tuple[int, int], BeforeValidator(_score_pair), PlainSerializer(lambda s: {"home": s[0], "away": s[1]})
    ] = (0, 0)
    at: PositiveInt
    question_id: PositiveInt | None = None
    reason: Annotated[str, Len(0, GAME_VOID_REASON_MAX)] | None = None

    def __post_init__(self) -> None:
        if self.kind == "void" and (self.question_id is None or not self.reason):
            raise InvalidRecord("bad_field", "a void names its question_id and a reason", field="question_id")
        if self.kind in ("score", "card") and self.side not in MATCH_SIDES:
            raise InvalidRecord("bad_field", f"a {self.kind} names its side, home or away", field="side")

    def to_json(self) -> dict[str, Any]:
        return _GAME_EVENT.dump_python(self, mode="json", exclude_none=True)

    def encode(self) -> bytes:
        return _GAME_EVENT.dump_json(self, exclude_none=True)

    def key(self) -> bytes:
        return str(self.event_id).encode()


_GAME_EVENT = TypeAdapter(GameEvent)
_GAME_EVENT_RULES = Rules(
    order=(
        ("v",),
        ("kind",),
        ("sport",),
        ("side",),
        ("event_id",),
        ("seq",),
        ("minute",),
        ("score",),
        ("at",),
        ("question_id",),
        ("reason",),
    ),
    explain={
        ("kind",): _says("bad_field", f"kind must be one of {', '.join(GAME_EVENT_KINDS)}"),
        ("sport",): _says("bad_field", f"sport must be one of {', '.join(MATCH_SPORTS)}"),
        ("side",): _says("bad_field", "side must be home, away or empty"),
        ("minute",): _whole_number,
        ("score",): _says("bad_field", "score must be an object with home and away"),
        ("reason",): _says("bad_field", f"reason must be a string of at most {GAME_VOID_REASON_MAX} characters"),
        **{(name,): _must_be_int for name in ("event_id", "seq", "at", "question_id")},
    },
)


def decode_game_event(raw: bytes | None) -> GameEvent:
    """Decode and validate one game-event record value."""
    if raw is not None and len(raw) > MAX_RECORD_BYTES:
        raise InvalidRecord("too_large", f"{len(raw)} bytes > {MAX_RECORD_BYTES}")
    return decode_record(_GAME_EVENT, _GAME_EVENT_RULES, raw)


@with_config(STRICT)
@dataclass(frozen=True, kw_only=True)
class GameAnswer:
    """A punter's answer to one question of the game (``game_answers`` topic, keyed by the
    punter's id). ``answer_id`` is unique per answer the API took: the same record read twice is
    the same answer. ``ts`` is when the API took it (epoch ms): an answer counts only if it was
    taken before its question closed."""

    v: Annotated[int, BeforeValidator(version_is(GAME_SCHEMA_VERSION)), Field(validate_default=True)] = field(
        default=SchemaVersion(GAME_SCHEMA_VERSION), kw_only=True
    )
    answer_id: Annotated[str, Len(*GAME_ANSWER_ID_CHARS)]
    user_id: PositiveInt
    event_id: PositiveInt
    question_id: PositiveInt
    choice: GameChoice
    ts: PositiveInt

    def to_json(self) -> dict[str, Any]:
        return _GAME_ANSWER.dump_python(self, mode="json")

    def encode(self) -> bytes:
        return _GAME_ANSWER.dump_json(self)

    def key(self) -> bytes:
        return str(self.user_id).encode()


_GAME_ANSWER = TypeAdapter(GameAnswer)
_GAME_ANSWER_RULES = Rules(
    order=(("v",), ("answer_id",), ("choice",), ("user_id",), ("event_id",), ("question_id",), ("ts",)),
    explain={
        ("answer_id",): _says(
            "bad_field", f"answer_id must be a string of {GAME_ANSWER_ID_CHARS[0]}-{GAME_ANSWER_ID_CHARS[1]} characters"
        ),
        ("choice",): _says("bad_field", f"choice must be one of {', '.join(GAME_CHOICES)}"),
        **{(name,): _must_be_int for name in ("user_id", "event_id", "question_id", "ts")},
    },
)


def decode_game_answer(key: bytes | None, raw: bytes | None) -> GameAnswer:
    """Decode and validate one answer record. The key is the punter's id in digits and must
    agree with the record's: the game reducer places a punter's state by the key."""
    if raw is not None and len(raw) > MAX_RECORD_BYTES:
        raise InvalidRecord("too_large", f"{len(raw)} bytes > {MAX_RECORD_BYTES}")
    answer = decode_record(_GAME_ANSWER, _GAME_ANSWER_RULES, raw)
    if key != answer.key():
        raise InvalidRecord("bad_key", "the key must be the punter's id in digits, the record's user_id")
    return answer
