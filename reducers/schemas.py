"""Versioned schemas of every record on the wire, with their validation rules.

Records are JSON. Prices travel as decimal strings (``"2.50"``) and are ``Decimal`` in
Python; floats never hold a price or an amount. The limits below are the single source of
truth: the Spark jobs build their SQL validation from the same constants.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

import orjson

PRICE_SCHEMA_VERSION = 1
MIN_PRICE = Decimal("1.01")
MAX_PRICE = Decimal("1000")
MAX_SELECTIONS = 64
MAX_RECORD_BYTES = 16 * 1024

MARKET_STATUSES = ("open", "suspended", "closed")
SELECTION_STATUSES = ("active", "suspended", "removed")
SOURCES = ("feed", "trader", "replay")


class InvalidRecord(ValueError):
    """A record that cannot be applied. ``reason`` is a short machine-readable code."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True)
class SelectionPrice:
    id: int
    price: Decimal
    status: str = "active"

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "price": str(self.price), "status": self.status}


@dataclass(frozen=True)
class PriceUpdate:
    """A full snapshot of one market's book at one moment of the source.

    ``seq`` increases by one per update of a market at the source; ``event_ts`` is when it
    happened at the source and ``produce_ts`` when it was handed to Kafka (epoch ms).
    """

    market_id: int
    seq: int
    status: str
    selections: tuple[SelectionPrice, ...]
    event_ts: int
    produce_ts: int
    source: str = "feed"
    v: int = PRICE_SCHEMA_VERSION
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "v": self.v,
            "market_id": self.market_id,
            "seq": self.seq,
            "status": self.status,
            "selections": [s.to_json() for s in self.selections],
            "event_ts": self.event_ts,
            "produce_ts": self.produce_ts,
            "source": self.source,
        }

    def encode(self) -> bytes:
        return orjson.dumps(self.to_json())

    def key(self) -> bytes:
        return str(self.market_id).encode()


def _positive_int(obj: dict[str, Any], name: str) -> int:
    value = obj.get(name)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidRecord("bad_field", f"{name} must be an integer")
    if value < 1:
        raise InvalidRecord("bad_field", f"{name} must be positive")
    return value


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


def price_update_from_json(obj: Any) -> PriceUpdate:
    """Validate a decoded price record; raise ``InvalidRecord`` naming the first problem."""
    if not isinstance(obj, dict):
        raise InvalidRecord("bad_json", "record must be a JSON object")
    if obj.get("v") != PRICE_SCHEMA_VERSION:
        raise InvalidRecord("bad_version", f"expected v={PRICE_SCHEMA_VERSION}, got {obj.get('v')!r}")
    market_id = _positive_int(obj, "market_id")
    seq = _positive_int(obj, "seq")
    status = obj.get("status")
    if status not in MARKET_STATUSES:
        raise InvalidRecord("bad_field", f"status must be one of {', '.join(MARKET_STATUSES)}")
    raw_selections = obj.get("selections")
    if not isinstance(raw_selections, list) or not raw_selections:
        raise InvalidRecord("bad_field", "selections must be a non-empty list")
    if len(raw_selections) > MAX_SELECTIONS:
        raise InvalidRecord("bad_field", f"at most {MAX_SELECTIONS} selections")
    selections = []
    for item in raw_selections:
        if not isinstance(item, dict):
            raise InvalidRecord("bad_field", "selection must be an object")
        sel_status = item.get("status", "active")
        if sel_status not in SELECTION_STATUSES:
            raise InvalidRecord("bad_field", "selection status unknown")
        selections.append(SelectionPrice(_positive_int(item, "id"), parse_price(item.get("price")), sel_status))
    source = obj.get("source", "feed")
    if source not in SOURCES:
        raise InvalidRecord("bad_field", f"source must be one of {', '.join(SOURCES)}")
    return PriceUpdate(
        market_id=market_id,
        seq=seq,
        status=status,
        selections=tuple(selections),
        event_ts=_positive_int(obj, "event_ts"),
        produce_ts=_positive_int(obj, "produce_ts"),
        source=source,
    )


def decode_price_update(raw: bytes | None) -> PriceUpdate:
    """Decode and validate one Kafka record value."""
    if raw is None:
        raise InvalidRecord("empty", "record has no value")
    if len(raw) > MAX_RECORD_BYTES:
        raise InvalidRecord("too_large", f"{len(raw)} bytes > {MAX_RECORD_BYTES}")
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise InvalidRecord("bad_json", str(exc)[:80]) from exc
    return price_update_from_json(obj)
