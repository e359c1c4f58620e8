"""Wallet reads for the wallet page: the ledger with its filters, the deposit limits, the break."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, tzinfo
from decimal import Decimal

from django.core.paginator import Page, Paginator
from django.db.models import Q, QuerySet, Sum
from django.utils import timezone

from odds.betting.models import DepositLimit, LedgerEntry, Wallet

LEDGER_PAGE_SIZE = 25
# What a punter's statement shows: entries that move money in or out of the wallet. A lost
# bet's stake passing from the bets held to the house changes nothing the punter holds.
WALLET_SIDE = Q(credit=LedgerEntry.Account.WALLET) | Q(debit=LedgerEntry.Account.WALLET)
STATEMENT_KINDS = tuple(kind for kind in LedgerEntry.Kind if kind is not LedgerEntry.Kind.STAKE_RELEASE)


def ledger_entries(
    *,
    wallet: Wallet,
    kind: str = "",
    since: date | None = None,
    until: date | None = None,
    zone: tzinfo | None = None,
) -> QuerySet[LedgerEntry]:
    """Every entry of the wallet's statement (those that change its balance), newest first;
    ``kind`` and the days ``since``..``until`` (inclusive, in the punter's time ``zone``, else
    the site's) narrow it."""
    entries = LedgerEntry.objects.filter(WALLET_SIDE, wallet=wallet).select_related("bet").order_by("-id")
    if kind:
        entries = entries.filter(kind=kind)
    zone = zone or timezone.get_current_timezone()
    if since is not None:
        entries = entries.filter(created_at__gte=datetime.combine(since, time.min, tzinfo=zone))
    if until is not None:
        entries = entries.filter(created_at__lt=datetime.combine(until + timedelta(days=1), time.min, tzinfo=zone))
    return entries


def ledger_page(
    *,
    wallet: Wallet,
    page: int,
    kind: str = "",
    since: date | None = None,
    until: date | None = None,
    zone: tzinfo | None = None,
) -> Page[LedgerEntry]:
    """One page of ``ledger_entries`` (the last page when ``page`` is beyond it)."""
    entries = ledger_entries(wallet=wallet, kind=kind, since=since, until=until, zone=zone)
    paginator = Paginator(entries, LEDGER_PAGE_SIZE)
    return paginator.get_page(page)


@dataclass(frozen=True)
class LimitView:
    period: str
    label: str
    amount: Decimal | None
    left: Decimal | None
    pending_amount: Decimal | None
    pending_from: datetime | None


def deposit_limits_view(*, wallet: Wallet | None, now: datetime) -> list[LimitView]:
    """Each period's limit as it applies at ``now`` (a raise whose cooling-off has ended counts),
    what is left of it, and any raise still waiting."""
    found = {limit.period: limit for limit in DepositLimit.objects.filter(wallet=wallet)} if wallet else {}
    views = []
    for period, label in DepositLimit.Period.choices:
        limit = found.get(period)
        if limit is None or wallet is None:
            views.append(LimitView(period, label, None, None, None, None))
            continue
        amount, pending_amount, pending_from = limit.amount, limit.pending_amount, limit.pending_from
        if pending_from is not None and pending_from <= now and pending_amount is not None:
            amount, pending_amount, pending_from = pending_amount, None, None
        used = deposited_since(wallet=wallet, since=now - DepositLimit.LENGTHS[period])
        views.append(
            LimitView(period, label, amount, max(Decimal("0.00"), amount - used), pending_amount, pending_from)
        )
    return views


def wallet_break_running(*, wallet: Wallet | None) -> bool:
    return wallet is not None and wallet_on_break(wallet=wallet)


def wallet_on_break(*, wallet: Wallet) -> bool:
    """Whether the punter's time-out or self-exclusion runs now."""
    return wallet.excluded_until is not None and wallet.excluded_until > timezone.now()


def deposited_since(*, wallet: Wallet, since: datetime) -> Decimal:
    """What the punter deposited after ``since`` (withdrawals do not count against limits)."""
    total = LedgerEntry.objects.filter(wallet=wallet, kind=LedgerEntry.Kind.DEPOSIT, created_at__gt=since).aggregate(
        total=Sum("amount")
    )["total"]
    return total or Decimal("0.00")
