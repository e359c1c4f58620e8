"""Subscriber channels: what a channel asks for, the commands that change it, query matching.

A channel is created by the control API and named by an unguessable id. Its spec says which
view it wants and of what: explicit markets, the legs of a bet slip, the user's open bets, or a
query ("football starting within 60 minutes", "all in-play tennis") that the query stage resolves
to markets over time, acting as a virtual subscriber.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Annotated, Any, Final, NamedTuple, get_args

import orjson
from annotated_types import Len
from pydantic import (
    BeforeValidator,
    ConfigDict,
    Field,
    InstanceOf,
    PlainSerializer,
    TypeAdapter,
    ValidationInfo,
    with_config,
)
from pydantic_core import ErrorDetails

from reducers import frames
from reducers.betting import LEG_RESULTS, UNDECIDED
from reducers.frames import EndedFrame, held_states, held_to_json
from reducers.rules import SLIP_VIEW_MAX_STAKE
from reducers.schemas import (
    InvalidRecord,
    MarketDefinition,
    PositiveInt,
    Rules,
    SchemaVersion,
    decode_record,
    one_of,
    parse_amount,
    parse_price,
    version_is,
)

COMMAND_SCHEMA_VERSION: Final = 1
# ``game``: a punter's view of one event's predictor game (``reducers/game.py``): no markets.
GAME_VIEW = "game"
VIEWS = ("markets", "slip", "bets", GAME_VIEW)
MAX_CHANNEL_MARKETS = 500
# Why a channel ended, told to its attached websockets in the ``ended`` frame. ``lost``: the
# store no longer has it (Redis came back empty); the client subscribes again.
LOST = "lost"
# A punter's session ended (logout, password change, deactivation, self-exclusion): its channels end.
SESSION_END_REASONS: tuple[str, ...] = get_args(frames.SessionEndReason)
END_REASONS = ("unsubscribed", "expired", "ended_by_staff", LOST, *SESSION_END_REASONS)
# How long the owner of an ended channel is told so when attaching to it.
ENDED_CHANNEL_KEEP_S = 3600


@dataclass(frozen=True)
class QuerySpec:
    """Which markets a query channel holds: every condition given must hold (``headline``: only
    each event's first market, the one the event lists show)."""

    sport: str | None = None
    in_play: bool | None = None
    starting_within_minutes: int | None = None
    competition: int | None = None
    headline: bool | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "sport": self.sport,
            "in_play": self.in_play,
            "starting_within_minutes": self.starting_within_minutes,
            "competition": self.competition,
            "headline": self.headline,
        }

    def canonical(self) -> bytes:
        """The query as one byte string whatever the order or absence of its conditions: the
        same query is the same shared channel."""
        return orjson.dumps({k: v for k, v in self.to_json().items() if v is not None}, option=orjson.OPT_SORT_KEYS)


# A query channel is shared by everyone who asks for the same query, logged in or not: its id is
# derived from the query (``shared_channel_id``), 40 characters where a punter's channel id has 32.
SHARED_CHANNEL_PREFIX = "q"
SHARED_CHANNEL_ID_LENGTH = 40
# Markets a shared query channel holds at most (ids only: its frames carry no prices).
MAX_QUERY_MARKETS = 20_000


def shared_channel_id(query: QuerySpec) -> str:
    """The id of the one channel every holder of ``query`` shares."""
    digest = hashlib.sha256(b"query:" + query.canonical()).hexdigest()
    return SHARED_CHANNEL_PREFIX + digest[: SHARED_CHANNEL_ID_LENGTH - len(SHARED_CHANNEL_PREFIX)]


def is_shared_channel(channel_id: str) -> bool:
    """Whether a channel id names a shared query channel (anyone may attach to one)."""
    return (
        len(channel_id) == SHARED_CHANNEL_ID_LENGTH
        and channel_id.startswith(SHARED_CHANNEL_PREFIX)
        and all(c in "0123456789abcdef" for c in channel_id[len(SHARED_CHANNEL_PREFIX) :])
    )


@dataclass(frozen=True)
class SlipLeg:
    selection_id: int
    market_id: int


class OpenLeg(NamedTuple):
    """A leg of an open bet as the bets view sees it: its result so far (``undecided``, ``won``,
    ``lost`` or ``void``; the punter's bets list knows it) decides how it counts in the cash-out."""

    selection_id: int
    market_id: int
    price: Decimal
    result: str = "undecided"


@dataclass(frozen=True)
class OpenBet:
    bet_id: int
    stake: Decimal
    legs: tuple[OpenLeg, ...]


