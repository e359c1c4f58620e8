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

from reducers.frames import SelectionState

PRICE_SCHEMA_VERSION = 1
MIN_PRICE = Decimal("1.01")
MAX_PRICE = Decimal("1000")
MAX_SELECTIONS = 64
MAX_RECORD_BYTES = 16 * 1024

# Why a price record went to the dead-letter topic: its ``reason`` header and its field in the
# dead-letter counter. The decoder below raises every reason but the last; the price reducer
# adds ``unknown_market`` for a valid price whose market the markets table does not know.
UNKNOWN_MARKET = "unknown_market"
PRICE_DEAD_LETTER_REASONS = (
    "empty",
    "too_large",
    "bad_json",
    "bad_version",
    "bad_field",
    "bad_price",
    "price_out_of_range",
    UNKNOWN_MARKET,
)

MARKET_STATUSES = ("open", "suspended", "closed")
SELECTION_STATUSES = ("active", "suspended", "removed")
SOURCES = ("feed", "trader", "replay")


class InvalidRecord(ValueError):
    """A record that cannot be applied. ``reason`` is a short machine-readable code."""

    def __init__(self, reason: str, detail: str = "", *, field: str | None = None) -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail
        self.field = field


@dataclass(frozen=True)
class SelectionPrice:
    id: int
    price: Decimal
    status: str = "active"

    def to_json(self) -> SelectionState:
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


def json_record(raw: bytes | None, *, version: int) -> dict[str, Any]:
    """A record's value decoded as a JSON object of the given schema version."""
    if raw is None:
        raise InvalidRecord("empty", "record has no value")
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise InvalidRecord("bad_json", str(exc)[:80]) from exc
    if not isinstance(obj, dict):
        raise InvalidRecord("bad_json", "record must be a JSON object")
    if obj.get("v") != version:
        raise InvalidRecord("bad_version", f"expected v={version}, got {obj.get('v')!r}")
    return obj


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


# --- market definitions (compacted topic; a tombstone — null value — removes the market) ---

MARKET_SCHEMA_VERSION = 1
# Market ids are PostgreSQL bigints: at most 19 digits.
MARKET_KEY_MAX_DIGITS = 19
DEFINITION_STATUSES = ("open", "suspended", "closed", "settled")
EVENT_STATUSES = ("scheduled", "in_play", "finished", "cancelled")


@dataclass(frozen=True)
class MarketDefinition:
    """What a market is and whether it trades; keyed by market id on the compacted markets topic.

    ``version`` increases on every change of the market; a consumer keeps the highest version.
    """

    market_id: int
    version: int
    event_id: int
    sport: str
    competition: str
    event_name: str
    kind: str
    name: str
    status: str
    event_status: str
    starts_at: int
    selections: tuple[tuple[int, str], ...]
    ts: int
    v: int = MARKET_SCHEMA_VERSION

    def to_json(self) -> dict[str, Any]:
        return {
            "v": self.v,
            "market_id": self.market_id,
            "version": self.version,
            "event_id": self.event_id,
            "sport": self.sport,
            "competition": self.competition,
            "event_name": self.event_name,
            "kind": self.kind,
            "name": self.name,
            "status": self.status,
            "event_status": self.event_status,
            "starts_at": self.starts_at,
            "selections": [{"id": i, "name": n} for i, n in self.selections],
            "ts": self.ts,
        }

    def encode(self) -> bytes:
        return orjson.dumps(self.to_json())

    def key(self) -> bytes:
        return str(self.market_id).encode()


