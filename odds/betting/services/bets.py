"""Bet placement, cash-out and voiding.

Placement is one statement under a lock on the punter's wallet (``odds.betting.services.placement``):
look up the idempotency key, check every leg against the catalogue and its live quote, then
accept (hold the stake in the ledger, queue the ``placed`` event in the outbox), hold it for the
in-play delay, or record the rejection. A retry with the same key returns the bet of the first
attempt, accepted or rejected, and never places a second one.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import AnonymousUser, User
from django.db import connection, transaction
from django.utils import timezone

from odds.betting.models import Bet, LedgerEntry
from odds.betting.selectors.bets import bet_cash_out_quote
from odds.betting.services.announce import bet_settled_announce
from odds.betting.services.placement import (
    MAX_LEGS,
    MAX_RETURN,
    MAX_STAKE,
    MIN_STAKE,
    PLACE_SQL,
    BetInvalid,
    LegRequest,
    Placement,
    bet_request_validate,
    placement_params,
    placement_result,
    selection_markets,
)
from odds.betting.services.wallet import (
    PaymentRefused,
    exclusion_check,
    ledger_post,
    stake_refund,
    stake_release,
    wallet_lock,
)
from odds.catalogue.models import Selection
from odds.catalogue.selectors.prices import live_states
from odds.core.connections import redis_shared
from odds.core.metrics import LatencySamples
from odds.core.outbox import outbox_enqueue
from reducers import betting, keys, schemas, topics
from reducers.latency import STAGE_PLACEMENT

__all__ = [
    "MAX_LEGS",
    "MAX_RETURN",
    "MAX_STAKE",
    "MIN_STAKE",
    "BetInvalid",
    "LegRequest",
    "Placement",
    "bet_place",
]

log = logging.getLogger(__name__)

Account = LedgerEntry.Account
Kind = LedgerEntry.Kind

# Placement attempts per punter per fixed window; far above what a person clicks, low enough
# that a script hammering the wallet lock is turned away before it reaches the database.
PLACE_LIMIT = 20
PLACE_WINDOW_S = 10


class BetRateLimited(Exception):
    """Too many placement attempts by one punter in the current window; nothing was recorded."""

    def __init__(self, *, retry_after_s: int) -> None:
        super().__init__(f"at most {PLACE_LIMIT} bets every {PLACE_WINDOW_S} seconds")
        self.message = str(self)
        self.retry_after_s = retry_after_s


@dataclass(frozen=True)
class RateWindow:
    """The current fixed window of one punter's placement attempts: its Redis counter and when it ends."""

    key: str
    ends_at: float

    def count(self, pipe: Any) -> None:
        """Queue on ``pipe`` (sync or asyncio) the attempt's count; its reply is the count so far."""
        pipe.incr(self.key)
        pipe.expire(self.key, PLACE_WINDOW_S * 2)

    def check(self, count: int, *, now: float) -> None:
        """Raise ``BetRateLimited`` when ``count`` attempts are above ``PLACE_LIMIT``."""
        if count > PLACE_LIMIT:
            raise BetRateLimited(retry_after_s=max(1, int(self.ends_at - now) + 1))


