"""Settlement of bets when their markets are resulted."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import cast

from django.db import transaction
from django.utils import timezone

from odds.betting.models import Bet, BetLeg, LedgerEntry, Wallet
from odds.betting.services.announce import bet_legs_announce, bet_settled_announce
from odds.betting.services.bets import bet_event_enqueue
from odds.betting.services.wallet import bet_entry_reference, ledger_post, stake_refund, stake_release
from odds.catalogue.models import Market, Selection
from odds.catalogue.services.markets import market_settled_mark
from odds.core.events import LegResult
from reducers import betting

Account = LedgerEntry.Account
Kind = LedgerEntry.Kind


def bet_settle(*, bet_id: int) -> Bet:
    """Bring an open bet up to date with its selections' results and settle it once decided.

    Won: the held stake goes to the house and the return is paid from it. Lost: the held stake
    goes to the house. Void (every leg void): the stake is refunded. Idempotent: a bet that is
    no longer open is returned unchanged, and the ledger takes each kind of entry once per bet.
    """
    user_id = Bet.objects.values_list("user_id", flat=True).get(id=bet_id)
    with transaction.atomic():
        wallet = Wallet.objects.select_for_update().get(user_id=user_id)
        bet = Bet.objects.select_for_update().get(id=bet_id)
        if bet.status != Bet.Status.ACCEPTED:
            return bet
        legs = list(bet.legs.select_related("selection"))
        decided: list[tuple[int, LegResult]] = []
        for leg in legs:
            if leg.result == BetLeg.Result.UNDECIDED and leg.selection.result != Selection.Result.UNDECIDED:
                leg.result = leg.selection.result
                leg.save(update_fields=["result"])
                decided.append((leg.selection_id, cast(LegResult, leg.result)))
        outcome = betting.settle_outcome(stake=bet.stake, legs=[(leg.result, leg.price) for leg in legs])
        if outcome is None:
            if decided:
                bet_legs_announce(bet=bet, legs=decided)
            return bet
        status, payout = outcome
        bet_settlement_post(wallet=wallet, bet=bet, status=status, payout=payout)
    return bet


def bet_settlement_post(*, wallet: Wallet, bet: Bet, status: str, payout: Decimal) -> None:
    """Settle an open bet as ``status`` paying ``payout`` (both from ``betting.settle_outcome``;
    the caller holds the wallet's and the bet's locks): the ledger entries, the bet, its event on
    the bets topic and the punter's news."""
    if status == Bet.Status.VOID:
        stake_refund(wallet=wallet, bet=bet)
    else:
        stake_release(wallet=wallet, bet=bet)
        if payout > 0:
            ledger_post(
                wallet=wallet,
                kind=Kind.PAYOUT,
                debit=Account.HOUSE,
                credit=Account.WALLET,
                amount=payout,
                bet=bet,
                reference=bet_entry_reference(bet),
            )
    bet.status = status
    bet.payout = payout
    bet.settled_at = timezone.now()
    bet.save(update_fields=["status", "payout", "settled_at"])
    bet_event_enqueue(bet=bet, type="voided" if status == Bet.Status.VOID else "settled", wallet=wallet)
    bet_settled_announce(bet=bet, wallet=wallet)


@dataclass
class SettlementSummary:
    market_id: int
    bets_seen: int = 0
    won: int = 0
    lost: int = 0
    void: int = 0
    still_open: int = 0
    market_settled: bool = False


def market_bets_settle(*, market_id: int) -> SettlementSummary:
    """Settle every open bet with a leg in a resulted market, then mark the market settled.

    Each bet settles in its own transaction, so a failure part-way leaves the settled ones
    settled and a rerun finishes the rest. Running it again after success changes nothing.
    """
    summary = SettlementSummary(market_id=market_id)
    market = Market.objects.get(id=market_id)
    if market.status not in (Market.Status.CLOSED, Market.Status.SETTLED):
        return summary
    if market.selections.filter(result=Selection.Result.UNDECIDED).exists():
        return summary
    bet_ids = (
        BetLeg.objects.filter(market_id=market_id, bet__status=Bet.Status.ACCEPTED)
        .values_list("bet_id", flat=True)
        .distinct()
        .order_by("bet_id")
    )
    for bet_id in list(bet_ids):
        summary.bets_seen += 1
        bet = bet_settle(bet_id=bet_id)
        if bet.status == Bet.Status.WON:
            summary.won += 1
        elif bet.status == Bet.Status.LOST:
            summary.lost += 1
        elif bet.status == Bet.Status.VOID:
            summary.void += 1
        else:
            summary.still_open += 1
    summary.market_settled = market_settled_mark(market_id=market_id).status == Market.Status.SETTLED
    return summary
