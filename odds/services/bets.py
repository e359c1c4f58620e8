"""Bet placement, cash-out and voiding.

Placement runs in one transaction under a lock on the punter's wallet: look up the idempotency
key, validate, quote every leg at its current price, then either accept (hold the stake in the
ledger, queue the ``placed`` event in the outbox) or record the rejection. A retry with the same
key returns the bet of the first attempt, accepted or rejected, and never places a second one.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from decimal import ROUND_HALF_UP, Decimal

from django.contrib.auth.models import AnonymousUser, User
from django.db import transaction
from django.db.models import Prefetch
from django.utils import timezone

from odds.models import Bet, BetLeg, Event, LedgerEntry, Selection
from odds.selectors.bets import bet_cash_out_quote
from odds.selectors.prices import Quote, redis_shared, selection_quotes
from odds.services.outbox import outbox_enqueue
from odds.services.wallet import ledger_post, stake_release, wallet_lock
from reducers import betting, keys, schemas, topics

log = logging.getLogger(__name__)

Account = LedgerEntry.Account
Kind = LedgerEntry.Kind

MIN_STAKE = Decimal("0.10")
MAX_STAKE = Decimal("10000.00")
MAX_RETURN = Decimal("250000.00")
MAX_LEGS = betting.MAX_LEGS
MAX_KEY_LENGTH = 64
# Placement attempts per punter per fixed window; far above what a person clicks, low enough
# that a script hammering the wallet lock is turned away before it reaches the database.
PLACE_LIMIT = 20
PLACE_WINDOW_S = 10


class BetInvalid(Exception):
    """The request is malformed or breaks a rule of the bet itself; nothing was recorded."""

    def __init__(self, *, field: str, message: str, code: str = "invalid") -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message
        self.code = code


class BetRateLimited(Exception):
    """Too many placement attempts by one punter in the current window; nothing was recorded."""

    def __init__(self, *, retry_after_s: int) -> None:
        super().__init__(f"at most {PLACE_LIMIT} bets every {PLACE_WINDOW_S} seconds")
        self.message = str(self)
        self.retry_after_s = retry_after_s


def bet_rate_check(*, user_id: int) -> None:
    """Count one placement attempt; raise ``BetRateLimited`` above ``PLACE_LIMIT`` in the window."""
    now = time.time()
    window = int(now // PLACE_WINDOW_S)
    key = keys.rate_limit("bets", str(user_id), window)
    pipe = redis_shared().pipeline(transaction=False)
    pipe.incr(key)
    pipe.expire(key, PLACE_WINDOW_S * 2)
    if int(pipe.execute()[0]) > PLACE_LIMIT:
        raise BetRateLimited(retry_after_s=max(1, int((window + 1) * PLACE_WINDOW_S - now) + 1))


class CashOutRejected(Exception):
    """No cash-out at the quote the punter saw. ``quote`` is the current offer, if any."""

    def __init__(self, *, code: str, message: str, quote: Decimal | None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.quote = quote


@dataclass(frozen=True)
class LegRequest:
    selection_id: int
    price_seen: Decimal


@dataclass(frozen=True)
class Placement:
    bet: Bet
    created: bool

    @property
    def accepted(self) -> bool:
        return self.bet.status == Bet.Status.ACCEPTED

    @property
    def rejected(self) -> bool:
        return self.bet.status == Bet.Status.REJECTED


def _fingerprint(*, stake: Decimal, legs: Sequence[LegRequest], price_policy: str) -> str:
    canonical = "|".join(
        [str(stake.normalize()), price_policy, *(f"{leg.selection_id}@{leg.price_seen.normalize()}" for leg in legs)]
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def bet_request_validate(
    *, idempotency_key: str, stake: Decimal, legs: Sequence[LegRequest], price_policy: str
) -> None:
    """Rules that need no database: raise ``BetInvalid`` naming the field at fault."""
    if not idempotency_key or len(idempotency_key) > MAX_KEY_LENGTH or not idempotency_key.isprintable():
        raise BetInvalid(field="idempotency_key", message=f"1 to {MAX_KEY_LENGTH} printable characters")
    if price_policy not in betting.PRICE_POLICIES:
        raise BetInvalid(field="price_policy", message=f"one of {', '.join(betting.PRICE_POLICIES)}")
    if not stake.is_finite():
        raise BetInvalid(field="stake", message="stake must be a number")
    exponent = stake.as_tuple().exponent
    if isinstance(exponent, int) and exponent < -2:
        raise BetInvalid(field="stake", message="stake has at most two decimal places")
    if stake < MIN_STAKE:
        raise BetInvalid(field="stake", message=f"the minimum stake is {MIN_STAKE}", code="stake_too_low")
    if stake > MAX_STAKE:
        raise BetInvalid(field="stake", message=f"the maximum stake is {MAX_STAKE}", code="stake_too_high")
    if not legs:
        raise BetInvalid(field="selections", message="at least one selection")
    if len(legs) > MAX_LEGS:
        raise BetInvalid(field="selections", message=f"at most {MAX_LEGS} selections")
    seen: set[int] = set()
    for index, leg in enumerate(legs):
        if leg.selection_id in seen:
            raise BetInvalid(field=f"selections[{index}].selection_id", message="selection appears twice")
        seen.add(leg.selection_id)
        if not (schemas.MIN_PRICE <= leg.price_seen <= schemas.MAX_PRICE):
            raise BetInvalid(field=f"selections[{index}].price", message="not a valid decimal price")


def _selections_load(legs: Sequence[LegRequest]) -> list[Selection]:
    found = Selection.objects.select_related("market__event__competition__sport").in_bulk(
        [leg.selection_id for leg in legs]
    )
    selections = []
    events: set[int] = set()
    for index, leg in enumerate(legs):
        selection = found.get(leg.selection_id)
        if selection is None:
            raise BetInvalid(
                field=f"selections[{index}].selection_id", message="no such selection", code="unknown_selection"
            )
        if selection.market.event_id in events:
            raise BetInvalid(
                field="selections", message="an accumulator takes one selection per event", code="same_event"
            )
        events.add(selection.market.event_id)
        selections.append(selection)
    return selections


def in_play_delay_s(selections: Sequence[Selection]) -> int:
    """How long a bet on these selections is held: the longest delay of the sports of its in-play
    events (with ``market__event__competition__sport`` loaded); 0 when every event is pre-match."""
    return max(
        (
            s.market.event.competition.sport.in_play_delay_s
            for s in selections
            if s.market.event.status == Event.Status.IN_PLAY
        ),
        default=0,
    )


def _rejection(
    legs: Sequence[LegRequest], quotes: dict[int, Quote], *, price_policy: str, stake: Decimal, balance: Decimal
) -> tuple[str, str]:
    for leg in legs:
        quote = quotes[leg.selection_id]
        if not quote.available:
            messages = {
                "market_suspended": "the market is suspended",
                "market_closed": "the market is closed",
                "selection_unavailable": "the selection is no longer available",
            }
            return quote.unavailable, messages.get(quote.unavailable, "the selection cannot be backed now")
    for leg in legs:
        quote = quotes[leg.selection_id]
        if not betting.price_acceptable(seen=leg.price_seen, current=quote.price, policy=price_policy):
            return "price_changed", f"the price moved from {leg.price_seen} to {quote.price}"
    if balance < stake:
        return "insufficient_funds", f"the balance {balance} is less than the stake {stake}"
    return "", ""


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


def _cents(price: Decimal) -> Decimal:
    return price.quantize(betting.ODDS_PLACES, rounding=ROUND_HALF_UP)


def _legs_prefetched(bet: Bet, legs: list[BetLeg]) -> None:
    """Let ``bet.legs.all()`` answer from the legs just written, as ``prefetch_related`` would.

    The legs carry their selections with market and event (``_selections_load``), so the outbox
    event and the API response are built without reading back what this transaction wrote.
    """
    queryset = bet.legs.all()
    queryset._result_cache = legs
    # The cache prefetch_related fills; django-stubs does not declare it.
    bet._prefetched_objects_cache = {"legs": queryset}  # type: ignore[attr-defined]


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
    when a leg's event is in play (the in-play delay of its sport, see ``odds.services.bet_delay``);
    or ``rejected`` with ``reject_code`` one of
    ``market_suspended``, ``market_closed``, ``selection_unavailable``, ``price_changed`` or
    ``insufficient_funds`` and every leg's current price. ``created`` is false on a retry.
    """
    bet_request_validate(idempotency_key=idempotency_key, stake=stake, legs=legs, price_policy=price_policy)
    fingerprint = _fingerprint(stake=stake, legs=legs, price_policy=price_policy)
    with transaction.atomic():
        wallet = wallet_lock(user=user)
        existing = (
            Bet.objects.filter(user=user, idempotency_key=idempotency_key)
            .prefetch_related(Prefetch("legs", queryset=BetLeg.objects.select_related("selection__market__event")))
            .first()
        )
        if existing is not None:
            if existing.request_fingerprint != fingerprint:
                raise BetInvalid(
                    field="idempotency_key",
                    message="this key was used for a different bet",
                    code="idempotency_key_reused",
                )
            return Placement(bet=existing, created=False)
        selections = _selections_load(legs)
        quotes = selection_quotes(selections=selections)
        prices = [quotes[leg.selection_id].price for leg in legs]
        odds = betting.combined_odds(prices)
        potential = betting.potential_return(stake=stake, prices=prices)
        if potential > MAX_RETURN:
            raise BetInvalid(
                field="stake",
                message=f"the potential return is above the maximum of {MAX_RETURN}",
                code="return_too_high",
            )
        code, message = _rejection(legs, quotes, price_policy=price_policy, stake=stake, balance=wallet.balance)
        delay = 0 if code else in_play_delay_s(selections)
        status = Bet.Status.REJECTED if code else (Bet.Status.PENDING if delay else Bet.Status.ACCEPTED)
        bet = Bet.objects.create(
            user=user,
            idempotency_key=idempotency_key,
            request_fingerprint=fingerprint,
            kind=Bet.Kind.SINGLE if len(legs) == 1 else Bet.Kind.ACCUMULATOR,
            status=status,
            accept_at=timezone.now() + timedelta(seconds=delay) if delay else None,
            price_policy=price_policy,
            stake=stake,
            odds=odds,
            potential_return=potential,
            reject_code=code,
            reject_message=message,
        )
        bet_legs = BetLeg.objects.bulk_create(
            BetLeg(
                bet=bet,
                selection=selection,
                market_id=selection.market_id,
                event_id=selection.market.event_id,
                # Rounded as the numeric(7, 2) columns round, so the legs kept in memory for the
                # event and the response equal the rows written.
                price=_cents(quotes[selection.id].price),
                price_seen=_cents(leg.price_seen),
                position=position,
            )
            for position, (leg, selection) in enumerate(zip(legs, selections, strict=True))
        )
        _legs_prefetched(bet, bet_legs)
        if not code:
            ledger_post(
                wallet=wallet, kind=Kind.STAKE, debit=Account.WALLET, credit=Account.BETS_HELD, amount=stake, bet=bet
            )
            if status == Bet.Status.ACCEPTED:
                bet_event_enqueue(bet=bet, type="placed")
    return Placement(bet=bet, created=True)