@dataclass(frozen=True)
class SubscriptionSpec:
    view: str
    markets: tuple[int, ...] = ()
    query: QuerySpec | None = None
    slip: tuple[SlipLeg, ...] = ()
    stake: Decimal | None = None
    bets: tuple[OpenBet, ...] = field(default_factory=tuple)
    # The event of a game view.
    event: int | None = None

    def explicit_markets(self) -> set[int]:
        """Markets named by the spec itself (query results come on top)."""
        found = set(self.markets)
        found.update(leg.market_id for leg in self.slip)
        for bet in self.bets:
            found.update(leg.market_id for leg in bet.legs)
        return found

    def to_json(self) -> dict[str, Any]:
        return {
            "view": self.view,
            "markets": list(self.markets),
            "query": self.query.to_json() if self.query else None,
            "slip": [{"selection_id": leg.selection_id, "market_id": leg.market_id} for leg in self.slip],
            "stake": str(self.stake) if self.stake is not None else None,
            "bets": [
                {
                    "bet_id": b.bet_id,
                    "stake": str(b.stake),
                    "legs": [
                        {"selection_id": leg.selection_id, "market_id": leg.market_id, "price": str(leg.price)}
                        | ({"result": leg.result} if leg.result != UNDECIDED else {})
                        for leg in b.legs
                    ],
                }
                for b in self.bets
            ],
        } | ({"event": self.event} if self.event is not None else {})


def _ids(raw: Any, name: str) -> tuple[int, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in raw):
        raise InvalidRecord("bad_field", f"{name} must be a list of positive integer ids", field=name)
    return tuple(dict.fromkeys(raw))


def _id(obj: dict[str, Any], name: str) -> int:
    value = obj.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidRecord("bad_field", f"{name} must be a positive integer id", field=name)
    return value


def _result(leg: dict[str, Any]) -> str:
    result = leg.get("result", UNDECIDED)
    if result not in LEG_RESULTS:
        raise InvalidRecord("bad_field", f"a leg's result must be one of {', '.join(LEG_RESULTS)}", field="result")
    return str(result)


def query_from_json(raw: Any) -> QuerySpec | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise InvalidRecord("bad_field", "query must be an object", field="query")
    unknown = set(raw) - {"sport", "in_play", "starting_within_minutes", "competition", "headline"}
    if unknown:
        raise InvalidRecord("bad_field", f"query has unknown fields: {', '.join(sorted(unknown))}", field="query")
    sport = raw.get("sport")
    if sport is not None and (not isinstance(sport, str) or not 0 < len(sport) <= 32):
        raise InvalidRecord("bad_field", "query.sport must be a sport slug", field="query.sport")
    in_play = raw.get("in_play")
    if in_play is not None and not isinstance(in_play, bool):
        raise InvalidRecord("bad_field", "query.in_play must be true or false", field="query.in_play")
    within = raw.get("starting_within_minutes")
    if within is not None and (
        isinstance(within, bool) or not isinstance(within, int) or not 1 <= within <= 7 * 24 * 60
    ):
        raise InvalidRecord(
            "bad_field", "query.starting_within_minutes must be 1..10080", field="query.starting_within_minutes"
        )
    competition = raw.get("competition")
    if competition is not None and (
        isinstance(competition, bool) or not isinstance(competition, int) or competition < 1
    ):
        raise InvalidRecord("bad_field", "query.competition must be a competition id", field="query.competition")
    headline = raw.get("headline")
    if headline is not None and not isinstance(headline, bool):
        raise InvalidRecord("bad_field", "query.headline must be true or false", field="query.headline")
    if sport is None and in_play is None and within is None and competition is None and headline is None:
        raise InvalidRecord("bad_field", "query must name at least one condition", field="query")
    return QuerySpec(
        sport=sport, in_play=in_play, starting_within_minutes=within, competition=competition, headline=headline
    )


