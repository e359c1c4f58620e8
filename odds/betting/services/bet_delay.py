"""The in-play bet delay: bets held at placement are decided once their delay has passed (and a
referred bet nobody answered, once its time to answer has: ``odds.betting.services.referrals``).

A bet on an in-play event is placed ``pending`` with its stake held (``sb_bet_place``) and an
``accept_at`` of placement plus the delay of its sport. At ``accept_at`` it is accepted at the
prices the punter took only if, for every leg, the market was not suspended at any time during
the delay (``Market.suspended_at``), the selection can be backed now (the live state, a trader's
newer decision and the catalogue, by placement's own rule, ``reducers.betting.leg_verdict``), and
the price has not moved against the punter's policy. Otherwise it is rejected with the reason and
its stake goes back to the wallet through the ledger. Either way the punter's websockets hear of
it at once (``bet.decided``), and the bets topic carries the decision (``placed`` or ``rejected``,
in the same transaction through the outbox) to the trading desk's books and ticker.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from odds.betting.models import Bet, BetLeg, LedgerEntry, Wallet
from odds.betting.services.bets import bet_event_enqueue
from odds.betting.services.wallet import ledger_post
from odds.catalogue.selectors.prices import selection_quotes
from odds.core.connections import redis_shared
from reducers import betting, frames
from reducers.frames import BetDecidedFrame, BetOfferedFrame
from store.channels import punter_publish

log = logging.getLogger(__name__)

Account = LedgerEntry.Account
Kind = LedgerEntry.Kind

# Bets decided per run of the resolver (it runs every second and again at once when it is full).
DECIDE_BATCH = 500


@dataclass
class DelaySummary:
    accepted: int = 0
    rejected: int = 0
    failed: int = 0


def bets_due(*, now: datetime | None = None, limit: int = DECIDE_BATCH) -> list[int]:
    """Pending bets whose delay has passed, the longest waiting first."""
    now = now or timezone.now()
    return list(
        Bet.objects.filter(status=Bet.Status.PENDING, accept_at__lte=now)
        .order_by("accept_at", "id")
        .values_list("id", flat=True)[:limit]
    )


# A referred bet nobody answered in time (docs/referral.md); a sentence, which the punter's page
# shows as it is (frontend/src/refusals.ts).
REFERRAL_EXPIRED = ("referral_expired", "No trader answered in time, so the bet was not placed.")
# A trader's offer on it the punter did not take in time.
OFFER_EXPIRED = ("offer_expired", "The trader's offer was not taken in time, so the bet was not placed.")


def held_verdict(bet: Bet, legs: list[BetLeg], *, price: bool = True) -> tuple[str, str]:
    """``(reject code, message)`` of a held bet now, or ``("", "")`` to accept it: no leg's market
    suspended since the bet was placed, every selection available now and, with ``price``, no
    price moved against the punter's policy (a trader accepting a referred bet takes it at the
    price the punter took, whatever the price now)."""
    held = "the referral" if bet.referred_limit is not None else "the in-play delay"
    for leg in legs:
        suspended_at = leg.selection.market.suspended_at
        if suspended_at is not None and suspended_at >= bet.placed_at:
            return "market_suspended", f"the market was suspended during {held}"
    quotes = selection_quotes(selections=[leg.selection for leg in legs])
    for leg in legs:
        quote = quotes[leg.selection_id]
        if not quote.available:
            # The verdict placement gives (reducers.betting.leg_verdict), in its words.
            return quote.unavailable, quote.message
    if not price:
        return "", ""
    for leg in legs:
        current = quotes[leg.selection_id].price
        if not betting.price_acceptable(seen=leg.price, current=current, policy=bet.price_policy):
            return "price_changed", f"the price moved from {leg.price} to {current} during the in-play delay"
    return "", ""


def bet_delay_decide(*, bet_id: int) -> Bet | None:
    """Decide one held bet whose time has passed; None when it is not (or no longer) held. A bet
    held by the in-play delay is judged (``held_verdict``); a referred bet nobody answered is
    declined. Idempotent: a second run finds it decided and changes nothing."""
    user_id = Bet.objects.values_list("user_id", flat=True).get(id=bet_id)
    with transaction.atomic():
        # The lock order of all money code: the wallet, then the bet.
        wallet = Wallet.objects.select_for_update().get(user_id=user_id)
        bet = Bet.objects.select_for_update().get(id=bet_id)
        if bet.status != Bet.Status.PENDING or bet.accept_at is None or bet.accept_at > timezone.now():
            return None
        if bet.offered_at is not None:
            code, message = OFFER_EXPIRED
        elif bet.referred_limit is not None:
            code, message = REFERRAL_EXPIRED
        else:
            code, message = held_verdict(
                bet, list(bet.legs.select_related("selection__market__event", "market", "event"))
            )
        held_bet_decide(wallet=wallet, bet=bet, code=code, message=message)
    log.info("held bet %s %s %s", bet.id, bet.status, code)
    return bet


def held_bet_decide(*, wallet: Wallet, bet: Bet, code: str, message: str) -> None:
    """Accept a held bet (``code`` empty: on the bets topic as ``placed``) or refuse it with
    ``code`` and ``message`` (its stake back to the wallet through the ledger; ``rejected`` on the
    topic); the punter's sockets hear of it once committed. In the caller's transaction, with the
    wallet and the bet locked (in that order)."""
    if code:
        ledger_post(
            wallet=wallet,
            kind=Kind.REFUND,
            debit=Account.BETS_HELD,
            credit=Account.WALLET,
            amount=bet.stake,
            bet=bet,
        )
        bet.status, bet.reject_code, bet.reject_message = Bet.Status.REJECTED, code, message
    else:
        bet.status = Bet.Status.ACCEPTED
    bet.save(update_fields=["status", "reject_code", "reject_message", "decided_by"])
    bet_event_enqueue(bet=bet, type="rejected" if code else "placed", wallet=wallet)
    transaction.on_commit(lambda: bet_decided_announce(bet))


def bet_decided_announce(bet: Bet) -> None:
    """Tell the punter's websockets (``store.channels.punter_publish``); a punter offline finds the decision
    in ``GET /api/bets``."""
    frame: BetDecidedFrame = {
        "type": "bet.decided",
        "bet": {
            "id": bet.id,
            "status": "accepted" if bet.status == Bet.Status.ACCEPTED else "rejected",
            "reject": {"code": bet.reject_code, "message": bet.reject_message} if bet.reject_code else None,
        },
    }
    _punter_tell(bet, frame, what="the decision")


def bet_offered_announce(bet: Bet) -> None:
    """Tell the punter's websockets of a trader's offer on their referred bet
    (``store.channels.punter_publish``); a punter offline finds it in ``GET /api/bets``."""
    assert bet.offer_stake is not None
    assert bet.offer_return is not None
    assert bet.accept_at is not None
    frame: BetOfferedFrame = {
        "type": "bet.offered",
        "bet": {
            "id": bet.id,
            "stake": str(bet.offer_stake),
            "price": None if bet.offer_price is None else str(bet.offer_price),
            "potential_return": str(bet.offer_return),
            "until": int(bet.accept_at.timestamp() * 1000),
            "seconds": max(0, round((bet.accept_at - timezone.now()).total_seconds())),
        },
    }
    _punter_tell(bet, frame, what="the offer")


def _punter_tell(bet: Bet, frame: BetDecidedFrame | BetOfferedFrame, *, what: str) -> None:
    """Publish ``frame`` on the bet's punter's channel; a failure is logged, never raised (the
    change is committed, and ``GET /api/bets`` has it)."""
    try:
        punter_publish(redis_shared(), bet.user_id, frames.encode(frame))
    except Exception:
        log.exception("announcing %s on bet %s failed", what, bet.id)


def bets_delay_resolve(*, now: datetime | None = None) -> DelaySummary:
    """Decide every held bet whose delay has passed (in batches of ``DECIDE_BATCH``). A bet that
    cannot be decided (its decision raised) is logged, counted in ``failed`` and left held for
    the next run; it never keeps the bets after it waiting."""
    summary = DelaySummary()
    for bet_id in bets_due(now=now):
        try:
            decided = bet_delay_decide(bet_id=bet_id)
        except Exception:
            log.exception("held bet %s could not be decided; it stays held for the next run", bet_id)
            summary.failed += 1
            continue
        if decided is None:
            continue
        if decided.status == Bet.Status.ACCEPTED:
            summary.accepted += 1
        else:
            summary.rejected += 1
    return summary