def bet_cash_out(*, user: User, bet_id: int, quote_seen: Decimal) -> Bet:
    """Close an open bet at the current cash-out quote, which must equal the quote the punter saw.

    Raises ``Bet.DoesNotExist`` for another punter's bet and ``CashOutRejected`` with the current
    quote (``quote_changed``) or without one (``cash_out_unavailable``).
    """
    with transaction.atomic():
        wallet = wallet_lock(user=user)
        bet = Bet.objects.select_for_update().get(id=bet_id, user=user)
        if bet.status != Bet.Status.ACCEPTED:
            raise CashOutRejected(code="cash_out_unavailable", message=f"the bet is {bet.status}", quote=None)
        quote = bet_cash_out_quote(bet=bet)
        if quote is None or quote <= 0:
            raise CashOutRejected(
                code="cash_out_unavailable", message="no cash-out is offered on this bet now", quote=None
            )
        if quote != quote_seen:
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
    return bet


def bet_void(*, bet: Bet, by: User | AnonymousUser | None = None) -> Bet:
    """A trader voids an open bet (e.g. a palpable price error): the stake goes back. Idempotent."""
    with transaction.atomic():
        wallet = wallet_lock(user=bet.user)
        locked = Bet.objects.select_for_update().get(id=bet.id)
        if locked.status != Bet.Status.ACCEPTED:
            return locked
        ledger_post(
            wallet=wallet,
            kind=Kind.REFUND,
            debit=Account.BETS_HELD,
            credit=Account.WALLET,
            amount=locked.stake,
            bet=locked,
        )
        locked.status = Bet.Status.VOID
        locked.payout = locked.stake
        locked.settled_at = timezone.now()
        locked.save(update_fields=["status", "payout", "settled_at"])
        bet_event_enqueue(bet=locked, type="voided")
    log.info("bet %s voided by %s", locked.id, by)
    return locked