def spec_from_json(raw: Any) -> SubscriptionSpec:
    """Validate a subscription spec from the control API or the command topic."""
    if not isinstance(raw, dict):
        raise InvalidRecord("bad_field", "spec must be an object", field="spec")
    view = raw.get("view", "markets")
    if view not in VIEWS:
        raise InvalidRecord("bad_field", f"view must be one of {', '.join(VIEWS)}", field="view")
    markets = _ids(raw.get("markets"), "markets")
    query = query_from_json(raw.get("query"))
    slip_raw = raw.get("slip") or []
    if not isinstance(slip_raw, list):
        raise InvalidRecord("bad_field", "slip must be a list of legs", field="slip")
    slip = tuple(SlipLeg(_id(leg, "selection_id"), _id(leg, "market_id")) for leg in slip_raw if isinstance(leg, dict))
    if len(slip) != len(slip_raw):
        raise InvalidRecord("bad_field", "slip legs must be objects", field="slip")
    stake = None
    if raw.get("stake") is not None:
        stake = parse_amount(raw.get("stake"), "stake")
        if stake > SLIP_VIEW_MAX_STAKE:
            raise InvalidRecord("bad_field", f"stake must be at most {SLIP_VIEW_MAX_STAKE}", field="stake")
    bets_raw = raw.get("bets") or []
    if not isinstance(bets_raw, list):
        raise InvalidRecord("bad_field", "bets must be a list", field="bets")
    bets = []
    for bet in bets_raw:
        if not isinstance(bet, dict) or not isinstance(bet.get("legs"), list) or not bet["legs"]:
            raise InvalidRecord("bad_field", "each bet needs legs", field="bets")
        legs = tuple(
            OpenLeg(_id(leg, "selection_id"), _id(leg, "market_id"), parse_price(leg.get("price")), _result(leg))
            for leg in bet["legs"]
            if isinstance(leg, dict)
        )
        bets.append(OpenBet(_id(bet, "bet_id"), parse_amount(bet.get("stake"), "stake"), legs))
    event = raw.get("event")
    if event is not None and (isinstance(event, bool) or not isinstance(event, int) or event < 1):
        raise InvalidRecord("bad_field", "event must be an event id", field="event")
    if view == GAME_VIEW and (event is None or markets or query is not None or slip or bets or stake is not None):
        raise InvalidRecord("bad_field", "a game view names its event and nothing else", field="event")
    if view != GAME_VIEW and event is not None:
        raise InvalidRecord("bad_field", "only a game view names an event", field="event")
    spec = SubscriptionSpec(
        view=view, markets=markets, query=query, slip=slip, stake=stake, bets=tuple(bets), event=event
    )
    if view == "markets" and not markets and query is None:
        raise InvalidRecord("bad_field", "a markets view needs markets or a query", field="spec")
    if view == "slip" and not slip:
        raise InvalidRecord("bad_field", "a slip view needs at least one leg", field="spec")
    if len(spec.explicit_markets()) > MAX_CHANNEL_MARKETS:
        raise InvalidRecord("bad_field", f"at most {MAX_CHANNEL_MARKETS} markets per channel", field="markets")
    return spec


# ``share``: make sure the shared channel of a query exists (anyone may ask, a visitor included).
COMMAND_TYPES = ("subscribe", "begin", "change", "unsubscribe", "share")
CommandType = Annotated[str, one_of(*COMMAND_TYPES)]


def _command_spec(raw: Any, info: ValidationInfo) -> SubscriptionSpec | None:
    """A ``subscribe``, ``change`` or ``share`` carries the channel's spec; the others carry none."""
    kind = info.data.get("type")
    if kind not in ("subscribe", "change", "share"):
        return None
    if raw is None:
        raise InvalidRecord("missing_field", f"a {kind} command needs its spec", field="spec")
    return spec_from_json(raw)


def _end_reason(raw: Any) -> str | None:
    return raw if raw in END_REASONS else None


def _command_since(raw: Any) -> dict[int, tuple[int, str]] | None:
    return since_from_json(raw) or None


@with_config(ConfigDict(strict=True))
@dataclass(frozen=True, kw_only=True)
class StreamCommand:
    """A command on the command topic, keyed by channel id."""

    v: Annotated[int, BeforeValidator(version_is(COMMAND_SCHEMA_VERSION)), Field(validate_default=True)] = field(
        default=SchemaVersion(COMMAND_SCHEMA_VERSION), kw_only=True
    )
    type: CommandType
    channel_id: Annotated[str, Len(16, 64)]
    # Who sent it; only a ``share`` may come from a visitor (``None``).
    user_id: PositiveInt | None = None
    spec: Annotated[
        InstanceOf[SubscriptionSpec] | None,
        BeforeValidator(_command_spec),
        PlainSerializer(lambda spec: None if spec is None else spec.to_json()),
        Field(validate_default=True),
    ] = None
    resync: bool = False
    ts: PositiveInt
    # Only for ``unsubscribe``: why the channel ends (commands from before it carry none).
    reason: Annotated[str | None, BeforeValidator(_end_reason), Field(exclude_if=lambda reason: reason is None)] = None
    # Only for ``begin``: market id → (sequence, status) the client already holds; the image
    # leaves out the markets still at that state.
    since: Annotated[
        dict[int, tuple[int, str]] | None,
        BeforeValidator(_command_since),
        PlainSerializer(lambda held: held_to_json(held) if held else None),
        Field(exclude_if=lambda held: not held),
    ] = None

    def __post_init__(self) -> None:
        # A visitor may ask for a shared channel; the sweeper ends an idle one. Every other
        # command is a punter's.
        if self.user_id is None and not (
            self.type == "share" or (self.type == "unsubscribe" and is_shared_channel(self.channel_id))
        ):
            raise InvalidRecord("bad_field", "user_id must be a positive integer id", field="user_id")
        if self.type == "share" and (
            self.spec is None or self.spec.query is None or self.channel_id != shared_channel_id(self.spec.query)
        ):
            raise InvalidRecord("bad_field", "a share names its query's shared channel", field="channel_id")

    def to_json(self) -> dict[str, Any]:
        return _STREAM_COMMAND.dump_python(self, mode="json")

    def encode(self) -> bytes:
        return _STREAM_COMMAND.dump_json(self)

    def key(self) -> bytes:
        return self.channel_id.encode()


