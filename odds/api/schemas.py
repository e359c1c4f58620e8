"""The REST API's contract: every request and response body as a pydantic model.

django-ninja validates each request against these models and generates the OpenAPI document from
them (``odds/api/api.py``); an endpoint declares which it reads and answers. Money and prices
travel as decimal strings (``"10.00"``, ``"2.50"``); requests may also send JSON numbers, read
exactly as decimals (``odds.api.http.json_parse``), never through float.

Error bodies have one shape (``ErrorBody``); ``refusal`` declares, per answer, the codes it may
carry. Ranges and business rules (stake limits, prices, payments) are the services' to check;
the models check types and shapes, and the bounds that come from ``reducers/rules.py``.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable
from datetime import datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias

import orjson
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainValidator,
    SerializerFunctionWrapHandler,
    Strict,
    WithJsonSchema,
    create_model,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic_core import PydanticCustomError, core_schema

from odds.betting.models import Bet, BetLeg, DepositLimit, LedgerEntry, Wallet
from odds.betting.services.placement import MAX_KEY_LENGTH, MAX_LEGS, MAX_RETURN, MAX_STAKE, LegRequest
from odds.betting.services.wallet import BREAK_LENGTHS, MAX_REQUEST_ID
from odds.catalogue.models import Market
from odds.core.formatting import OddsFormat, odds_format
from odds.core.health import CHECKS
from odds.core.text import DECIMAL_MAX_LENGTH, DECIMAL_TEXT, MAX_ID
from odds.ops.selectors.ops import RANGES
from reducers import betting
from reducers.rules import SLIP_VIEW_MAX_STAKE
from reducers.schemas import GAME_CHOICES, GAME_VOID_REASON_MAX
from reducers.subscriptions import MAX_CHANNEL_MARKETS, VIEWS

API_VERSION = 1
MAX_SAMPLE_MS = 600_000
MAX_QUERY_MINUTES = 7 * 24 * 60
MAX_LIST = 200
BROWSER_SAMPLES_PER_POST = 500

DECIMAL_PATTERN = r"^-?[0-9]+(\.[0-9]+)?$"
MONEY_PATTERN = r"^-?[0-9]+(\.[0-9]{1,2})?$"


class ApiError(Exception):
    """An error answered as JSON. ``attachments`` are extra top-level members of the body."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        field: str | None = None,
        extra: dict[str, Any] | None = None,
        attachments: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.extra = extra or {}
        self.attachments = attachments or {}


def _default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, BaseModel):
        return value.model_dump()
    raise TypeError(f"cannot encode {type(value).__name__}")


def dumps(payload: Any) -> bytes:
    return orjson.dumps(payload, default=_default)


def _invalid(message: str, code: str = "invalid") -> PydanticCustomError:
    """A field's refusal: ``code`` and ``message`` are what the error body says."""
    return PydanticCustomError(code, message)


# ---------------------------------------------------------------------------------------------
# Field types


def _version(raw: Any) -> int:
    if isinstance(raw, bool) or raw != API_VERSION:
        raise _invalid(f"unsupported version {str(raw)[:20]!r}; this server speaks v{API_VERSION}")
    return API_VERSION


Version = Annotated[int, PlainValidator(_version), WithJsonSchema({"const": API_VERSION})]


def _money(raw: Any) -> Decimal:
    """A decimal string (``"10.00"``) or a JSON number, with at most two decimal places; ranges
    are the services' business. Returned with exactly two places when not huge."""
    if raw is None:
        raise _invalid("is required", code="required")
    if isinstance(raw, bool) or not isinstance(raw, str | int | Decimal):
        raise _invalid('must be a decimal string such as "10.00"')
    if isinstance(raw, str) and (len(raw) > DECIMAL_MAX_LENGTH or not DECIMAL_TEXT.fullmatch(raw)):
        raise _invalid(f'must be a decimal string such as "10.00" (digits, at most {DECIMAL_MAX_LENGTH})')
    value = raw if isinstance(raw, Decimal) else Decimal(raw)
    if not value.is_finite():
        raise _invalid("must be a finite number")
    exponent = value.as_tuple().exponent
    if isinstance(exponent, int) and exponent < -2:
        raise _invalid("at most 2 decimal places")
    if value.adjusted() < 20:
        # 1E+1 from a JSON number is 10.00 on the way back out, not "1E+1".
        value = value.quantize(Decimal("0.01"))
    return value


