"""Reads for the customer page and the referrals queue (docs/referral.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from django.contrib.auth.models import User
from django.db.models import Prefetch
from django.utils import timezone

from odds.betting.models import Bet, BetLeg, OwedClaim
from odds.catalogue.models import Sport
from odds.trading.models import CustomerLimit, CustomerSportLimit
from reducers.rules import BOOK_CURRENCY, MAX_STAKE
from reducers.trading import customer_stake_limit

# The customer page's newest bets.
CUSTOMER_BETS = 20
# The most referrals the queue shows at once (each is answered within a minute).
REFERRALS_SHOWN = 100


@dataclass(frozen=True)
class SportLimitRow:
    sport: Sport
    max_stake: Decimal | None
    # What a bet on this sport alone may stake without a referral.
    effective: Decimal | None


@dataclass(frozen=True)
class CustomerView:
    customer: User
    currency: str
    stake_factor: Decimal | None
    factor_stake: Decimal | None
    sports: list[SportLimitRow]
    bets: list[Bet]
    # What corrected results left the customer owing (docs/resettlement.md): the total and the
    # claims still open, oldest first.
    owed: Decimal = Decimal("0.00")
    claims: list[OwedClaim] = field(default_factory=list)


def _legs() -> Prefetch:
    return Prefetch("legs", queryset=BetLeg.objects.select_related("selection", "market", "event").order_by("position"))


def customer_view(*, customer: User) -> CustomerView:
    """A customer's stake limits, what each sport's bet may stake without a referral, and their
    newest bets."""
    row = CustomerLimit.objects.filter(user=customer).first()
    factor = row.stake_factor if row else None
    limits = dict(CustomerSportLimit.objects.filter(user=customer).values_list("sport_id", "max_stake"))
    sports = [
        SportLimitRow(
            sport=sport,
            max_stake=limits.get(sport.id),
            effective=customer_stake_limit(
                max_stake=MAX_STAKE, factor=factor, sport_limits=[limits[sport.id]] if sport.id in limits else []
            ),
        )
        for sport in Sport.objects.order_by("name")
    ]
    wallet = getattr(customer, "wallet", None)
    return CustomerView(
        customer=customer,
        currency=wallet.currency if wallet else BOOK_CURRENCY,
        stake_factor=factor,
        factor_stake=customer_stake_limit(max_stake=MAX_STAKE, factor=factor, sport_limits=[]),
        sports=sports,
        bets=list(
            Bet.objects.filter(user=customer).prefetch_related(_legs()).order_by("-placed_at", "-id")[:CUSTOMER_BETS]
        ),
        owed=wallet.owed if wallet else Decimal("0.00"),
        claims=list(OwedClaim.objects.filter(wallet=wallet, outstanding__gt=0).order_by("id")) if wallet else [],
    )


def open_referrals() -> list[Bet]:
    """Referred bets waiting for a trader, the soonest to expire first."""
    return list(
        Bet.objects.filter(status=Bet.Status.PENDING, referred_limit__isnull=False, accept_at__gt=timezone.now())
        .select_related("user__wallet")
        .prefetch_related(_legs())
        .order_by("accept_at", "id")[:REFERRALS_SHOWN]
    )