def decode_market_definition(raw: bytes | None) -> MarketDefinition | None:
    """Decode a markets-topic value; ``None`` for a tombstone (the market was removed)."""
    if raw is None:
        return None
    obj = json_record(raw, version=MARKET_SCHEMA_VERSION)
    if obj.get("status") not in DEFINITION_STATUSES:
        raise InvalidRecord("bad_field", "status unknown")
    if obj.get("event_status") not in EVENT_STATUSES:
        raise InvalidRecord("bad_field", "event_status unknown")
    selections = obj.get("selections")
    if not isinstance(selections, list):
        raise InvalidRecord("bad_field", "selections must be a list")
    if not all(isinstance(s, dict) for s in selections):
        raise InvalidRecord("bad_field", "selections must be objects")
    for name in ("sport", "competition", "event_name", "kind", "name"):
        if not isinstance(obj.get(name), str):
            raise InvalidRecord("bad_field", f"{name} must be a string")
    return MarketDefinition(
        market_id=_positive_int(obj, "market_id"),
        version=_positive_int(obj, "version"),
        event_id=_positive_int(obj, "event_id"),
        sport=obj["sport"],
        competition=obj["competition"],
        event_name=obj["event_name"],
        kind=obj["kind"],
        name=obj["name"],
        status=obj["status"],
        event_status=obj["event_status"],
        starts_at=_positive_int(obj, "starts_at"),
        selections=tuple((_positive_int(s, "id"), str(s.get("name", ""))) for s in selections),
        ts=_positive_int(obj, "ts"),
    )


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

BET_SCHEMA_VERSION = 1
BET_EVENT_TYPES = ("placed", "voided", "cashed_out", "settled")
BET_EVENT_ID_MAX_CHARS = 64
# A bet's stake or potential return; far above any bet the book takes, far below 2**63 pence.
MAX_BET_EVENT_AMOUNT = Decimal("1000000000000")


@dataclass(frozen=True)
class BetLeg:
    selection_id: int
    market_id: int
    event_id: int
    price: Decimal

    def to_json(self) -> dict[str, Any]:
        return {
            "selection_id": self.selection_id,
            "market_id": self.market_id,
            "event_id": self.event_id,
            "price": str(self.price),
        }


@dataclass(frozen=True)
class BetEvent:
    """A change in a bet's life. ``event_id`` is unique per change, so consumers de-duplicate.

    ``placed`` adds the bet's exposure to liability; ``voided``, ``cashed_out`` and ``settled``
    subtract it (adder/subtractor semantics of a table aggregation).
    """

    event_id: str
    type: str
    bet_id: int
    user_id: int
    stake: Decimal
    potential_return: Decimal
    legs: tuple[BetLeg, ...]
    ts: int
    v: int = BET_SCHEMA_VERSION

    def to_json(self) -> dict[str, Any]:
        return {
            "v": self.v,
            "event_id": self.event_id,
            "type": self.type,
            "bet_id": self.bet_id,
            "user_id": self.user_id,
            "stake": str(self.stake),
            "potential_return": str(self.potential_return),
            "legs": [leg.to_json() for leg in self.legs],
            "ts": self.ts,
        }

    def encode(self) -> bytes:
        return orjson.dumps(self.to_json())

    def key(self) -> bytes:
        return str(self.bet_id).encode()


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


def _bet_amount(obj: dict[str, Any], name: str) -> Decimal:
    """An amount of a bet event: pence exactly, and small enough that liability in pence stays
    within a 64-bit counter however many bets add up."""
    amount = parse_amount(obj.get(name), name)
    if amount > MAX_BET_EVENT_AMOUNT:
        raise InvalidRecord("bad_field", f"{name} must be at most {MAX_BET_EVENT_AMOUNT}", field=name)
    exponent = amount.as_tuple().exponent
    if isinstance(exponent, int) and exponent < -2:
        raise InvalidRecord("bad_field", f"{name} must be in pence (two decimal places)", field=name)
    return amount