# A decimal request field: a string of digits with at most two decimal places, or a JSON number
# (read exactly, never through float).
Money = Annotated[
    Decimal,
    PlainValidator(_money),
    WithJsonSchema(
        {"oneOf": [{"type": "string", "pattern": MONEY_PATTERN, "maxLength": DECIMAL_MAX_LENGTH}, {"type": "number"}]}
    ),
]
# A decimal in an answer, always written as a string: a Decimal the code computed, or the text a
# selector already made of one (``DecimalText``).
DecimalOut = Annotated[Decimal, Strict(), WithJsonSchema({"type": "string", "pattern": DECIMAL_PATTERN})]
DecimalText = Annotated[str, WithJsonSchema({"type": "string", "pattern": DECIMAL_PATTERN})]
Id = Annotated[int, Strict(), Field(ge=1, le=MAX_ID)]
# An id in a path or a query string, which arrive as text.
PathId = Annotated[int, Field(ge=1, le=MAX_ID)]
Count = Annotated[int, Field(ge=0)]
Timestamp = Annotated[int, Field(description="epoch milliseconds")]
Text = Annotated[str, Strict()]


class Whole:
    """A query parameter: a whole number in ASCII digits between ``low`` and ``high`` (``int()``
    would also read other scripts' digits, fullwidth ones, `` 4`` or ``+3``)."""

    def __init__(self, low: int, high: int) -> None:
        self.low, self.high = low, high

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        return core_schema.no_info_plain_validator_function(self.read)

    def __get_pydantic_json_schema__(self, schema: Any, handler: Any) -> dict[str, Any]:
        return {"type": "integer", "minimum": self.low, "maximum": self.high}

    def read(self, raw: Any) -> int:
        if isinstance(raw, int) and not isinstance(raw, bool):
            value: int | None = raw
        else:
            text = str(raw)
            value = int(text) if len(text) <= 19 and re.fullmatch(r"[0-9]+", text, re.ASCII) else None
        if value is None or not self.low <= value <= self.high:
            raise _invalid(f"a whole number between {self.low} and {self.high}")
        return value


def _values(choices: Iterable[Any]) -> tuple[str, ...]:
    return tuple(str(choice) for choice in choices)


# The enumerations of the API, each from the code that decides it. Literal types made at run time
# are strings to the type checker.
if TYPE_CHECKING:
    PricePolicy: TypeAlias = str
    CashOutPolicy: TypeAlias = str
    BetState: TypeAlias = str
    OddsFormatName: TypeAlias = str
    View: TypeAlias = str
    GameChoice: TypeAlias = str
    Period: TypeAlias = str
    BreakLength: TypeAlias = str
    RangeName: TypeAlias = str
    BetKind: TypeAlias = str
    BetStatus: TypeAlias = str
    LegResult: TypeAlias = str
    LedgerKind: TypeAlias = str
    MarketStatus: TypeAlias = str
    Check: TypeAlias = str
    Exclusion: TypeAlias = str
else:
    PricePolicy = Literal[_values(Bet.PricePolicy.values)]
    CashOutPolicy = Literal[betting.CASH_OUT_POLICIES]
    BetState = Literal["open", "settled"]
    OddsFormatName = Literal[_values(OddsFormat)]
    View = Literal[VIEWS]
    GameChoice = Literal[GAME_CHOICES]
    Period = Literal[_values(DepositLimit.Period.values)]
    BreakLength = Literal[_values(BREAK_LENGTHS)]
    RangeName = Literal[tuple(RANGES)]
    BetKind = Literal[_values(Bet.Kind.values)]
    BetStatus = Literal[_values(Bet.Status.values)]
    LegResult = Literal[_values(BetLeg.Result.values)]
    LedgerKind = Literal[_values(LedgerEntry.Kind.values)]
    MarketStatus = Literal[_values(Market.Status.values)]
    Check = Literal[tuple(CHECKS)]
    Exclusion = Literal["time_out", "self_exclusion"]


class Model(BaseModel):
    """A response body or a part of one; members a selector adds beyond those described are
    passed on."""

    model_config = ConfigDict(extra="allow")


