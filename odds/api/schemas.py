"""Versioned request and response bodies of the REST API (``/api/``), with their validation.

Money and prices travel as decimal strings (``"10.00"``, ``"2.50"``); requests may also send
JSON numbers, which are read exactly as decimals, never through float.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

import orjson

from odds.formatting import OddsFormat, odds_format
from odds.models import Bet, DepositLimit, LedgerEntry, Wallet
from odds.services.placement import LegRequest
from reducers import betting

API_VERSION = 1
DECIMAL_MAX_LENGTH = 32


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


def invalid(field: str, message: str, code: str = "invalid") -> ApiError:
    return ApiError(400, code, message, field=field)


def _default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return str(value)
    raise TypeError(f"cannot encode {type(value).__name__}")


def dumps(payload: dict[str, Any]) -> bytes:
    return orjson.dumps(payload, default=_default)


def _object(raw: Any, name: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise invalid(name, "must be a JSON object")
    return raw


def _version(body: dict[str, Any]) -> None:
    version = body.get("v", API_VERSION)
    if isinstance(version, bool) or version != API_VERSION:
        raise invalid("v", f"unsupported version {str(version)[:20]!r}; this server speaks v{API_VERSION}")


# Digits with an optional fraction, ASCII only: Decimal() would also take " 1e3 ", "1_000", "+5"
# and other scripts' digits, none of which a client means as money.
DECIMAL_TEXT = re.compile(r"-?[0-9]+(\.[0-9]+)?", re.ASCII)


def _decimal(raw: Any, name: str, *, places: int) -> Decimal:
    """A decimal string (``"10.00"``) or a JSON number, with at most ``places`` decimal places;
    ranges are the services' business. Returned with exactly ``places`` places when not huge."""
    if raw is None:
        raise invalid(name, "is required", code="required")
    if isinstance(raw, bool) or not isinstance(raw, (str, int, Decimal)):
        raise invalid(name, 'must be a decimal string such as "10.00"')
    if isinstance(raw, str) and (len(raw) > DECIMAL_MAX_LENGTH or not DECIMAL_TEXT.fullmatch(raw)):
        raise invalid(name, f'must be a decimal string such as "10.00" (digits, at most {DECIMAL_MAX_LENGTH})')
    value = raw if isinstance(raw, Decimal) else Decimal(raw)
    if not value.is_finite():
        raise invalid(name, "must be a finite number")
    exponent = value.as_tuple().exponent
    if isinstance(exponent, int) and exponent < -places:
        raise invalid(name, f"at most {places} decimal places")
    if value.adjusted() < 20:
        # 1E+1 from a JSON number is 10.00 on the way back out, not "1E+1".
        value = value.quantize(Decimal(1).scaleb(-places))
    return value


def _positive_int(raw: Any, name: str) -> int:
    if raw is None:
        raise invalid(name, "is required", code="required")
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 1:
        raise invalid(name, "must be a positive integer")
    return raw


@dataclass(frozen=True)
class BetPlaceRequest:
    """``POST /api/bets``: one selection is a single, several are an accumulator."""

    idempotency_key: str
    stake: Decimal
    price_policy: str
    selections: tuple[LegRequest, ...]

    @classmethod
    def from_json(cls, raw: Any) -> BetPlaceRequest:
        body = _object(raw, "body")
        _version(body)
        key = body.get("idempotency_key")
        if key is None:
            raise invalid("idempotency_key", "is required", code="required")
        if not isinstance(key, str):
            raise invalid("idempotency_key", "must be a string")
        stake = _decimal(body.get("stake"), "stake", places=2)
        policy = body.get("price_policy", Bet.PricePolicy.NONE)
        if not isinstance(policy, str) or policy not in Bet.PricePolicy.values:
            raise invalid("price_policy", f"must be one of {', '.join(Bet.PricePolicy.values)}")
        raw_selections = body.get("selections")
        if raw_selections is None:
            raise invalid("selections", "is required", code="required")
        if not isinstance(raw_selections, list):
            raise invalid("selections", "must be a list of {selection_id, price}")
        legs = []
        for index, item in enumerate(raw_selections):
            name = f"selections[{index}]"
            leg = _object(item, name)
            legs.append(
                LegRequest(
                    selection_id=_positive_int(leg.get("selection_id"), f"{name}.selection_id"),
                    price_seen=_decimal(leg.get("price"), f"{name}.price", places=2),
                )
            )
        return cls(idempotency_key=key, stake=stake, price_policy=policy, selections=tuple(legs))


@dataclass(frozen=True)
class CashOutRequest:
    """``POST /api/bets/<id>/cash-out``: the quote the punter confirmed, and how far it may have
    moved (``accept``, one of ``betting.CASH_OUT_POLICIES``)."""

    quote: Decimal
    accept: str = betting.CASH_OUT_POLICY_DEFAULT

    @classmethod
    def from_json(cls, raw: Any) -> CashOutRequest:
        body = _object(raw, "body")
        _version(body)
        quote = _decimal(body.get("quote"), "quote", places=2)
        if quote <= 0:
            raise invalid("quote", "must be positive")
        accept = body.get("accept", betting.CASH_OUT_POLICY_DEFAULT)
        if not isinstance(accept, str) or accept not in betting.CASH_OUT_POLICIES:
            raise invalid("accept", f"must be one of {', '.join(betting.CASH_OUT_POLICIES)}")
        return cls(quote=quote, accept=accept)


def _ts(value: datetime | None) -> int | None:
    return int(value.timestamp() * 1000) if value is not None else None