def decode_bet_event(raw: bytes | None) -> BetEvent:
    obj = json_record(raw, version=BET_SCHEMA_VERSION)
    if obj.get("type") not in BET_EVENT_TYPES:
        raise InvalidRecord("bad_field", "type unknown")
    if not isinstance(obj.get("event_id"), str) or not 0 < len(obj["event_id"]) <= BET_EVENT_ID_MAX_CHARS:
        raise InvalidRecord("bad_field", f"event_id must be a string of at most {BET_EVENT_ID_MAX_CHARS} characters")
    raw_legs = obj.get("legs")
    if not isinstance(raw_legs, list) or not raw_legs:
        raise InvalidRecord("bad_field", "legs must be a non-empty list")
    legs = []
    for leg in raw_legs:
        if not isinstance(leg, dict):
            raise InvalidRecord("bad_field", "leg must be an object")
        legs.append(
            BetLeg(
                selection_id=_positive_int(leg, "selection_id"),
                market_id=_positive_int(leg, "market_id"),
                event_id=_positive_int(leg, "event_id"),
                price=parse_price(leg.get("price")),
            )
        )
    return BetEvent(
        event_id=obj["event_id"],
        type=obj["type"],
        bet_id=_positive_int(obj, "bet_id"),
        user_id=_positive_int(obj, "user_id"),
        stake=_bet_amount(obj, "stake"),
        potential_return=_bet_amount(obj, "potential_return"),
        legs=tuple(legs),
        ts=_positive_int(obj, "ts"),
    )


# --- match state (partitioned topic keyed by event id; each record a full snapshot) ---

MATCH_STATE_SCHEMA_VERSION = 1
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
)
TENNIS_POINTS = ("0", "15", "30", "40", "AD")
MAX_INCIDENTS = 32
MATCH_DEAD_LETTER_REASONS = ("empty", "too_large", "bad_json", "bad_version", "bad_field")


@dataclass(frozen=True)
class MatchClock:
    """A match clock: ``elapsed_s`` seconds of the period had passed at epoch ms ``at``.

    A running clock advances one second per second from ``at``; a ``down`` clock shows
    ``limit_s - elapsed`` (basketball's quarter countdown).
    """

    running: bool
    elapsed_s: int
    at: int
    direction: str = "up"
    limit_s: int | None = None
    rate: int = 1  # match seconds per wall-clock second: 1 in a real match, more in an accelerated demo

    def to_json(self) -> dict[str, Any]:
        return {
            "running": self.running,
            "elapsed_s": self.elapsed_s,
            "at": self.at,
            "direction": self.direction,
            "limit_s": self.limit_s,
            "rate": self.rate,
        }


@dataclass(frozen=True)
class Incident:
    """Something that happened in the match: ``kind`` by ``side`` ("" for both) in ``period``."""

    kind: str
    side: str
    period: int
    at: int

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "side": self.side, "period": self.period, "at": self.at}


@dataclass(frozen=True)
class MatchStateUpdate:
    """A full snapshot of one event's match state at one moment of the source.

    ``seq`` increases by one per update of an event at the source. ``score`` is in the sport's
    own terms: football and basketball ``{"home": n, "away": n}``; tennis ``{"sets": [h, a],
    "games": [h, a], "points": ["15", "30"], "set_games": [[6, 4], ...]}``. Tennis has no
    clock (``clock`` is ``None``). ``incidents`` are the newest first, at most ``MAX_INCIDENTS``.
    """

    event_id: int
    seq: int
    sport: str
    status: str
    period: int
    score: dict[str, Any]
    clock: MatchClock | None
    incidents: tuple[Incident, ...]
    event_ts: int
    produce_ts: int
    v: int = MATCH_STATE_SCHEMA_VERSION

    def to_json(self) -> dict[str, Any]:
        return {
            "v": self.v,
            "event_id": self.event_id,
            "seq": self.seq,
            "sport": self.sport,
            "status": self.status,
            "period": self.period,
            "score": self.score,
            "clock": None if self.clock is None else self.clock.to_json(),
            "incidents": [i.to_json() for i in self.incidents],
            "event_ts": self.event_ts,
            "produce_ts": self.produce_ts,
        }

    def encode(self) -> bytes:
        return orjson.dumps(self.to_json())

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
        if not isinstance(points, list) or len(points) != 2 or any(p not in TENNIS_POINTS for p in points):
            raise InvalidRecord("bad_field", f"points must be a pair of {', '.join(TENNIS_POINTS)}")
        set_games = raw.get("set_games", [])
        if not isinstance(set_games, list) or len(set_games) > 5:
            raise InvalidRecord("bad_field", "set_games must be a list of at most 5 pairs")
        return {
            "sets": _pair(raw.get("sets"), "sets"),
            "games": _pair(raw.get("games"), "games"),
            "points": list(points),
            "set_games": [_pair(s, "set_games") for s in set_games],
        }
    return {"home": _count(raw.get("home"), "home score"), "away": _count(raw.get("away"), "away score")}


