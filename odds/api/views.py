"""Bets and wallet endpoints (``/api/bets``, ``/api/wallet``): each declares its URL, the body
it reads and the answers it gives (``odds/api/schemas/views.py``), and calls one service or selector."""

from __future__ import annotations

from typing import Annotated, cast

from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from ninja import Router, Status
from pydantic import Field

from odds.api.http import Session, answers, error_response, json_response
from odds.api.schemas import common
from odds.api.schemas import views as s
from odds.api.schemas.common import ApiError, Whole
from odds.api.schemas.views import BetOut, BetPlaceRequest
from odds.betting.models import Bet
from odds.betting.selectors.bets import bet_cash_out_quotes, bet_list, wallet_for_user, wallet_statement
from odds.betting.services.bets import (
    BetInvalid,
    BetRateLimited,
    CashOutRejected,
    Placement,
    bet_attempt_count,
    bet_cash_out,
    bet_place,
)
from odds.betting.services.referrals import OfferRefused, offer_answer
from odds.betting.services.wallet import (
    PaymentRefused,
    wallet_break_take,
    wallet_limit_set,
    wallet_payment_deposit,
    wallet_withdraw,
)
from odds.core.formatting import OddsFormat

router = Router(auth=Session())


def _user(request: HttpRequest) -> User:
    # Session() lets only logged-in users through.
    return cast(User, request.user)


def _placement_rate(request: HttpRequest) -> None:
    """Every attempt counts, valid or not: counted before the body is read or the database is
    asked anything (a Redis that cannot count it: 503 ``state_unavailable``)."""
    try:
        bet_attempt_count(user_id=_user(request).pk)
    except BetRateLimited as exc:
        raise rate_limited_error(exc) from exc


def rate_limited_error(exc: BetRateLimited) -> ApiError:
    return ApiError(429, "rate_limited", exc.message, extra={"retry_after_s": exc.retry_after_s})


# Refusals of a bet for the state of the punter's account rather than the bet itself.
ACCOUNT_REFUSALS = (
    "excluded",
    "email_unverified",
    "over_loss_limit",
    "over_wager_limit",
    "session_limit",
    "reality_check",
)


def bet_invalid_error(exc: BetInvalid) -> ApiError:
    # A break the punter chose, an email not verified yet or a limit the punter set is not a fault
    # of the request: 403, with the sentence to show (and a limit's period and reset time).
    return ApiError(
        403 if exc.code in ACCOUNT_REFUSALS else 400, exc.code, exc.message, field=exc.field, extra=exc.extra
    )


def placement_response(placement: Placement) -> HttpResponse:
    """``POST /api/bets``'s answer: 201 accepted, 202 held by the in-play delay (the decision
    follows as a frame on the punter's websocket), 200 a retry, 409 rejected. The ASGI fast path
    (``odds.api.placement``) answers with it too."""
    if placement.rejected:
        return error_response(s.bet_rejection_error(placement.bet))
    body = s.BetPlaced(created=placement.created, bet=BetOut.of(placement.bet)).model_dump()
    if not placement.created:
        return json_response(body, status=200)
    return json_response(body, status=201 if placement.accepted else 202)


EXCLUDED = (
    common.Excluded,
    "Refused: the CSRF token is missing or wrong, the punter's time-out or self-exclusion runs"
    " (`excluded`: the message says until when), or the punter's email is not verified yet"
    " (`email_unverified`).",
)
BET_ACCOUNT_REFUSED = (
    s.BetAccountRefused,
    "Refused for the punter's account; nothing was recorded: the CSRF token is missing or wrong, the"
    " punter's time-out or self-exclusion runs (`excluded`: the message says until when), the email is"
    " not verified yet (`email_unverified`), the stake is over one of the punter's loss or wager limits"
    " (`over_loss_limit`, `over_wager_limit`: `period`, the `limit`, what is `left` of it and `resets_at`,"
    " when it next frees room; null when the stake is above the limit itself), the play session's time"
    " limit is reached (`session_limit`) or a reality check waits to be acknowledged (`reality_check`:"
    " `POST /api/play/reality-check` acknowledges it).",
)


