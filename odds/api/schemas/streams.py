"""The stream control router's bodies (``odds/api/streams.py``): a channel's subscription spec, its
answers, the begin request and its refusals."""

from __future__ import annotations

import math
from decimal import Decimal
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainValidator,
    Strict,
    WithJsonSchema,
    model_validator,
)

from odds.api.schemas.common import (
    BODY_ERRORS,
    Answer,
    BodyRefused,
    DecimalText,
    Id,
    LegResult,
    Model,
    RetryAfter,
    Text,
    invalid,
    refusal,
)
from odds.betting.services.placement import MAX_LEGS, MAX_RETURN, MAX_STAKE
from reducers.rules import SLIP_VIEW_MAX_STAKE
from reducers.subscriptions import MAX_CHANNEL_MARKETS, VIEWS

MAX_QUERY_MINUTES = 7 * 24 * 60

# Literal types made at run time are strings to the type checker.
if TYPE_CHECKING:
    View: TypeAlias = str
else:
    View = Literal[VIEWS]


def _objects(raw: Any) -> Any:
    """The legs of a claimed bet are objects (the spec reader would skip any that is not)."""
    if isinstance(raw, list) and not all(isinstance(leg, dict) for leg in raw):
        raise invalid("each leg is an object")
    return raw


class QueryIn(BaseModel):
    """At least one condition must be given (not null)."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "anyOf": [
                {"required": ["sport"], "properties": {"sport": {"type": "string"}}},
                {"required": ["in_play"], "properties": {"in_play": {"type": "boolean"}}},
                {
                    "required": ["starting_within_minutes"],
                    "properties": {"starting_within_minutes": {"type": "integer"}},
                },
                {"required": ["competition"], "properties": {"competition": {"type": "integer"}}},
                {"required": ["headline"], "properties": {"headline": {"type": "boolean"}}},
            ]
        },
    )

    @model_validator(mode="before")
    @classmethod
    def _known(cls, raw: Any) -> Any:
        unknown = set(raw) - set(cls.model_fields) if isinstance(raw, dict) else set()
        if unknown:
            raise invalid(f"query has unknown fields: {', '.join(sorted(map(str, unknown)))}")
        return raw

    sport: Annotated[Text, Field(min_length=1, max_length=32)] | None = None
    in_play: Annotated[bool, Strict()] | None = None
    starting_within_minutes: Annotated[int, Strict(), Field(ge=1, le=MAX_QUERY_MINUTES)] | None = None
    competition: Annotated[Id, Field(description="a competition's id")] | None = None
    headline: (
        Annotated[bool, Strict(), Field(description="only each event's first market, the one the event lists show")]
        | None
    ) = None

    @model_validator(mode="after")
    def _some_condition(self) -> QueryIn:
        conditions = (self.sport, self.in_play, self.starting_within_minutes, self.competition, self.headline)
        if all(condition is None for condition in conditions):
            raise invalid("query must name at least one condition")
        return self


class SlipLegIn(BaseModel):
    selection_id: Id
    market_id: Id


class ClaimedLegIn(BaseModel):
    selection_id: Id
    market_id: Id
    price: Annotated[Text, Field(description="decimal odds, 1.01-1000")]
    result: Annotated[
        LegResult, Field(description="the leg's result so far, as GET /api/bets reports it; a won leg counts at 1.00")
    ] = "undecided"


class ClaimedBetIn(BaseModel):
    bet_id: Id
    stake: Annotated[Text, Field(description=f"a decimal amount, 0-{MAX_STAKE}")]
    legs: Annotated[list[ClaimedLegIn], BeforeValidator(_objects), Field(min_length=1, max_length=MAX_LEGS)]

    @model_validator(mode="after")
    def _placeable(self) -> ClaimedBetIn:
        """A claimed bet no placement would take is refused: the reducers compute its odds and
        cash-out values to the penny, and an accumulator of long prices or a stake of 1E+30 has
        more digits than a decimal context holds."""
        try:
            stake = Decimal(self.stake)
            prices = [Decimal(leg.price) for leg in self.legs]
            if stake > MAX_STAKE:
                raise invalid(f"a bet has 1 to {MAX_LEGS} legs and a stake of at most {MAX_STAKE}")
            # Not betting.potential_return: rounding that to the penny is what fails on huge values.
            too_much = stake * math.prod(prices) > MAX_RETURN
        except ArithmeticError:
            return self  # not amounts and prices at all: the spec reader names what is wrong
        if too_much:
            raise invalid(f"a bet's potential return is at most {MAX_RETURN}")
        return self


class SubscriptionSpec(BaseModel):
    """What a channel streams. A markets view needs `markets` or `query`, a slip view at least
    one leg; each of `bets` must be a bet that placement would take (a potential return, stake
    times the prices, within the book's limit)."""

    model_config = ConfigDict(hide_input_in_errors=True)

    view: View = "markets"
    markets: list[Id] | None = None
    query: QueryIn | None = None
    slip: Annotated[list[SlipLegIn], Field(max_length=MAX_LEGS)] | None = None
    stake: Annotated[Text, Field(description=f"a decimal amount, 0-{SLIP_VIEW_MAX_STAKE}")] | None = None
    bets: list[ClaimedBetIn] | None = None
    event: Annotated[Id, Field(description="a game view's event")] | None = None


SubscriptionSpec.__doc__ = (SubscriptionSpec.__doc__ or "") + f" At most {MAX_CHANNEL_MARKETS} distinct markets."


class SpecOut(Model):
    view: View
    markets: list[Id]
    query: dict[str, Any] | None
    slip: list[SlipLegIn]
    stake: DecimalText | None
    bets: list[dict[str, Any]]
    # Only a game view names its event; the others' answers leave it out, as their stored spec does.
    event: int | None = Field(default=None, exclude_if=lambda value: value is None, description="a game view's event")


class ChannelCreated(Answer):
    channel: Annotated[
        str,
        Field(
            min_length=32,
            max_length=40,
            description="32 characters for a punter's channel; 40 for a query's shared channel",
        ),
    ]
    spec: SpecOut
    websocket: str
    shared: Annotated[
        bool,
        Field(description="a query's shared channel: attach to it (anyone may); it needs no begin and takes no change"),
    ] = False


class ChannelSpec(Answer):
    channel: str
    spec: SpecOut


class ChannelStatus(Answer):
    channel: str
    status: str


def _held(raw: Any) -> dict[int, tuple[int, str]]:
    from reducers.schemas import InvalidRecord
    from reducers.subscriptions import since_from_json

    try:
        return since_from_json(raw)
    except InvalidRecord as exc:
        raise invalid(exc.detail or exc.reason, code="bad_since") from exc


# What a client already holds (a view snapshot's or its own frames' sequences): market id →
# [sequence, status]; an image leaves out every market still at that state.
Held = Annotated[
    dict[int, tuple[int, str]],
    PlainValidator(_held),
    WithJsonSchema(
        {
            "type": "object",
            "maxProperties": MAX_CHANNEL_MARKETS,
            "propertyNames": {"pattern": "^[0-9]{1,18}$"},
            "additionalProperties": {
                "type": "array",
                "prefixItems": [
                    {"type": "integer", "minimum": 0},
                    {"type": "string", "minLength": 1, "maxLength": 16},
                ],
                "minItems": 2,
                "maxItems": 2,
            },
        }
    ),
]


class BeginRequest(BaseModel):
    """Optional. `since`: the markets the client holds; the image carries only those that moved since."""

    model_config = ConfigDict(extra="forbid", hide_input_in_errors=True)

    since: Held = Field(default_factory=dict)


SpecRefused = BodyRefused
BeginRefused = refusal("BeginRefused", *BODY_ERRORS, "bad_since")
NoChannel = refusal("NoChannel", "no_such_channel", "not_found")
TooManyChannels = refusal("TooManyChannels", "too_many_channels")
ControlLimited = refusal("ControlLimited", "rate_limited", retry_after_s=RetryAfter)


# A query parameter
Resync = Annotated[str | None, Field(description="`1` asks for a fresh image flagged `resync`")]
