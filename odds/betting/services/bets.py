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
from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Any

import redis.asyncio as aioredis
from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.db import connection, transaction
from django.utils import timezone

from odds.audit.models import AuditEntry
from odds.audit.services.audit import audit_record
from odds.betting.models import Bet, LedgerEntry, Wallet
from odds.betting.selectors.bets import bet_cash_out_quote
from odds.betting.services import placement
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
)
from odds.betting.services.wallet import (
    PaymentRefused,
    bet_entry_reference,
    exclusion_check,
    ledger_post,
    stake_refund,
    stake_release,
    wallet_lock,
)
from odds.catalogue.models import Selection
from odds.catalogue.selectors.prices import LiveStates, live_states
from odds.core.eager import run_to_end
from odds.core.metrics import LatencySamples
from odds.core.outbox import outbox_enqueue
from odds.core.ratelimits import BETS, rate_hit, rate_hit_async
from reducers import betting, schemas, topics
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


class BetRateLimited(Exception):
    """Too many placement attempts by one punter in the current window; nothing was recorded."""

    def __init__(self, *, retry_after_s: int) -> None:
        super().__init__(f"at most {settings.BET_PLACE_LIMIT} bets every {settings.BET_PLACE_WINDOW_S} seconds")
        self.message = str(self)
        self.retry_after_s = retry_after_s


def bet_attempt_count(*, user_id: int) -> None:
    """Count one placement attempt, valid or not, before any other work on it; raise
    ``BetRateLimited`` above the punter's limit, ``redis.RedisError`` when it cannot be counted."""
    decision = rate_hit(limit=BETS, subject=str(user_id))
    if not decision.allowed:
        raise BetRateLimited(retry_after_s=decision.retry_after_s)


async def bet_attempt_count_async(*, user_id: int, client: aioredis.Redis) -> None:
    """``bet_attempt_count`` on the event loop, through ``client``."""
    decision = await rate_hit_async(limit=BETS, subject=str(user_id), client=client)
    if not decision.allowed:
        raise BetRateLimited(retry_after_s=decision.retry_after_s)