def bet_rate_window(*, user_id: int, now: float) -> RateWindow:
    window = int(now // PLACE_WINDOW_S)
    return RateWindow(key=keys.rate_limit("bets", str(user_id), window), ends_at=(window + 1) * PLACE_WINDOW_S)


def bet_rate_check(*, user_id: int) -> None:
    """Count one placement attempt; raise ``BetRateLimited`` above ``PLACE_LIMIT`` in the window."""
    now = time.time()
    window = bet_rate_window(user_id=user_id, now=now)
    pipe = redis_shared().pipeline(transaction=False)
    window.count(pipe)
    window.check(int(pipe.execute()[0]), now=now)


class CashOutRejected(Exception):
    """No cash-out at the quote the punter saw. ``quote`` is the current offer, if any."""

    def __init__(self, *, code: str, message: str, quote: Decimal | None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.quote = quote


def bet_event(*, bet: Bet, type: str) -> schemas.BetEvent:
    """The bets-topic record of one change of a bet; ``event_id`` is stable per bet and change."""
    return schemas.BetEvent(
        event_id=f"{bet.id}:{type}",
        type=type,
        bet_id=bet.id,
        user_id=bet.user_id,
        stake=bet.stake,
        potential_return=bet.potential_return,
        legs=tuple(
            schemas.BetLeg(
                selection_id=leg.selection_id, market_id=leg.market_id, event_id=leg.event_id, price=leg.price
            )
            for leg in bet.legs.all()
        ),
        ts=int(time.time() * 1000),
    )


def bet_event_enqueue(*, bet: Bet, type: str) -> None:
    event = bet_event(bet=bet, type=type)
    outbox_enqueue(topic=topics.bets(), key=event.key(), value=event.encode())


# Request to decided, for the placement objective's alert (``sportsbook_latency_seconds``).
PLACEMENT_LATENCY = LatencySamples(STAGE_PLACEMENT)


def bet_place(
    *,
    user: User,
    idempotency_key: str,
    stake: Decimal,
    legs: Sequence[LegRequest],
    price_policy: str = Bet.PricePolicy.NONE,
) -> Placement:
    """Place a single (one leg) or an accumulator (several legs, one per event).

    Raises ``BetInvalid`` for a malformed request (nothing is recorded). Otherwise returns the
    bet: ``accepted`` with its stake held; ``pending`` with its stake held until ``accept_at``
    when a leg's event is in play (the in-play delay of its sport); or ``rejected`` with
    ``reject_code`` one of ``market_suspended``, ``market_closed``, ``selection_unavailable``,
    ``price_changed`` or ``insufficient_funds`` and every leg's current price. ``created`` is
    false on a retry. The money part is one statement (``odds.betting.services.placement``).
    """
    bet_request_validate(idempotency_key=idempotency_key, stake=stake, legs=legs, price_policy=price_policy)
    started = time.perf_counter()
    ids = [leg.selection_id for leg in legs]
    missing = selection_markets.missing(ids)
    if missing:
        selection_markets.learn(Selection.objects.filter(id__in=missing).values_list("id", "market_id"))
    markets = selection_markets.of(ids)
    params = placement_params(
        user_id=user.pk,
        idempotency_key=idempotency_key,
        stake=stake,
        legs=legs,
        price_policy=price_policy,
        markets=markets,
        states=live_states(market_ids=markets.values()),
        topic=topics.bets(),
    )
    with connection.cursor() as cursor:
        cursor.execute(PLACE_SQL, params)
        (answer,) = cursor.fetchone()
    placement = placement_result(answer)
    PLACEMENT_LATENCY.observe(time.perf_counter() - started)
    return placement


def bet_cash_out(*, user: User, bet_id: int, quote_seen: Decimal, policy: str = betting.CASH_OUT_POLICY_DEFAULT) -> Bet:
    """Close an open bet at the current cash-out quote, if it moved from the quote the punter
    confirmed (``quote_seen``) only as far as ``policy`` accepts (``betting.CASH_OUT_POLICIES``).
    The punter is paid the current quote: the one confirmed when nothing moved.

    Raises ``Bet.DoesNotExist`` for another punter's bet and ``CashOutRejected`` with the current
    quote (``quote_changed``) or without one (``cash_out_unavailable``).
    """
    with transaction.atomic():
        wallet = wallet_lock(user=user)
        bet = Bet.objects.select_for_update().get(id=bet_id, user=user)
        try:
            exclusion_check(wallet=wallet)
        except PaymentRefused as exc:
            raise CashOutRejected(code="excluded", message=exc.message, quote=None) from exc
        if bet.status != Bet.Status.ACCEPTED:
            raise CashOutRejected(code="cash_out_unavailable", message=f"the bet is {bet.status}", quote=None)
        quote = bet_cash_out_quote(bet=bet)
        if quote is None or quote <= 0:
            raise CashOutRejected(
                code="cash_out_unavailable", message="no cash-out is offered on this bet now", quote=None
            )
        if not betting.cash_out_acceptable(seen=quote_seen, current=quote, policy=policy):
            raise CashOutRejected(
                code="quote_changed", message=f"the cash-out quote moved from {quote_seen} to {quote}", quote=quote
            )
        stake_release(wallet=wallet, bet=bet)
        ledger_post(
            wallet=wallet, kind=Kind.CASH_OUT, debit=Account.HOUSE, credit=Account.WALLET, amount=quote, bet=bet
        )
        bet.status = Bet.Status.CASHED_OUT
        bet.payout = quote
        bet.settled_at = timezone.now()
        bet.save(update_fields=["status", "payout", "settled_at"])
        bet_event_enqueue(bet=bet, type="cashed_out")
        bet_settled_announce(bet=bet, wallet=wallet)
    return bet


def bet_void(*, bet: Bet, by: User | AnonymousUser | None = None) -> Bet:
    """A trader voids an open bet (e.g. a palpable price error): the stake goes back. Idempotent."""
    with transaction.atomic():
        wallet = wallet_lock(user=bet.user)
        locked = Bet.objects.select_for_update().get(id=bet.id)
        if locked.status != Bet.Status.ACCEPTED:
            return locked
        stake_refund(wallet=wallet, bet=locked)
        locked.status = Bet.Status.VOID
        locked.payout = locked.stake
        locked.settled_at = timezone.now()
        locked.save(update_fields=["status", "payout", "settled_at"])
        bet_event_enqueue(bet=locked, type="voided")
        bet_settled_announce(bet=locked, wallet=wallet)
    log.info("bet %s voided by %s", locked.id, by)
    return locked