_STREAM_COMMAND = TypeAdapter(StreamCommand)


def _positive_id(problem: ErrorDetails, name: str) -> InvalidRecord:
    return InvalidRecord("bad_field", f"{name} must be a positive integer id", field=name)


_COMMAND_RULES = Rules(
    order=(("v",), ("type",), ("channel_id",), ("spec",), ("resync",), ("since",), ("user_id",), ("ts",)),
    explain={
        ("type",): lambda problem, name: InvalidRecord("bad_field", "type unknown", field="type"),
        ("channel_id",): lambda problem, name: InvalidRecord(
            "bad_field", "channel_id must be a channel id", field="channel_id"
        ),
        ("resync",): lambda problem, name: InvalidRecord("bad_field", "resync must be true or false", field="resync"),
        ("user_id",): _positive_id,
        ("ts",): _positive_id,
    },
)


def decode_command(raw: bytes | None) -> StreamCommand:
    return decode_record(_STREAM_COMMAND, _COMMAND_RULES, raw)


def since_from_json(raw: Any) -> dict[int, tuple[int, str]]:
    """The ``since`` of a ``begin``: at most one entry per market a channel may have."""
    held = held_states(raw)
    if held is None:
        raise InvalidRecord(
            "bad_field", 'since must map market ids to [seq, status], e.g. {"42": [17, "open"]}', field="since"
        )
    if len(held) > MAX_CHANNEL_MARKETS:
        raise InvalidRecord("bad_field", f"since names at most {MAX_CHANNEL_MARKETS} markets", field="since")
    return held


def ended_frame(*, channel_id: str, reason: str) -> bytes:
    """The frame that tells a channel's websockets it ended and why (docs/protocol.md)."""
    frame: EndedFrame = {"type": "ended", "channel": channel_id, "reason": reason}
    return frames.encode(frame)


def query_matches(query: QuerySpec, definition: MarketDefinition, *, now_ms: int) -> bool:
    """Whether a market belongs to a query's result at ``now_ms``.

    Closed and settled markets, and finished or cancelled events, never match.
    """
    if definition.status in ("closed", "settled") or definition.event_status in ("finished", "cancelled"):
        return False
    if query.sport is not None and definition.sport != query.sport:
        return False
    if query.in_play is not None and (definition.event_status == "in_play") != query.in_play:
        return False
    if query.competition is not None and definition.competition_id != query.competition:
        return False
    if query.headline is not None and definition.headline != query.headline:
        return False
    if query.starting_within_minutes is not None:
        if definition.event_status != "scheduled":
            return False
        if not now_ms <= definition.starts_at <= now_ms + query.starting_within_minutes * 60_000:
            return False
    return True


def query_time_window_ms(query: QuerySpec) -> int | None:
    """How far ahead of now a query's kick-off window reaches (``None``: no window, so time alone
    never moves a market in or out of it)."""
    return None if query.starting_within_minutes is None else query.starting_within_minutes * 60_000


# A market's definition fields an event list shows: a change of any of them is a ``changed`` of
# the shared query channels that hold the market.
LISTED_FIELDS = ("status", "event_status", "starts_at", "event_name", "competition", "name")


def listed_change(old: MarketDefinition | None, new: MarketDefinition | None) -> bool:
    """Whether a definition changed in what an event list shows of its market."""
    if old is None or new is None:
        return old is not new
    return any(getattr(old, name) != getattr(new, name) for name in LISTED_FIELDS)


def map_changes(*, old: set[int], new: set[int]) -> tuple[set[int], set[int]]:
    """(markets to add to the maps, markets to remove) when a channel's market set changes."""
    return new - old, old - new
