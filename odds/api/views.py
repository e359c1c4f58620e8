"""REST API views: parse the request, call one service or selector, render JSON."""

from __future__ import annotations

from typing import Any, cast

from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse

from odds.api.http import api_view, error_response, json_body, json_response, query_int
from odds.api.schemas import (
    API_VERSION,
    ApiError,
    BetOut,
    BetPlaceRequest,
    BreakOut,
    BreakRequest,
    CashOutRequest,
    DepositLimitOut,
    DepositLimitRequest,
    PaymentOut,
    PaymentRequest,
    WalletOut,
    bet_rejection_error,
    invalid,
)
from odds.formatting import OddsFormat
from odds.models import Bet
from odds.selectors.bets import bet_cash_out_quotes, bet_list, wallet_for_user, wallet_statement
from odds.services.bets import (
    BetInvalid,
    BetRateLimited,
    CashOutRejected,
    Placement,
    bet_cash_out,
    bet_place,
    bet_rate_check,
)
from odds.services.wallet import (
    PaymentRefused,
    deposit_limit_set,
    wallet_break_take,
    wallet_payment_deposit,
    wallet_withdraw,
)

MAX_LIST = 200


def _user(request: HttpRequest) -> User:
    # api_view lets only logged-in users through.
    return cast(User, request.user)


def _odds_format(request: HttpRequest) -> OddsFormat:
    raw = request.GET.get("format", OddsFormat.DECIMAL)
    try:
        return OddsFormat(raw)
    except ValueError as exc:
        raise invalid("format", f"one of {', '.join(OddsFormat)}") from exc


@api_view(methods=("GET", "POST"))
def bets(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        return _bet_place(request)
    return _bet_list(request)


def _bet_place(request: HttpRequest) -> HttpResponse:
    try:
        bet_rate_check(user_id=_user(request).pk)
    except BetRateLimited as exc:
        raise rate_limited_error(exc) from exc
    body = BetPlaceRequest.from_json(json_body(request))
    try:
        placement = bet_place(
            user=_user(request),
            idempotency_key=body.idempotency_key,
            stake=body.stake,
            legs=body.selections,
            price_policy=body.price_policy,
        )
    except BetInvalid as exc:
        raise bet_invalid_error(exc) from exc
    return placement_response(placement)


def rate_limited_error(exc: BetRateLimited) -> ApiError:
    return ApiError(429, "rate_limited", exc.message, extra={"retry_after_s": exc.retry_after_s})


def bet_invalid_error(exc: BetInvalid) -> ApiError:
    # A break the punter chose is not a fault of the request: 403, with the sentence to show.
    return ApiError(403 if exc.code == "excluded" else 400, exc.code, exc.message, field=exc.field)


def placement_response(placement: Placement) -> HttpResponse:
    """``POST /api/bets``'s answer: 201 accepted, 202 held by the in-play delay (the decision
    follows as a frame on the punter's websocket), 200 a retry, 409 rejected."""
    if placement.rejected:
        return error_response(bet_rejection_error(placement.bet))
    payload: dict[str, Any] = {
        "v": API_VERSION,
        "created": placement.created,
        "bet": BetOut(bet=placement.bet).to_json(),
    }
    if not placement.created:
        return json_response(payload, status=200)
    return json_response(payload, status=201 if placement.accepted else 202)


def _bet_list(request: HttpRequest) -> HttpResponse:
    state = request.GET.get("state")
    if state not in (None, "open", "settled"):
        raise invalid("state", "open or settled")
    limit = query_int(request, name="limit", default=50, low=1, high=MAX_LIST)
    fmt = _odds_format(request)
    found = bet_list(user=_user(request), state=state, limit=limit)
    offers = bet_cash_out_quotes(bets=found)
    return json_response(
        {"v": API_VERSION, "bets": [BetOut(bet=bet, cash_out=offers.get(bet.id), fmt=fmt).to_json() for bet in found]}
    )


@api_view(methods=("POST",))
def bet_cash_out_view(request: HttpRequest, bet_id: int) -> HttpResponse:
    body = CashOutRequest.from_json(json_body(request))
    try:
        bet = bet_cash_out(user=_user(request), bet_id=bet_id, quote_seen=body.quote, policy=body.accept)
    except Bet.DoesNotExist as exc:
        raise ApiError(404, "not_found", "no such bet") from exc
    except CashOutRejected as exc:
        if exc.code == "excluded":
            raise ApiError(403, exc.code, exc.message, field="account") from exc
        raise ApiError(409, exc.code, exc.message, field="quote", extra={"quote": exc.quote}) from exc
    return json_response({"v": API_VERSION, "bet": BetOut(bet=bet).to_json()})


@api_view(methods=("GET",))
def wallet(request: HttpRequest) -> HttpResponse:
    found = wallet_for_user(user=_user(request))
    entries = wallet_statement(wallet=found) if found is not None else []
    return json_response(WalletOut(wallet=found, entries=entries).to_json())


def payment_refused_error(exc: PaymentRefused) -> ApiError:
    status = 403 if exc.code == "excluded" else 400
    return ApiError(status, exc.code, exc.message, field=exc.field)


def _payment(request: HttpRequest, *, deposit: bool) -> HttpResponse:
    body = PaymentRequest.from_json(json_body(request))
    service = wallet_payment_deposit if deposit else wallet_withdraw
    try:
        payment = service(user=_user(request), amount=body.amount, request_id=body.request_id)
    except PaymentRefused as exc:
        raise payment_refused_error(exc) from exc
    status = 201 if payment.created else 200
    return json_response(PaymentOut(entry=payment.entry, created=payment.created).to_json(), status=status)


@api_view(methods=("POST",))
def wallet_deposits(request: HttpRequest) -> HttpResponse:
    return _payment(request, deposit=True)


@api_view(methods=("POST",))
def wallet_withdrawals(request: HttpRequest) -> HttpResponse:
    return _payment(request, deposit=False)


@api_view(methods=("PUT",))
def wallet_limit(request: HttpRequest, period: str) -> HttpResponse:
    body = DepositLimitRequest.from_json(json_body(request))
    try:
        limit = deposit_limit_set(user=_user(request), period=period, amount=body.amount)
    except PaymentRefused as exc:
        raise payment_refused_error(exc) from exc
    return json_response(DepositLimitOut(limit=limit).to_json())


@api_view(methods=("POST",))
def wallet_break(request: HttpRequest) -> HttpResponse:
    body = BreakRequest.from_json(json_body(request))
    try:
        found = wallet_break_take(user=_user(request), length=body.length)
    except PaymentRefused as exc:
        raise payment_refused_error(exc) from exc
    return json_response(BreakOut(wallet=found).to_json())