@router.post(
    "bets",
    auth=Session(check=_placement_rate),
    summary="Place a single (one selection) or an accumulator (several, one per event)",
    url_name="bets",
    **answers(
        {
            200: (s.BetPlaced, "A retry of a bet already placed with this key: the first attempt's bet."),
            201: (s.BetPlaced, "Placed: the stake is held."),
            202: (
                s.BetPlaced,
                "Held by the in-play delay (`status: pending`, `accept_at`): the stake is held and the decision"
                " follows as a `bet.decided` websocket frame (and in `GET /api/bets`).",
            ),
        },
        {
            400: (s.BetRefused, "Malformed or against a rule of the bet; nothing was recorded."),
            403: BET_ACCOUNT_REFUSED,
            409: (s.BetRejected, "Refused and recorded as rejected, with every leg's current price."),
            429: (common.RateLimited, "Above the placement rate limit; nothing was recorded."),
            503: (
                common.PlacementUnavailable,
                "The database cannot be reached (`database_unavailable`), Redis cannot count the attempt or read"
                " the prices (`state_unavailable`: at its memory limit, or unreachable), or this web process's"
                " placement pool is saturated (`overloaded`, answered at once); nothing was recorded: send the same"
                " request (same key) again after `Retry-After` seconds.",
                ("Retry-After",),
            ),
        },
        access="write",
        body=True,
        examples={
            "accumulator": {
                "v": 1,
                "idempotency_key": "5b1c0f9e",
                "stake": "10.00",
                "price_policy": "better",
                "selections": [{"selection_id": 101, "price": "2.50"}, {"selection_id": 205, "price": "1.91"}],
            },
            "single": {"idempotency_key": "a1", "stake": 5, "selections": [{"selection_id": 1, "price": 2.1}]},
        },
    ),
)
def bets_place(request: HttpRequest, body: BetPlaceRequest) -> HttpResponse:
    try:
        placement = bet_place(
            user=_user(request),
            idempotency_key=body.idempotency_key,
            stake=body.stake,
            legs=body.legs(),
            price_policy=body.price_policy,
        )
    except BetInvalid as exc:
        raise bet_invalid_error(exc) from exc
    return placement_response(placement)


@router.get(
    "bets",
    summary="My bets, newest first, each open bet with its live cash-out quote",
    **answers(
        {200: (s.BetList, "The bets.")},
        {400: (common.QueryRefused, "A query parameter is invalid (`field` names it).")},
    ),
)
def bets_list(
    request: HttpRequest,
    state: Annotated[s.BetState | None, Field(description="open or settled (rejected bets count as settled)")] = None,
    limit: Annotated[int, Whole(1, s.MAX_LIST), Field(description="how many")] = 50,
    format: Annotated[s.OddsFormatName, Field(description="odds format of `*_display`")] = OddsFormat.DECIMAL.value,
) -> s.BetList:
    found = bet_list(user=_user(request), state=state, limit=limit)
    offers = bet_cash_out_quotes(bets=found)
    fmt = OddsFormat(format)
    return s.BetList(bets=[BetOut.of(bet, cash_out=offers.get(bet.id), fmt=fmt) for bet in found])


@router.post(
    "bets/{int:bet_id}/cash-out",
    summary="Cash out an open bet at the quote the punter saw",
    url_name="bet-cash-out",
    **answers(
        {200: (s.OneBet, "Cashed out: the current quote (`payout`) is paid into the wallet.")},
        {
            403: EXCLUDED,
            404: (common.NotFound, "No such bet of this punter."),
            409: (s.CashOutRefused, "No cash-out at this quote: `quote` is the current offer (null when none)."),
        },
        access="write",
        body=True,
        examples={"quote": {"v": 1, "quote": "12.34"}, "exact": {"v": 1, "quote": "12.34", "accept": "exact"}},
    ),
)
def bet_cash_out_view(request: HttpRequest, bet_id: int, body: s.CashOutRequest) -> s.OneBet:
    try:
        bet = bet_cash_out(user=_user(request), bet_id=bet_id, quote_seen=body.quote, policy=body.accept)
    except Bet.DoesNotExist as exc:
        raise ApiError(404, "not_found", "no such bet") from exc
    except CashOutRejected as exc:
        if exc.code == "excluded":
            raise ApiError(403, exc.code, exc.message, field="account") from exc
        raise ApiError(409, exc.code, exc.message, field="quote", extra={"quote": exc.quote}) from exc
    return s.OneBet(bet=BetOut.of(bet))


@router.post(
    "bets/{int:bet_id}/offer",
    summary="Take or turn down a trader's offer on a referred bet",
    url_name="bet-offer",
    **answers(
        {200: (s.OneBet, "Answered: the bet accepted at the offer (the rest of the stake back), or refused.")},
        {
            404: (common.NotFound, "No such bet of this punter."),
            409: (s.OfferRefused, "No offer waits on this bet, or it ran out."),
        },
        access="write",
        body=True,
        examples={"take": {"v": 1, "accept": True}, "turn down": {"v": 1, "accept": False}},
    ),
)
def bet_offer_view(request: HttpRequest, bet_id: int, body: s.OfferAnswer) -> s.OneBet:
    try:
        bet = offer_answer(user=_user(request), bet_id=bet_id, accept=body.accept)
    except Bet.DoesNotExist as exc:
        raise ApiError(404, "not_found", "no such bet") from exc
    except OfferRefused as exc:
        raise ApiError(409, exc.code, exc.message, field="accept") from exc
    return s.OneBet(bet=BetOut.of(bet))


@router.get(
    "wallet",
    summary="Balance and the latest ledger entries that changed it",
    url_name="wallet",
    **answers({200: (s.WalletOut, "The wallet.")}),
)
def wallet(request: HttpRequest) -> s.WalletOut:
    found = wallet_for_user(user=_user(request))
    entries = wallet_statement(wallet=found) if found is not None else []
    return s.WalletOut.of(found, entries)


