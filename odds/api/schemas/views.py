"""The bets and wallet router's bodies (``odds/api/views.py``): placing a bet and cashing it out, the
punter's bets, the wallet's payments, limits and breaks."""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, field_validator

from odds.api.schemas.common import (
    BODY_ERRORS,
    Answer,
    ApiError,
    Body,
    DecimalOut,
    Id,
    LegResult,
    Model,
    Money,
    Sparse,
    Text,
    Timestamp,
    invalid,
    refusal,
    timestamp,
    values,
)
from odds.betting.models import Bet, LedgerEntry, Wallet, WalletLimit
from odds.betting.services.placement import MAX_KEY_LENGTH, MAX_LEGS, LegRequest
from odds.betting.services.wallet import BREAK_LENGTHS, MAX_REQUEST_ID
from odds.core.formatting import OddsFormat, odds_format
from reducers import betting
from reducers.rules import BOOK_CURRENCY

MAX_LIST = 200

# Literal types made at run time are strings to the type checker.
if TYPE_CHECKING:
    PricePolicy: TypeAlias = str
    CashOutPolicy: TypeAlias = str
    BetState: TypeAlias = str
    OddsFormatName: TypeAlias = str
    Period: TypeAlias = str
    LimitKind: TypeAlias = str
    BreakLength: TypeAlias = str
    BetKind: TypeAlias = str
    BetStatus: TypeAlias = str
    LedgerKind: TypeAlias = str
    Exclusion: TypeAlias = str
else:
    PricePolicy = Literal[values(Bet.PricePolicy.values)]
    CashOutPolicy = Literal[betting.CASH_OUT_POLICIES]
    BetState = Literal["open", "settled"]
    OddsFormatName = Literal[values(OddsFormat)]
    Period = Literal[values(WalletLimit.Period.values)]
    LimitKind = Literal[values(WalletLimit.Kind.values)]
    BreakLength = Literal[values(BREAK_LENGTHS)]
    BetKind = Literal[values(Bet.Kind.values)]
    BetStatus = Literal[values(Bet.Status.values)]
    LedgerKind = Literal[values(LedgerEntry.Kind.values)]
    Exclusion = Literal["time_out", "self_exclusion"]


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
            raise invalid("must be positive")
        return quote


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


class OfferOut(Model):
    """A trader's counter-offer on a referred bet: the stake, the single's new price (null: the
    prices taken) and the return, in the wallet's currency; ``until`` when it runs out."""

    stake: DecimalOut
    price: DecimalOut | None
    potential_return: DecimalOut
    until: Timestamp


class BetOut(Sparse):
    """A bet as the punter sees it. ``cash_out``: the live offer of an open bet; ``accept_at``: a
    bet held by the in-play delay or referred to a trader (``pending``) is decided then;
    ``offer``: a trader's counter-offer on a referred bet, for the punter to take or turn down;
    ``reject``: why it was refused; ``void_reason``: why a trader voided it."""

    id: Id
    idempotency_key: str
    kind: BetKind
    status: BetStatus
    price_policy: PricePolicy
    stake: DecimalOut
    odds: DecimalOut
    odds_display: str
    potential_return: DecimalOut
    payout: DecimalOut
    placed_at: Timestamp
    settled_at: Timestamp | None
    legs: Annotated[list[LegOut], Field(min_length=1, max_length=MAX_LEGS)]
    cash_out: CashOutOffer | None = None
    accept_at: Timestamp | None = None
    reject: Rejection | None = None
    void_reason: str | None = None
    offer: OfferOut | None = None

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
            if bet.offered_at is not None:
                body["offer"] = {
                    "stake": bet.offer_stake,
                    "price": bet.offer_price,
                    "potential_return": bet.offer_return,
                    "until": timestamp(bet.accept_at),
                }
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
# A deposit or bet over a limit says which period's limit, what is left of it and when it next
# frees room (``resets_at``: null when the amount is above the limit itself).
LIMIT_BREACH: dict[str, Any] = {"period": Period, "limit": DecimalOut, "left": DecimalOut, "resets_at": Timestamp}
# A bet refused for the state of the punter's account, their limits or their play session
# (odds/betting/play.py).
BetAccountRefused = refusal(
    "BetAccountRefused",
    "csrf_failed",
    "excluded",
    "email_unverified",
    "over_loss_limit",
    "over_wager_limit",
    "session_limit",
    "reality_check",
    **LIMIT_BREACH,
)
CashOutRefused = refusal("CashOutRefused", "quote_changed", "cash_out_unavailable", quote=DecimalOut)
OfferRefused = refusal("OfferRefused", "no_offer", "offer_expired")


class OfferAnswer(Body):
    """``POST /api/bets/<id>/offer``: whether the punter takes the trader's offer."""

    accept: Annotated[bool, Field(description="true takes the offer, false turns it down")]


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


class LimitRequest(Body):
    """``PUT /api/wallet/limits/<kind>/<period>`` (and ``/api/wallet/limits/<period>``, a deposit
    limit): the new limit."""

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
    owed: DecimalOut = Field(
        description="what corrected results clawed back beyond the balance; the next credits are taken for it first"
    )
    ledger: Annotated[list[LedgerEntryOut], Field(max_length=20)]

    @classmethod
    def of(cls, wallet: Wallet | None, entries: list[LedgerEntry]) -> WalletOut:
        return cls(
            wallet=Balance(
                currency=wallet.currency if wallet else BOOK_CURRENCY,
                balance=wallet.balance if wallet else Decimal("0.00"),
            ),
            owed=wallet.owed if wallet else Decimal("0.00"),
            ledger=[LedgerEntryOut.of(entry) for entry in entries],
        )


class PaymentOut(Answer):
    """A deposit or withdrawal and the balance after it; ``created`` is false for a repeat."""

    created: bool
    entry: LedgerEntryOut
    wallet: Balance


class LimitOut(Model):
    kind: LimitKind
    period: Period
    amount: DecimalOut
    pending_amount: DecimalOut | None
    pending_from: Timestamp | None


class WalletLimitOut(Answer):
    limit: LimitOut

    @classmethod
    def of(cls, limit: WalletLimit) -> WalletLimitOut:
        return cls(
            limit=LimitOut(
                kind=limit.kind,
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
DepositError = refusal("DepositError", *BODY_ERRORS, "too_low", "too_high", "over_deposit_limit", **LIMIT_BREACH)
WithdrawalError = refusal("WithdrawalError", *BODY_ERRORS, "too_low", "too_high", "insufficient_funds")
PaymentConflict = refusal("PaymentConflict", "request_id_reused")
