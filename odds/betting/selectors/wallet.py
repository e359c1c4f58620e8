"""Wallet reads for the wallet page: the ledger with its filters, the limits, the break."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, tzinfo
from decimal import Decimal

from django.core.paginator import Page, Paginator
from django.db.models import Min, Q, QuerySet, Sum
from django.utils import timezone

from odds.betting.models import LedgerEntry, Wallet, WalletLimit
from reducers import limits

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
    kind: str
    period: str
    label: str
    amount: Decimal | None
    left: Decimal | None
    pending_amount: Decimal | None
    pending_from: datetime | None


@dataclass(frozen=True)
class LimitKindView:
    kind: str
    label: str
    limits: list[LimitView]


def wallet_limits_view(*, wallet: Wallet | None, now: datetime) -> list[LimitKindView]:
    """Each kind's limits, each period's as it applies at ``now`` (a raise whose cooling-off has
    ended counts), what is left of it, and any raise still waiting."""
    found = {(limit.kind, limit.period): limit for limit in WalletLimit.objects.filter(wallet=wallet)} if wallet else {}
    kinds = []
    for kind, kind_label in WalletLimit.Kind.choices:
        views = []
        for period, label in WalletLimit.Period.choices:
            limit = found.get((kind, period))
            if limit is None or wallet is None:
                views.append(LimitView(kind, period, label, None, None, None, None))
                continue
            terms = limits.terms_at(limit.terms, now=now)
            window = limit_window(wallet=wallet, kind=kind, period=period, now=now)
            views.append(
                LimitView(
                    kind,
                    period,
                    label,
                    terms.amount,
                    limits.left(kind=kind, amount=terms.amount, window=window),
                    terms.pending_amount,
                    terms.pending_from,
                )
            )
        kinds.append(LimitKindView(kind, kind_label, views))
    return kinds


def wallet_break_running(*, wallet: Wallet | None) -> bool:
    return wallet is not None and wallet_on_break(wallet=wallet)


def wallet_on_break(*, wallet: Wallet) -> bool:
    """Whether the punter's time-out or self-exclusion runs now."""
    return wallet.excluded_until is not None and wallet.excluded_until > timezone.now()


def limit_window(*, wallet: Wallet, kind: str, period: str, now: datetime) -> limits.Window:
    """What the rolling window of ``period`` up to ``now`` holds for a limit of ``kind``: the
    deposits (withdrawals do not count), or the stakes and what bets paid back
    (``reducers.limits``), read from the index of the wallet's ledger by time."""
    since = now - limits.PERIOD_LENGTHS[period]
    entries = LedgerEntry.objects.filter(wallet=wallet, created_at__gt=since)
    if kind == limits.LimitKind.DEPOSIT:
        counted = Q(kind=LedgerEntry.Kind.DEPOSIT)
        found = entries.filter(counted).aggregate(counted=Sum("amount"), first_at=Min("created_at"))
        return limits.Window(counted=found["counted"] or Decimal("0.00"), first_at=found["first_at"])
    stakes = Q(kind=limits.STAKE_ENTRY)
    given_back = Q(kind=limits.STAKE_RETURN_ENTRY)
    returns = Q(kind__in=limits.RETURN_ENTRIES)
    resettled_in = Q(kind=limits.RESETTLE_ENTRY, credit=LedgerEntry.Account.WALLET)
    resettled_out = Q(kind=limits.RESETTLE_ENTRY, debit=LedgerEntry.Account.WALLET)
    found = entries.filter(stakes | given_back | returns | resettled_in | resettled_out).aggregate(
        counted=Sum("amount", filter=stakes),
        given_back=Sum("amount", filter=given_back),
        returned=Sum("amount", filter=returns),
        resettled_in=Sum("amount", filter=resettled_in),
        resettled_out=Sum("amount", filter=resettled_out),
        first_at=Min("created_at", filter=stakes),
    )
    zero = Decimal("0.00")
    return limits.Window(
        counted=(found["counted"] or zero) - (found["given_back"] or zero),
        returned=(found["returned"] or zero) + (found["resettled_in"] or zero) - (found["resettled_out"] or zero),
        first_at=found["first_at"],
    )
