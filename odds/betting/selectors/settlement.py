"""Reads for settlement: the markets whose bets are due to be settled."""

from __future__ import annotations

from django.db.models import Exists, OuterRef, Q

from odds.betting.models import Bet, BetLeg
from odds.catalogue.models import Market, Selection


def markets_awaiting_settlement(*, limit: int = 500) -> list[int]:
    """Resulted markets (every selection decided) not yet marked settled, or still holding open bets."""
    undecided = Selection.objects.filter(market=OuterRef("pk"), result=Selection.Result.UNDECIDED)
    open_legs = BetLeg.objects.filter(
        market=OuterRef("pk"), result=BetLeg.Result.UNDECIDED, bet__status=Bet.Status.ACCEPTED
    )
    return list(
        Market.objects.filter(
            Q(status=Market.Status.CLOSED) | Q(Exists(open_legs), status=Market.Status.SETTLED),
        )
        .exclude(Exists(undecided))
        .order_by("id")
        .values_list("id", flat=True)[:limit]
    )