class CashOutRejected(Exception):
    """No cash-out at the quote the punter saw. ``quote`` is the current offer, if any."""

    def __init__(self, *, code: str, message: str, quote: Decimal | None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.quote = quote


# The changes a bet can go through again after a corrected result opened it again (docs/resettlement.md).
AFTER_REOPENING = ("settled", "voided", "cashed_out")


def bet_event(*, bet: Bet, type: str, currency: str, reason: str = "", occurrence: str = "") -> schemas.BetEvent:
    """The bets-topic record of one change of a bet; ``event_id`` is stable per bet and change
    (``occurrence`` tells apart changes a bet can go through more than once: each resettlement,
    each settlement after one opened the bet again); ``currency`` is the wallet's, which the bet's
    amounts are in. A ``rejected`` event carries the bet's reject message, a ``pending`` or
    ``referred`` one when the bet is decided, an ``offered`` one when the offer lapses; ``reason``
    what the ticker says of the others."""
    if not occurrence and bet.reopened and type in AFTER_REOPENING:
        occurrence = f"reopened{bet.reopened}"
    return schemas.BetEvent(
        event_id=f"{bet.id}:{type}" + (f":{occurrence}" if occurrence else ""),
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
        currency=currency,
        reason=(bet.reject_message if type == "rejected" else reason)[: schemas.BET_EVENT_REASON_MAX_CHARS],
        until=int(bet.accept_at.timestamp() * 1000)
        if type in ("pending", "referred", "offered") and bet.accept_at
        else None,
    )


def bet_event_enqueue(*, bet: Bet, type: str, wallet: Wallet, reason: str = "", occurrence: str = "") -> None:
    event = bet_event(bet=bet, type=type, currency=wallet.currency, reason=reason, occurrence=occurrence)
    outbox_enqueue(topic=topics.bets(), key=event.key(), value=event.encode())


# Request to decided, for the placement objective's alert (``sportsbook_latency_seconds``).
PLACEMENT_LATENCY = LatencySamples(STAGE_PLACEMENT)


class DjangoPlacementIO:
    """The placement's I/O on Django's connection (inside the caller's transaction, if any) and
    the process's Redis pool. Each call is synchronous underneath: the service runs to its end
    without an event loop (``run_to_end``)."""

    async def selection_markets(self, selection_ids: list[int]) -> Iterable[tuple[int, int]]:
        return list(Selection.objects.filter(id__in=selection_ids).values_list("id", "market_id"))

    async def live_states(self, market_ids: list[int]) -> LiveStates:
        return live_states(market_ids=market_ids)

    async def place(self, params: tuple[Any, ...]) -> str:
        with connection.cursor() as cursor:
            cursor.execute(PLACE_SQL, params)
            (answer,) = cursor.fetchone()
        return str(answer)


def bet_place(
    *,
    user: User,
    idempotency_key: str,
    stake: Decimal,
    legs: Sequence[LegRequest],
    price_policy: str = Bet.PricePolicy.NONE,
) -> Placement:
    """``odds.betting.services.placement.bet_place`` (see there) from synchronous code, on
    Django's connection. The caller has counted the attempt (``bet_attempt_count``) if it must."""
    started = time.perf_counter()
    placed = run_to_end(
        placement.bet_place(
            user_id=user.pk,
            idempotency_key=idempotency_key,
            stake=stake,
            legs=legs,
            price_policy=price_policy,
            io=DjangoPlacementIO(),
        )
    )
    PLACEMENT_LATENCY.observe(time.perf_counter() - started)
    return placed


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
            wallet=wallet,
            kind=Kind.CASH_OUT,
            debit=Account.HOUSE,
            credit=Account.WALLET,
            amount=quote,
            bet=bet,
            reference=bet_entry_reference(bet),
        )
        bet.status = Bet.Status.CASHED_OUT
        bet.payout = quote
        bet.settled_at = timezone.now()
        bet.save(update_fields=["status", "payout", "settled_at"])
        bet_event_enqueue(bet=bet, type="cashed_out", wallet=wallet)
        bet_settled_announce(bet=bet, wallet=wallet)
    return bet


VOID_REASON_MAX_LENGTH = Bet._meta.get_field("void_reason").max_length or 255


def bet_void(*, bet: Bet, by: User | AnonymousUser | None = None, reason: str = "") -> Bet:
    """A trader voids an open bet (e.g. a palpable price error): the stake goes back, ``reason`` is
    kept for the punter to read in My bets, and a staff member's void is audited. Idempotent: a bet
    no longer open is returned as it is."""
    reason = " ".join(reason.split())[:VOID_REASON_MAX_LENGTH]
    with transaction.atomic():
        wallet = wallet_lock(user=bet.user)
        locked = Bet.objects.select_for_update().get(id=bet.id)
        if locked.status != Bet.Status.ACCEPTED:
            return locked
        stake_refund(wallet=wallet, bet=locked)
        locked.status = Bet.Status.VOID
        locked.payout = locked.stake
        locked.settled_at = timezone.now()
        locked.void_reason = reason
        locked.save(update_fields=["status", "payout", "settled_at", "void_reason"])
        audit_record(
            by=by,
            kind=AuditEntry.Kind.BET_VOID,
            obj=locked,
            label=f"bet {locked.id} of {locked.user.get_username()}",
            before={"status": Bet.Status.ACCEPTED, "stake": locked.stake},
            after={"status": locked.status, "refunded": locked.stake},
            reason=reason,
        )
        bet_event_enqueue(bet=locked, type="voided", wallet=wallet)
        bet_settled_announce(bet=locked, wallet=wallet)
    log.info("bet %s voided by %s", locked.id, by)
    return locked
