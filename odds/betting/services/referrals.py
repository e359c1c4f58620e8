"""Referred bets (docs/referral.md): a bet above the customer's stake limit is placed ``pending``
with its stake held and ``referred_limit`` set (``sb_bet_place``); a trader accepts or declines it
before its ``accept_at``, or the delay resolver declines it then
(``odds.betting.services.bet_delay``).

A trader may instead offer the punter a lower stake or, on a single, another price
(``referral_offer``); the punter takes it or turns it down (``offer_answer``) within
``reducers.trading.OFFER_WINDOW_S``, or the resolver turns it down then. Taking a lower stake gives
the rest of the held stake back (``stake_return``).

A decision locks the wallet and then the bet, like all money code, so two traders deciding one
bet, or a trader and the resolver, are served one after the other: the first decides, the second
is told it was decided. Accepting judges the bet as the in-play delay would, but at the price the
punter took: a market suspended since the bet was placed, or a selection that cannot be backed
now, refuses it with that reason instead.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import AnonymousUser, User
from django.db import transaction
from django.utils import timezone

from odds.audit.models import AuditEntry
from odds.audit.services.audit import audit_record, staff_actor
from odds.betting.models import Bet, LedgerEntry, Wallet
from odds.betting.services.bet_delay import bet_offered_announce, held_bet_decide, held_verdict
from odds.betting.services.bets import bet_event_enqueue
from odds.betting.services.wallet import ledger_post
from reducers.money import money_text
from reducers.rules import MAX_RETURN, MIN_STAKE
from reducers.schemas import MAX_PRICE, MIN_PRICE
from reducers.trading import OFFER_WINDOW_S, offer_checked

log = logging.getLogger(__name__)

DECLINED = "referral_declined"
REASON_MAX_CHARS = 200


class ReferralRefused(Exception):
    """A decision that cannot be taken; ``str()`` says why, for the trader."""


def referral_decide(*, bet_id: int, accept: bool, by: User | AnonymousUser, reason: str = "") -> Bet:
    """Accept (``accept``) or decline a referred bet as trader ``by``, with an optional
    ``reason`` the punter reads when it is declined; audited. Returns the bet as decided:
    accepting a bet whose market was suspended since, or whose selection cannot be backed now,
    refuses it with that reason. ``ReferralRefused`` for a bet that was not referred, is decided
    already or whose time to answer has passed."""
    reason = " ".join(reason.split())[:REASON_MAX_CHARS]
    user_id = Bet.objects.filter(id=bet_id).values_list("user_id", flat=True).first()
    if user_id is None:
        raise ReferralRefused(f"there is no bet {bet_id}")
    with transaction.atomic():
        wallet = Wallet.objects.select_for_update().get(user_id=user_id)
        bet = Bet.objects.select_for_update().get(id=bet_id)
        _open_referral(bet)
        if bet.offered_at is not None:
            raise ReferralRefused(f"bet #{bet.id} has an offer waiting for the punter's answer")
        if accept:
            legs = list(bet.legs.select_related("selection__market__event", "market", "event"))
            code, message = held_verdict(bet, legs, price=False)
        else:
            code = DECLINED
            # A sentence: the punter's page shows it as it is (frontend/src/refusals.ts).
            message = f"A trader declined this bet: {reason.rstrip('.')}." if reason else "A trader declined this bet."
        bet.decided_by = staff_actor(by)
        held_bet_decide(wallet=wallet, bet=bet, code=code, message=message)
        audit_record(
            by=by,
            kind=AuditEntry.Kind.REFERRAL_ACCEPT if accept else AuditEntry.Kind.REFERRAL_DECLINE,
            obj=bet,
            before={"status": Bet.Status.PENDING, "referred_limit": bet.referred_limit},
            after={"status": bet.status, "reject_code": bet.reject_code},
            reason=reason,
        )
    log.info("referred bet %s %s by %s %s", bet.id, bet.status, by, bet.reject_code)
    return bet


# The punter turned the offer down (a sentence: the punter's page shows it as it is).
OFFER_TURNED_DOWN = ("offer_declined", "You turned down the trader's offer, so the bet was not placed.")


class OfferRefused(Exception):
    """A punter's answer to an offer that cannot be taken (``code``, ``message`` for the API)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def referral_offer(
    *, bet_id: int, stake: Decimal | None, price: Decimal | None, by: User | AnonymousUser, reason: str = ""
) -> Bet:
    """Offer the punter of a referred bet a lower ``stake`` and/or, on a single, another
    ``price`` (``reducers.trading.offer_checked``), as trader ``by``; audited. The punter has
    ``OFFER_WINDOW_S`` from now to take it or turn it down, and hears of it at once
    (``bet.offered``). ``ReferralRefused`` for a bet that cannot take an offer (not referred,
    decided, out of time, an offer already made) or an offer out of bounds."""
    reason = " ".join(reason.split())[:REASON_MAX_CHARS]
    user_id = Bet.objects.filter(id=bet_id).values_list("user_id", flat=True).first()
    if user_id is None:
        raise ReferralRefused(f"there is no bet {bet_id}")
    with transaction.atomic():
        wallet = Wallet.objects.select_for_update().get(user_id=user_id)
        bet = Bet.objects.select_for_update().get(id=bet_id)
        _open_referral(bet)
        if bet.offered_at is not None:
            raise ReferralRefused(f"bet #{bet.id} has an offer waiting for the punter's answer already")
        legs = list(bet.legs.order_by("position"))
        try:
            offer = offer_checked(
                stake=stake,
                price=price,
                bet_stake=bet.stake,
                leg_prices=[leg.price for leg in legs],
                min_stake=MIN_STAKE,
                min_price=MIN_PRICE,
                max_price=MAX_PRICE,
            )
        except ValueError as exc:
            raise ReferralRefused(str(exc)) from None
        if offer.potential_return > MAX_RETURN:
            raise ReferralRefused(f"the offer returns {offer.potential_return}, above the maximum of {MAX_RETURN}")
        now = timezone.now()
        bet.offer_stake, bet.offer_price, bet.offer_return = offer.stake, offer.price, offer.potential_return
        bet.offered_at, bet.accept_at = now, now + timedelta(seconds=OFFER_WINDOW_S)
        bet.decided_by = staff_actor(by)
        bet.save(update_fields=["offer_stake", "offer_price", "offer_return", "offered_at", "accept_at", "decided_by"])
        audit_record(
            by=by,
            kind=AuditEntry.Kind.REFERRAL_OFFER,
            obj=bet,
            before={"stake": bet.stake, "odds": bet.odds, "potential_return": bet.potential_return},
            after={"stake": offer.stake, "price": offer.price, "potential_return": offer.potential_return},
            reason=reason,
        )
        price_text = f" at {offer.price}" if offer.price is not None else ""
        bet_event_enqueue(
            bet=bet,
            type="offered",
            wallet=wallet,
            reason=f"offered {money_text(offer.stake, wallet.currency)}{price_text}, "
            f"returns {money_text(offer.potential_return, wallet.currency)}",
        )
        transaction.on_commit(lambda: bet_offered_announce(bet))
    log.info("referred bet %s offered %s at %s by %s", bet.id, offer.stake, offer.price, by)
    return bet