def _match_clock_from_json(raw: Any) -> MatchClock | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise InvalidRecord("bad_field", "clock must be an object or null")
    running = raw.get("running")
    if not isinstance(running, bool):
        raise InvalidRecord("bad_field", "clock running must be true or false")
    direction = raw.get("direction", "up")
    if direction not in CLOCK_DIRECTIONS:
        raise InvalidRecord("bad_field", f"clock direction must be one of {', '.join(CLOCK_DIRECTIONS)}")
    limit = raw.get("limit_s")
    if direction == "down" and limit is None:
        raise InvalidRecord("bad_field", "a countdown clock needs limit_s")
    return MatchClock(
        rate=_positive_int(raw, "rate") if "rate" in raw else 1,
        running=running,
        elapsed_s=_count(raw.get("elapsed_s"), "clock elapsed_s"),
        at=_positive_int(raw, "at"),
        direction=direction,
        limit_s=None if limit is None else _count(limit, "clock limit_s"),
    )


def match_state_from_json(obj: Any) -> MatchStateUpdate:
    """Validate a decoded match-state record; raise ``InvalidRecord`` naming the first problem."""
    if not isinstance(obj, dict):
        raise InvalidRecord("bad_json", "record must be a JSON object")
    if obj.get("v") != MATCH_STATE_SCHEMA_VERSION:
        raise InvalidRecord("bad_version", f"expected v={MATCH_STATE_SCHEMA_VERSION}, got {obj.get('v')!r}")
    sport = obj.get("sport")
    if sport not in MATCH_SPORTS:
        raise InvalidRecord("bad_field", f"sport must be one of {', '.join(MATCH_SPORTS)}")
    status = obj.get("status")
    if status not in MATCH_STATUSES:
        raise InvalidRecord("bad_field", f"status must be one of {', '.join(MATCH_STATUSES)}")
    clock = _match_clock_from_json(obj.get("clock"))
    if sport == "tennis" and clock is not None:
        raise InvalidRecord("bad_field", "tennis has no match clock")
    raw_incidents = obj.get("incidents", [])
    if not isinstance(raw_incidents, list) or len(raw_incidents) > MAX_INCIDENTS:
        raise InvalidRecord("bad_field", f"incidents must be a list of at most {MAX_INCIDENTS}")
    incidents = []
    for item in raw_incidents:
        if not isinstance(item, dict) or item.get("kind") not in INCIDENT_KINDS:
            raise InvalidRecord("bad_field", f"incident kind must be one of {', '.join(INCIDENT_KINDS)}")
        side = item.get("side", "")
        if side not in (*MATCH_SIDES, ""):
            raise InvalidRecord("bad_field", "incident side must be home, away or empty")
        incidents.append(
            Incident(
                kind=item["kind"],
                side=side,
                period=_count(item.get("period"), "incident period"),
                at=_positive_int(item, "at"),
            )
        )
    return MatchStateUpdate(
        event_id=_positive_int(obj, "event_id"),
        seq=_positive_int(obj, "seq"),
        sport=sport,
        status=status,
        period=_count(obj.get("period"), "period"),
        score=match_score_from_json(sport=sport, raw=obj.get("score")),
        clock=clock,
        incidents=tuple(incidents),
        event_ts=_positive_int(obj, "event_ts"),
        produce_ts=_positive_int(obj, "produce_ts"),
    )


def decode_match_state(raw: bytes | None) -> MatchStateUpdate:
    """Decode and validate one match-state Kafka record value."""
    if raw is not None and len(raw) > MAX_RECORD_BYTES:
        raise InvalidRecord("too_large", f"{len(raw)} bytes > {MAX_RECORD_BYTES}")
    return match_state_from_json(json_record(raw, version=MATCH_STATE_SCHEMA_VERSION))