class Sparse(Model):
    """A ``Model`` some of whose members may be absent (default None): each is left out unless it
    was given."""

    @model_serializer(mode="wrap")
    def _given(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        body: dict[str, Any] = handler(self)
        for name in _absent_unless_given(type(self)):
            if name not in self.model_fields_set:
                del body[name]
        return body


@functools.cache
def _absent_unless_given(model: type[BaseModel]) -> tuple[str, ...]:
    return tuple(name for name, field in model.model_fields.items() if field.default is None)


class Body(BaseModel):
    """A request body: fields not named are ignored; ``v`` is the API version (1)."""

    model_config = ConfigDict(hide_input_in_errors=True)

    v: Version = API_VERSION


class Answer(Model):
    """A response body."""

    v: Literal[1] = 1


# ---------------------------------------------------------------------------------------------
# Errors


class ErrorDetail(BaseModel):
    code: str
    message: Annotated[str, Field(min_length=1)]
    field: Annotated[str, Field(min_length=1)] | None = None


class ErrorBody(BaseModel):
    """Every refusal: ``{"v": 1, "error": {"code", "message", "field"?}}``."""

    v: Literal[1]
    error: ErrorDetail


def refusal(name: str, *codes: str, **extra: Any) -> type[ErrorBody]:
    """An error body whose ``code`` is one of ``codes``; ``extra``: more members of ``error``
    (name → type), or with a leading ``_`` members of the body itself (``_bet``)."""
    outer = {key[1:]: (kind, ...) for key, kind in extra.items() if key.startswith("_")}
    inner = {key: (kind | None, None) for key, kind in extra.items() if not key.startswith("_")}
    code: Any = Literal[codes]
    # pydantic types create_model's fields as keyword arguments it cannot match to a dict of them.
    detail = create_model(f"{name}Detail", __base__=ErrorDetail, code=(code, ...), **inner)  # type: ignore[call-overload]
    return create_model(name, __base__=ErrorBody, error=(detail, ...), **outer)  # type: ignore[call-overload]


BODY_ERRORS = ("bad_json", "invalid", "required", "number_out_of_range")
RetryAfter = Annotated[int, Field(ge=1)]

NotAuthenticated = refusal("NotAuthenticated", "not_authenticated")
CsrfFailed = refusal("CsrfFailed", "csrf_failed")
StaffOnly = refusal("StaffOnly", "staff_only", "csrf_failed")
StaffRead = refusal("StaffRead", "staff_only")
Excluded = refusal("Excluded", "csrf_failed", "excluded", "email_unverified")
BodyRefused = refusal("BodyRefused", *BODY_ERRORS)
QueryRefused = refusal("QueryRefused", "invalid")
TooLarge = refusal("TooLarge", "body_too_large")
NotFound = refusal("NotFound", "not_found")
DatabaseUnavailable = refusal("DatabaseUnavailable", "database_unavailable", "state_unavailable")
CommandUnavailable = refusal("CommandUnavailable", "database_unavailable", "command_not_sent", "state_unavailable")
PlacementUnavailable = refusal(
    "PlacementUnavailable", "database_unavailable", "state_unavailable", "overloaded", retry_after_s=RetryAfter
)


# ---------------------------------------------------------------------------------------------
# Bets


class LegIn(BaseModel):
    selection_id: Id
    price: Annotated[Money, Field(description="the price the punter saw, 1.01-1000")]


class BetPlaceRequest(Body):
    """``POST /api/bets``: one selection is a single, several are an accumulator."""

    idempotency_key: Annotated[
        Text,
        Field(
            min_length=1,
            max_length=MAX_KEY_LENGTH,
            description="printable characters; unique per punter; a retry with the same key and body returns"
            " the first attempt's bet",
        ),
    ]
    stake: Annotated[Money, Field(description="0.10 to 10000.00")]
    price_policy: PricePolicy = Bet.PricePolicy.NONE.value
    selections: Annotated[list[LegIn], Field(min_length=1, max_length=MAX_LEGS)]

    def legs(self) -> tuple[LegRequest, ...]:
        return tuple(LegRequest(selection_id=leg.selection_id, price_seen=leg.price) for leg in self.selections)


class CashOutRequest(Body):
    """``POST /api/bets/<id>/cash-out``: the quote the punter confirmed, and how far it may have
    moved (``accept``, one of ``betting.CASH_OUT_POLICIES``)."""

    quote: Annotated[Money, Field(description="the cash-out quote the punter confirmed (positive)")]
    accept: Annotated[
        CashOutPolicy,
        Field(
            description="How far the quote may have moved: `exact` only the quote confirmed, `better` (default) it"
            " or a higher one, `any` whatever it is now. The current quote is paid."
        ),
    ] = betting.CASH_OUT_POLICY_DEFAULT

    @field_validator("quote")
    @classmethod
    def _positive(cls, quote: Decimal) -> Decimal:
        if quote <= 0:
            raise _invalid("must be positive")
        return quote


def timestamp(value: datetime | None) -> int | None:
    return int(value.timestamp() * 1000) if value is not None else None


class LegOut(Model):
    selection_id: Id
    selection: str
    market_id: Id
    market: str
    event_id: Id
    event: str
    price: DecimalOut
    price_display: str
    price_seen: DecimalOut
    result: LegResult


class CashOutOffer(Model):
    available: bool
    quote: DecimalOut | None


class Rejection(Model):
    code: str
    message: str


class BetOut(Sparse):
    """A bet as the punter sees it. ``cash_out``: the live offer of an open bet; ``accept_at``: a
    bet held by the in-play delay (``pending``) is decided then; ``reject``: why it was refused;
    ``void_reason``: why a trader voided it."""

    id: Id
    idempotency_key: str
    kind: BetKind
    status: BetStatus
    price_policy: PricePolicy
    stake: DecimalOut
    odds: DecimalOut
    odds_display: str
    potential_return: DecimalOut
    payout: DecimalOut | None
    placed_at: Timestamp | None
    settled_at: Timestamp | None
    legs: Annotated[list[LegOut], Field(min_length=1, max_length=MAX_LEGS)]
    cash_out: CashOutOffer | None = None
    accept_at: Timestamp | None = None
    reject: Rejection | None = None
    void_reason: str | None = None

    @classmethod
    def of(cls, bet: Bet, *, cash_out: Decimal | None = None, fmt: OddsFormat = OddsFormat.DECIMAL) -> BetOut:
        body: dict[str, Any] = {
            "id": bet.id,
            "idempotency_key": bet.idempotency_key,
            "kind": bet.kind,
            "status": bet.status,
            "price_policy": bet.price_policy,
            "stake": bet.stake,
            "odds": bet.odds,
            "odds_display": odds_format(price=bet.odds, fmt=fmt),
            "potential_return": bet.potential_return,
            "payout": bet.payout,
            "placed_at": timestamp(bet.placed_at),
            "settled_at": timestamp(bet.settled_at),
            "legs": [
                {
                    "selection_id": leg.selection_id,
                    "selection": leg.selection.name,
                    "market_id": leg.market_id,
                    "market": leg.selection.market.name,
                    "event_id": leg.event_id,
                    "event": leg.selection.market.event.name,
                    "price": leg.price,
                    "price_display": odds_format(price=leg.price, fmt=fmt),
                    "price_seen": leg.price_seen,
                    "result": leg.result,
                }
                for leg in bet.legs.all()
            ],
        }
        if bet.status == Bet.Status.ACCEPTED:
            body["cash_out"] = {"available": cash_out is not None, "quote": cash_out}
        if bet.status == Bet.Status.PENDING:
            body["accept_at"] = timestamp(bet.accept_at)
        if bet.status == Bet.Status.REJECTED:
            body["reject"] = {"code": bet.reject_code, "message": bet.reject_message}
        if bet.status == Bet.Status.VOID and bet.void_reason:
            body["void_reason"] = bet.void_reason
        # One validation of the whole tree (cheaper than a model per leg).
        return cls.model_validate(body)


class BetPlaced(Answer):
    created: bool
    bet: BetOut


class OneBet(Answer):
    bet: BetOut


class BetList(Answer):
    bets: list[BetOut]


class LegPrice(Model):
    selection_id: Id
    price_seen: DecimalOut
    price: DecimalOut


BetRejected = refusal(
    "BetRejected",
    "market_suspended",
    "market_closed",
    "selection_unavailable",
    "price_changed",
    "insufficient_funds",
    selections=list[LegPrice],
    _bet=BetOut,
)
BetRefused = refusal(
    "BetRefused",
    *BODY_ERRORS,
    "stake_too_low",
    "stake_too_high",
    "return_too_high",
    "unknown_selection",
    "same_event",
    "idempotency_key_reused",
)
RateLimited = refusal("RateLimited", "rate_limited", retry_after_s=RetryAfter)
CashOutRefused = refusal("CashOutRefused", "quote_changed", "cash_out_unavailable", quote=DecimalOut)


def bet_rejection_error(bet: Bet) -> ApiError:
    """A rejected bet as a 409 error carrying every leg's current price for the slip."""
    return ApiError(
        409,
        bet.reject_code,
        bet.reject_message,
        field="stake" if bet.reject_code == "insufficient_funds" else "selections",
        extra={
            "selections": [
                {"selection_id": leg.selection_id, "price_seen": leg.price_seen, "price": leg.price}
                for leg in bet.legs.all()
            ]
        },
        attachments={"bet": BetOut.of(bet).model_dump()},
    )


# ---------------------------------------------------------------------------------------------
# Wallet


class PaymentRequest(Body):
    """``POST /api/wallet/deposits`` and ``/api/wallet/withdrawals``: an amount in pounds and
    pence, and the form's ``request_id``: a repeated request with the same id pays once."""

    amount: Annotated[Money, Field(description="pounds and pence, above zero")]
    request_id: Annotated[
        Text,
        Field(
            min_length=1,
            max_length=MAX_REQUEST_ID,
            description="Chosen by the client per payment: a repeat with the same id pays once.",
        ),
    ]


class DepositLimitRequest(Body):
    """``PUT /api/wallet/limits/<period>``: the new limit."""

    amount: Annotated[Money, Field(description="the new limit")]


class BreakRequest(Body):
    """``POST /api/wallet/break``: a time-out or self-exclusion, by length."""

    length: BreakLength


class Balance(Model):
    currency: str
    balance: DecimalOut


class LedgerEntryOut(Model):
    id: Id
    kind: LedgerKind
    amount: DecimalOut
    balance_after: DecimalOut
    bet_id: Id | None
    reference: str
    ts: Timestamp

    @classmethod
    def of(cls, entry: LedgerEntry) -> LedgerEntryOut:
        return cls(
            id=entry.id,
            kind=entry.kind,
            amount=entry.wallet_delta,
            balance_after=entry.balance_after,
            bet_id=entry.bet_id,
            reference=entry.reference,
            ts=int(entry.created_at.timestamp() * 1000),
        )


class WalletOut(Answer):
    wallet: Balance
    ledger: Annotated[list[LedgerEntryOut], Field(max_length=20)]

    @classmethod
    def of(cls, wallet: Wallet | None, entries: list[LedgerEntry]) -> WalletOut:
        return cls(
            wallet=Balance(
                currency=wallet.currency if wallet else "GBP",
                balance=wallet.balance if wallet else Decimal("0.00"),
            ),
            ledger=[LedgerEntryOut.of(entry) for entry in entries],
        )


class PaymentOut(Answer):
    """A deposit or withdrawal and the balance after it; ``created`` is false for a repeat."""

    created: bool
    entry: LedgerEntryOut
    wallet: Balance


class LimitOut(Model):
    period: Period
    amount: DecimalOut
    pending_amount: DecimalOut | None
    pending_from: Timestamp | None


class DepositLimitOut(Answer):
    limit: LimitOut

    @classmethod
    def of(cls, limit: DepositLimit) -> DepositLimitOut:
        return cls(
            limit=LimitOut(
                period=limit.period,
                amount=limit.amount,
                pending_amount=limit.pending_amount,
                pending_from=timestamp(limit.pending_from),
            )
        )


class BreakTaken(Model):
    exclusion: Exclusion
    until: Timestamp


class BreakOut(Answer):
    break_: Annotated[BreakTaken, Field(alias="break")]

    model_config = ConfigDict(serialize_by_alias=True, validate_by_name=True)


PaymentError = refusal("PaymentError", *BODY_ERRORS, "too_low", "too_high")
DepositError = refusal("DepositError", *BODY_ERRORS, "too_low", "too_high", "over_deposit_limit")
WithdrawalError = refusal("WithdrawalError", *BODY_ERRORS, "too_low", "too_high", "insufficient_funds")
PaymentConflict = refusal("PaymentConflict", "request_id_reused")


# ---------------------------------------------------------------------------------------------
# Stream control


def _objects(raw: Any) -> Any:
    """The legs of a claimed bet are objects (the spec reader would skip any that is not)."""
    if isinstance(raw, list) and not all(isinstance(leg, dict) for leg in raw):
        raise _invalid("each leg is an object")
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
            raise _invalid(f"query has unknown fields: {', '.join(sorted(map(str, unknown)))}")
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
            raise _invalid("query must name at least one condition")
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
                raise _invalid(f"a bet has 1 to {MAX_LEGS} legs and a stake of at most {MAX_STAKE}")
            # Not betting.potential_return: rounding that to the penny is what fails on huge values.
            too_much = stake * math.prod(prices) > MAX_RETURN
        except ArithmeticError:
            return self  # not amounts and prices at all: the spec reader names what is wrong
        if too_much:
            raise _invalid(f"a bet's potential return is at most {MAX_RETURN}")
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
        raise _invalid(exc.detail or exc.reason, code="bad_since") from exc


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


# ---------------------------------------------------------------------------------------------
# Staff: trading and operations


class LiabilityRow(Model):
    selection_id: Id
    selection: str
    market_id: Id | None
    market: str
    event: str
    price: Annotated[str, Field(description="the selection's decimal price (empty when it is gone)")]
    liability: DecimalText
    liability_pence: int
    bets: Count


class LiabilityOut(Answer):
    selections: Annotated[list[LiabilityRow], Field(max_length=100)]


class ChannelRow(Model):
    channel: str
    user_id: int
    user: Annotated[str, Field(description="the username (#id when the user is gone)")]
    view: str
    query: dict[str, Any] | None
    markets: list[int]
    status: str
    seq: int
    created: Timestamp
    seen: Timestamp
    partitions: dict[str, int]


class ChannelsOut(Answer):
    channels: list[ChannelRow]


class ChannelEnded(Answer):
    channel: str
    ended: Literal[True]


class SettlementOut(Answer):
    market_id: Id
    market_status: MarketStatus
    total: Count
    settled: Count
    done: bool


class KafkaHealth(Sparse):
    brokers: Count
    replication_factor: Annotated[int, Field(ge=1)] | None = None
    partitions: Count | None = None
    under_replicated: Count
    offline: Count
    leaders: dict[str, int] | None = None


class AlertNow(Model):
    """One alert Prometheus holds: ``firing``, or ``pending`` (over its threshold, not yet for
    its rule's whole ``for``)."""

    name: str
    state: str
    severity: str
    summary: str
    labels: dict[str, str]
    active_at: str | None = None


class AlertsNow(Model):
    available: bool
    error: str | None = None
    alerts: list[AlertNow]


class OpsSnapshot(Answer, Sparse):
    ts: Timestamp
    queries: dict[str, Any]
    latency: dict[str, Any]
    websockets: dict[str, int]
    dead_letters: dict[str, int] | None = None
    late_records: dict[str, int] | None = None
    redis_memory_bytes: Count | None = None
    celery_queue_depth: Count | None = None
    kafka: KafkaHealth | None = None
    latency_markets: list[Id]
    alerts: AlertsNow | None = None


class OpsHistory(Answer):
    range: RangeName
    stride_s: Annotated[int, Field(ge=1)]
    ts: list[Timestamp]
    series: dict[str, list[int | float | None]]


def _millis(raw: Any) -> float:
    # The JSON edge reads 12.5 as Decimal (never float), so a fractional sample is a Decimal here.
    if isinstance(raw, bool) or not isinstance(raw, int | Decimal) or not 0 <= raw <= MAX_SAMPLE_MS:
        raise _invalid(f"e2e and ws are milliseconds between 0 and {MAX_SAMPLE_MS}")
    return float(raw)


Millis = Annotated[
    float, PlainValidator(_millis), WithJsonSchema({"type": "number", "minimum": 0, "maximum": MAX_SAMPLE_MS})
]


class Sample(BaseModel):
    e2e: Millis
    ws: Millis = 0.0


class LatencySamples(BaseModel):
    """Latency samples measured by an operator's browser (ms)."""

    model_config = ConfigDict(hide_input_in_errors=True)

    samples: Annotated[list[Sample], Field(max_length=BROWSER_SAMPLES_PER_POST)]


class LatencyKept(Answer):
    kept: Count


RangeRefused = refusal("RangeRefused", "invalid")
ChannelEndNotFound = refusal("ChannelEndNotFound", "no_such_channel", "not_found")


# ---------------------------------------------------------------------------------------------
# Public: view snapshots, health, this document


class SelectionView(Model):
    id: int
    name: str
    price: DecimalText
    status: str


class MarketView(Sparse):
    market_id: int
    name: str | None = None
    kind: str | None = None
    seq: Annotated[int, Field(ge=0, description="The stream's sequence; 0: not priced yet.")]
    status: str
    tradable: bool
    selections: list[SelectionView]


class CompetitionView(Model):
    id: int
    name: str


class EventView(Sparse):
    id: int
    home: str | None = None
    away: str | None = None
    starts_at: datetime | None = None
    status: str | None = None
    sport: str | None = None
    competition: CompetitionView | None = None
    markets: list[MarketView]


class ViewSnapshot(Model):
    """The same for every punter (no cookie read or set), cacheable. Each market's `seq` and
    `status` go in a `watch`'s `since` (docs/protocol.md), so the stream then brings only what moved."""

    type: Literal["view.snapshot"]
    v: Literal[1]
    view: str
    at: Annotated[int, Field(description="When it was taken (epoch ms).")]
    events: list[EventView]


class ComponentHealth(Model):
    ok: bool


class Health(Model):
    """Whether each component is healthy; why not is for operators (``/healthz/detail``)."""

    ok: bool
    failing: list[Check]
    components: dict[Check, ComponentHealth]


class OpenApiDocument(Model):
    """OpenAPI 3.1."""

    openapi: str
    paths: dict[str, Any]


# ---------------------------------------------------------------------------------------------
# The predictor game


class GameAnswerIn(Body):
    """``POST /api/game/answers``: the punter's answer to one open question of an event's game."""

    event_id: Id
    question_id: Id
    choice: Annotated[GameChoice, Field(description="one of the question's `options`")]


class GameAnswerTaken(Answer):
    """The answer went to the game reducer; its decision (accepted, or refused with its reason,
    then settled) comes on the punter's game channel."""

    answer_id: str
    question_id: int
    choice: str
    status: Literal["sent"]


class GameState(Answer):
    """An event's game: every question (docs/protocol.md, *The predictor game*) and its
    leaderboard's top."""

    event_id: int
    questions: list[dict[str, Any]]
    top: list[dict[str, Any]]
    players: int


class GameMe(Model):
    rank: int | None
    points: int | None


class GameBoard(Answer):
    """A leaderboard: its top, how many play, and the punter's place when logged in."""

    scope: str
    title: str
    top: list[dict[str, Any]]
    players: int
    me: GameMe | None


class GameVoidIn(Body):
    """``POST /trading/api/game/questions/<id>/void``: void one undecided question."""

    event_id: Id
    reason: Annotated[Text, Field(min_length=1, max_length=GAME_VOID_REASON_MAX)]


class GameVoidRequested(Answer):
    question_id: int
    status: Literal["void requested"]


GameAnswerRefused = refusal("GameAnswerRefused", "question_closed", "question_void", "already_answered")
GameNotFound = refusal("GameNotFound", "unknown_question")
GameChoiceRefused = refusal("GameChoiceRefused", *BODY_ERRORS, "bad_choice")
GameDecided = refusal("GameDecided", "question_decided")
GameUnavailable = refusal("GameUnavailable", "database_unavailable", "not_sent")
GameVoidRefused = refusal("GameVoidRefused", *BODY_ERRORS, "bad_reason")
GameDay = Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$", description="a day, YYYY-MM-DD (UTC)")]


# ---------------------------------------------------------------------------------------------
# Path and query parameters

ChannelId = Annotated[str, Field(min_length=1, description="A channel id from `POST /api/streams` (32 characters).")]
Resync = Annotated[str | None, Field(description="`1` asks for a fresh image flagged `resync`")]
