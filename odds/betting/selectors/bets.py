"""Reads of bets and wallets for the API and the admin."""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal

from django.contrib.auth.models import User
from django.db.models import DecimalField, Q, QuerySet, Sum, Value
from django.db.models.functions import Coalesce

from odds.betting.models import Bet, BetLeg, LedgerEntry, Wallet
from odds.catalogue.selectors.prices import selection_quotes
from reducers import betting

ZERO = Decimal("0.00")


def bet_list(*, user: User, state: str | None = None, limit: int = 50) -> list[Bet]:
    """The punter's bets, newest first; ``state`` is ``open``, ``settled`` or ``None`` (both).

    Rejected bets are listed with the settled ones: they are finished and never pay.
    """
    bets = Bet.objects.filter(user=user).prefetch_related("legs__selection__market__event")
    if state == "open":
        bets = bets.filter(status__in=Bet.OPEN_STATUSES)
    elif state == "settled":
        bets = bets.exclude(status__in=Bet.OPEN_STATUSES)
    return list(bets.order_by("-placed_at", "-id")[:limit])


def bet_cash_out_quotes(*, bets: Iterable[Bet]) -> dict[int, Decimal | None]:
    """The current cash-out offer of each open bet (``None``: no offer now), in one price lookup.

    The bets' legs should be prefetched with ``legs__selection__market__event``.
    """
    open_bets = [bet for bet in bets if bet.status == Bet.Status.ACCEPTED]
    legs_by_bet = {bet.id: list(bet.legs.all()) for bet in open_bets}
    undecided = [
        leg.selection for legs in legs_by_bet.values() for leg in legs if leg.result == BetLeg.Result.UNDECIDED
    ]
    quotes = selection_quotes(selections=undecided)
    offers: dict[int, Decimal | None] = {}
    for bet in open_bets:
        rows: list[tuple[str, Decimal, Decimal | None]] = []
        for leg in legs_by_bet[bet.id]:
            quote = quotes.get(leg.selection_id)
            rows.append((leg.result, leg.price, quote.price if quote is not None and quote.available else None))
        offers[bet.id] = betting.cash_out_offer(stake=bet.stake, legs=rows)
    return offers


def bet_cash_out_quote(*, bet: Bet) -> Decimal | None:
    """The current cash-out offer of one bet, or ``None`` when none is possible."""
    if bet.status != Bet.Status.ACCEPTED:
        return None
    fresh = Bet.objects.prefetch_related("legs__selection__market__event").get(id=bet.id)
    return bet_cash_out_quotes(bets=[fresh])[bet.id]


def wallet_statement(*, wallet: Wallet, limit: int = 20) -> list[LedgerEntry]:
    """The latest entries that changed the wallet's balance, newest first."""
    wallet_side = Q(credit=LedgerEntry.Account.WALLET) | Q(debit=LedgerEntry.Account.WALLET)
    return list(LedgerEntry.objects.filter(wallet_side, wallet=wallet).order_by("-id")[:limit])


def wallet_ledger_balance(*, wallet: Wallet) -> Decimal:
    """The wallet's balance recomputed from the ledger: what came in minus what went out."""
    zero = Value(ZERO, output_field=DecimalField(max_digits=14, decimal_places=2))
    totals = LedgerEntry.objects.filter(wallet=wallet).aggregate(
        credits=Coalesce(Sum("amount", filter=Q(credit=LedgerEntry.Account.WALLET)), zero),
        debits=Coalesce(Sum("amount", filter=Q(debit=LedgerEntry.Account.WALLET)), zero),
    )
    return totals["credits"] - totals["debits"]


def wallets_with_ledger_balance() -> QuerySet[Wallet]:
    """Wallets annotated with ``ledger_balance`` (for reconciliation in the admin)."""
    zero = Value(ZERO, output_field=DecimalField(max_digits=14, decimal_places=2))
    return Wallet.objects.select_related("user").annotate(
        ledger_credits=Coalesce(Sum("entries__amount", filter=Q(entries__credit=LedgerEntry.Account.WALLET)), zero),
        ledger_debits=Coalesce(Sum("entries__amount", filter=Q(entries__debit=LedgerEntry.Account.WALLET)), zero),
    )


def wallet_for_user(*, user: User) -> Wallet | None:
    return Wallet.objects.filter(user=user).first()


def wallets_unreconciled() -> list[tuple[Wallet, Decimal]]:
    """Wallets whose running balance differs from their ledger, with the ledger's figure."""
    found = []
    for wallet in wallets_with_ledger_balance().order_by("id"):
        # Annotated by wallets_with_ledger_balance(); the type checker cannot see annotations.
        ledger = wallet.ledger_credits - wallet.ledger_debits  # type: ignore[attr-defined]
        if ledger != wallet.balance:
            found.append((wallet, ledger))
    return found