@dataclass(frozen=True)
class BetOut:
    """A bet as the punter sees it, with the live cash-out offer of an open bet."""

    bet: Bet
    cash_out: Decimal | None = None
    fmt: OddsFormat = OddsFormat.DECIMAL

    def to_json(self) -> dict[str, Any]:
        bet = self.bet
        body: dict[str, Any] = {
            "id": bet.id,
            "idempotency_key": bet.idempotency_key,
            "kind": bet.kind,
            "status": bet.status,
            "price_policy": bet.price_policy,
            "stake": bet.stake,
            "odds": bet.odds,
            "odds_display": odds_format(price=bet.odds, fmt=self.fmt),
            "potential_return": bet.potential_return,
            "payout": bet.payout,
            "placed_at": _ts(bet.placed_at),
            "settled_at": _ts(bet.settled_at),
            "legs": [
                {
                    "selection_id": leg.selection_id,
                    "selection": leg.selection.name,
                    "market_id": leg.market_id,
                    "market": leg.selection.market.name,
                    "event_id": leg.event_id,
                    "event": leg.selection.market.event.name,
                    "price": leg.price,
                    "price_display": odds_format(price=leg.price, fmt=self.fmt),
                    "price_seen": leg.price_seen,
                    "result": leg.result,
                }
                for leg in bet.legs.all()
            ],
        }
        if bet.status == Bet.Status.ACCEPTED:
            body["cash_out"] = {"available": self.cash_out is not None, "quote": self.cash_out}
        if bet.status == Bet.Status.PENDING:
            body["accept_at"] = _ts(bet.accept_at)
        if bet.status == Bet.Status.REJECTED:
            body["reject"] = {"code": bet.reject_code, "message": bet.reject_message}
        return body


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
        attachments={"bet": BetOut(bet=bet).to_json()},
    )


@dataclass(frozen=True)
class WalletOut:
    wallet: Wallet | None
    entries: list[LedgerEntry]

    def to_json(self) -> dict[str, Any]:
        wallet = self.wallet
        return {
            "v": API_VERSION,
            "wallet": {
                "currency": wallet.currency if wallet else "GBP",
                "balance": wallet.balance if wallet else Decimal("0.00"),
            },
            "ledger": [
                {
                    "id": entry.id,
                    "kind": entry.kind,
                    "amount": entry.wallet_delta,
                    "balance_after": entry.balance_after,
                    "bet_id": entry.bet_id,
                    "reference": entry.reference,
                    "ts": _ts(entry.created_at),
                }
                for entry in self.entries
            ],
        }


def _text_field(body: dict[str, Any], name: str) -> str:
    value = body.get(name)
    if value is None:
        raise invalid(name, "is required", code="required")
    if not isinstance(value, str):
        raise invalid(name, "must be a string")
    return value


@dataclass(frozen=True)
class PaymentRequest:
    """``POST /api/wallet/deposits`` and ``/api/wallet/withdrawals``: an amount in pounds and
    pence, and the form's ``request_id``: a repeated request with the same id pays once."""

    amount: Decimal
    request_id: str

    @classmethod
    def from_json(cls, raw: Any) -> PaymentRequest:
        body = _object(raw, "body")
        _version(body)
        return cls(amount=_decimal(body.get("amount"), "amount", places=2), request_id=_text_field(body, "request_id"))


@dataclass(frozen=True)
class DepositLimitRequest:
    """``PUT /api/wallet/limits/<period>``: the new limit."""

    amount: Decimal

    @classmethod
    def from_json(cls, raw: Any) -> DepositLimitRequest:
        body = _object(raw, "body")
        _version(body)
        return cls(amount=_decimal(body.get("amount"), "amount", places=2))


@dataclass(frozen=True)
class BreakRequest:
    """``POST /api/wallet/break``: a time-out or self-exclusion, by length."""

    length: str

    @classmethod
    def from_json(cls, raw: Any) -> BreakRequest:
        body = _object(raw, "body")
        _version(body)
        return cls(length=_text_field(body, "length"))


@dataclass(frozen=True)
class LedgerEntryOut:
    entry: LedgerEntry

    def to_json(self) -> dict[str, Any]:
        entry = self.entry
        return {
            "id": entry.id,
            "kind": entry.kind,
            "amount": entry.wallet_delta,
            "balance_after": entry.balance_after,
            "bet_id": entry.bet_id,
            "reference": entry.reference,
            "ts": _ts(entry.created_at),
        }


@dataclass(frozen=True)
class PaymentOut:
    """A deposit or withdrawal and the balance after it; ``created`` is false for a repeat."""

    entry: LedgerEntry
    created: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "v": API_VERSION,
            "created": self.created,
            "entry": LedgerEntryOut(entry=self.entry).to_json(),
            "wallet": {"currency": "GBP", "balance": self.entry.balance_after},
        }


@dataclass(frozen=True)
class DepositLimitOut:
    limit: DepositLimit

    def to_json(self) -> dict[str, Any]:
        limit = self.limit
        return {
            "v": API_VERSION,
            "limit": {
                "period": limit.period,
                "amount": limit.amount,
                "pending_amount": limit.pending_amount,
                "pending_from": _ts(limit.pending_from),
            },
        }


@dataclass(frozen=True)
class BreakOut:
    wallet: Wallet

    def to_json(self) -> dict[str, Any]:
        return {
            "v": API_VERSION,
            "break": {"exclusion": self.wallet.exclusion, "until": _ts(self.wallet.excluded_until)},
        }