def offer_answer(*, user: User, bet_id: int, accept: bool) -> Bet:
    """The punter takes (``accept``) or turns down the offer on their referred bet. Taking it
    accepts the bet at the offered stake and price (judged as a trader's acceptance is: a market
    suspended since the bet was placed refuses it), the rest of the held stake back in the
    wallet; turning it down refuses the bet, the whole stake back. ``Bet.DoesNotExist`` for a bet
    not theirs; ``OfferRefused`` when no offer waits or its time has passed."""
    with transaction.atomic():
        wallet = Wallet.objects.select_for_update().filter(user=user).first()
        if wallet is None:  # no wallet, no bet
            raise Bet.DoesNotExist(f"no bet {bet_id} of this punter")
        bet = Bet.objects.select_for_update().get(id=bet_id, user=user)
        if bet.status != Bet.Status.PENDING or bet.offered_at is None:
            raise OfferRefused("no_offer", "There is no offer on this bet to answer.")
        if bet.accept_at is not None and bet.accept_at <= timezone.now():
            raise OfferRefused("offer_expired", "The offer has run out, so the bet was not placed.")
        if not accept:
            held_bet_decide(wallet=wallet, bet=bet, code=OFFER_TURNED_DOWN[0], message=OFFER_TURNED_DOWN[1])
            return bet
        legs = list(bet.legs.select_related("selection__market__event", "market", "event").order_by("position"))
        code, message = held_verdict(bet, legs, price=False)
        if not code:
            _take_offer(wallet=wallet, bet=bet, legs=legs)
        held_bet_decide(wallet=wallet, bet=bet, code=code, message=message)
    log.info("offer on bet %s answered %s: %s", bet.id, "taken" if accept else "turned down", bet.status)
    return bet


def _open_referral(bet: Bet) -> None:
    """``ReferralRefused`` unless ``bet`` is a referred bet still waiting, in time."""
    if bet.referred_limit is None:
        raise ReferralRefused(f"bet #{bet.id} was not referred")
    if bet.status != Bet.Status.PENDING:
        decided = f" by {bet.decided_by}" if bet.decided_by else ""
        raise ReferralRefused(f"bet #{bet.id} was decided already{decided}: {bet.get_status_display().lower()}")
    if bet.accept_at is not None and bet.accept_at <= timezone.now():
        raise ReferralRefused(f"the time to answer bet #{bet.id} has passed: it is declined")


def _take_offer(*, wallet: Wallet, bet: Bet, legs: list[Any]) -> None:
    """The bet becomes the offer: its stake (the rest of the held stake back to the wallet), its
    single's price and its return. The bet and wallet are locked by the caller."""
    assert bet.offer_stake is not None
    assert bet.offer_return is not None
    given_back = bet.stake - bet.offer_stake
    if given_back > 0:
        ledger_post(
            wallet=wallet,
            kind=LedgerEntry.Kind.STAKE_RETURN,
            debit=LedgerEntry.Account.BETS_HELD,
            credit=LedgerEntry.Account.WALLET,
            amount=given_back,
            bet=bet,
        )
    if bet.offer_price is not None:
        (leg,) = legs
        leg.price = bet.offer_price
        leg.save(update_fields=["price"])
        bet.odds = bet.offer_price
    bet.stake, bet.potential_return = bet.offer_stake, bet.offer_return
    bet.save(update_fields=["stake", "odds", "potential_return"])