def payment_refused_error(exc: PaymentRefused) -> ApiError:
    status = {"excluded": 403, "request_id_reused": 409}.get(exc.code, 400)
    return ApiError(status, exc.code, exc.message, field=exc.field, extra=exc.extra)


def _payment(request: HttpRequest, body: s.PaymentRequest, *, deposit: bool) -> Status[s.PaymentOut]:
    service = wallet_payment_deposit if deposit else wallet_withdraw
    try:
        payment = service(user=_user(request), amount=body.amount, request_id=body.request_id)
    except PaymentRefused as exc:
        raise payment_refused_error(exc) from exc
    entry = payment.entry
    # A deposit that went towards an owed claw-back leaves less than its entry's balance after.
    balance = entry.balance_after if payment.balance is None else payment.balance
    answer = s.PaymentOut(
        created=payment.created,
        entry=s.LedgerEntryOut.of(entry),
        wallet=s.Balance(currency=payment.currency, balance=balance),
    )
    return Status(201 if payment.created else 200, answer)


PAYMENT_EXAMPLES = {"pounds": {"v": 1, "amount": "20.00", "request_id": "5f2c0e9a"}}
PAID = {
    201: (s.PaymentOut, "Paid: the ledger entry and the balance after it."),
    200: (s.PaymentOut, "A repeat of a request already paid (same amount): its entry, nothing paid again."),
}
REUSED = (s.PaymentConflict, "The request id was already used for a payment of another amount; nothing was paid.")


@router.post(
    "wallet/deposits",
    summary="Deposit through the demo payment form",
    url_name="wallet-deposits",
    **answers(
        PAID,
        {
            400: (s.DepositError, "The amount or request id is not acceptable; nothing was paid."),
            403: EXCLUDED,
            409: REUSED,
        },
        access="write",
        body=True,
        examples=PAYMENT_EXAMPLES,
    ),
)
def wallet_deposits(request: HttpRequest, body: s.PaymentRequest) -> Status[s.PaymentOut]:
    return _payment(request, body, deposit=True)


@router.post(
    "wallet/withdrawals",
    summary="Withdraw, at most the balance (open during a break)",
    url_name="wallet-withdrawals",
    **answers(
        PAID,
        {
            400: (s.WithdrawalError, "The amount or request id is not acceptable; nothing was paid."),
            409: REUSED,
        },
        access="write",
        body=True,
        examples=PAYMENT_EXAMPLES,
    ),
)
def wallet_withdrawals(request: HttpRequest, body: s.PaymentRequest) -> Status[s.PaymentOut]:
    return _payment(request, body, deposit=False)


LIMIT_ANSWERS = answers(
    {
        200: (
            s.WalletLimitOut,
            "The limit: `amount` applies now; a raise waits in `pending_amount` until `pending_from`.",
        )
    },
    {400: (s.PaymentError, "The kind, the period or the amount is not acceptable; the limit is unchanged.")},
    access="write",
    body=True,
)


@router.put(
    "wallet/limits/{kind}/{period}",
    summary="Set a deposit, loss or wager limit: lower at once, higher after the cooling-off period",
    url_name="wallet-kind-limit",
    **LIMIT_ANSWERS,
)
def wallet_kind_limit(
    request: HttpRequest, kind: s.LimitKind, period: s.Period, body: s.LimitRequest
) -> s.WalletLimitOut:
    try:
        limit = wallet_limit_set(user=_user(request), kind=kind, period=period, amount=body.amount)
    except PaymentRefused as exc:
        raise payment_refused_error(exc) from exc
    return s.WalletLimitOut.of(limit)


@router.put(
    "wallet/limits/{period}",
    summary="Set a deposit limit (as `PUT /api/wallet/limits/deposit/{period}`)",
    url_name="wallet-limit",
    **LIMIT_ANSWERS,
)
def wallet_limit(request: HttpRequest, period: s.Period, body: s.LimitRequest) -> s.WalletLimitOut:
    return wallet_kind_limit(request, "deposit", period, body)


@router.post(
    "wallet/break",
    summary="Take a time-out or self-exclude; it cannot be shortened",
    url_name="wallet-break",
    by_alias=True,
    **answers(
        {200: (s.BreakOut, "The break that runs now (a longer one already running stays).")},
        access="write",
        body=True,
    ),
)
def wallet_break(request: HttpRequest, body: s.BreakRequest) -> s.BreakOut:
    try:
        found = wallet_break_take(user=_user(request), length=body.length)
    except PaymentRefused as exc:
        raise payment_refused_error(exc) from exc
    until = common.timestamp(found.excluded_until)
    assert until is not None  # a break was just taken or one runs longer
    taken = s.BreakTaken(exclusion=found.exclusion, until=until)
    return s.BreakOut(break_=taken)
