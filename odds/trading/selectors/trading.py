"""Reads for the trader pages: finding events by text and filters, one event with its book,
and what a result would pay out before a trader confirms it."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal

import redis
from django.core.paginator import Page, Paginator
from django.db.models import Count, Exists, OuterRef, Prefetch, Q, QuerySet
from django.utils import timezone

from odds.betting.models import Bet, BetLeg
from odds.catalogue.models import Competition, Event, Market, Selection, Sport
from odds.catalogue.selectors.catalogue import STARTING_SOON
from odds.catalogue.selectors.prices import LiveStates, live_states
from odds.trading.selectors.rates import exchange_rates_in_force
from reducers.money import Amounts
from reducers.schemas import parse_price

log = logging.getLogger(__name__)

EVENTS_PER_PAGE = 20
SEARCH_MAX_LENGTH = 100
# Market statuses a trader can filter on; "active" (open, suspended or awaiting settlement) is the default.
MARKET_STATUS_FILTERS = {
    "active": (Market.Status.OPEN, Market.Status.SUSPENDED, Market.Status.CLOSED),
    "open": (Market.Status.OPEN,),
    "suspended": (Market.Status.SUSPENDED,),
    "closed": (Market.Status.CLOSED,),
    "settled": (Market.Status.SETTLED,),
}


@dataclass(frozen=True)
class EventFilters:
    """What the trader asked for, as read from the query string (every field optional)."""

    q: str = ""
    sport: str = ""
    competition: int | None = None
    status: str = "active"
    in_play: bool = False
    soon: bool = False


def _markets_prefetch(*, statuses: tuple[str, ...] | None) -> Prefetch:
    markets = Market.objects.order_by("display_order", "id").prefetch_related(
        Prefetch("selections", queryset=Selection.objects.order_by("display_order", "id"))
    )
    if statuses is not None:
        markets = markets.filter(status__in=statuses)
    return Prefetch("markets", queryset=markets)


def trading_events_query(*, filters: EventFilters, now: datetime | None = None) -> QuerySet[Event]:
    """Events matching the filters, soonest first. The text matches the home or away team, or
    the competition; the status is the status of at least one of the event's markets."""
    now = now or timezone.now()
    statuses = MARKET_STATUS_FILTERS.get(filters.status, MARKET_STATUS_FILTERS["active"])
    market_match = Market.objects.filter(event=OuterRef("pk"), status__in=statuses)
    events = Event.objects.select_related("competition__sport").filter(Exists(market_match))
    text = filters.q.strip()[:SEARCH_MAX_LENGTH]
    for word in text.split():
        events = events.filter(Q(home__icontains=word) | Q(away__icontains=word) | Q(competition__name__icontains=word))
    if filters.sport:
        events = events.filter(competition__sport__slug=filters.sport)
    if filters.competition is not None:
        events = events.filter(competition_id=filters.competition)
    if filters.in_play:
        events = events.filter(status=Event.Status.IN_PLAY)
    if filters.soon:
        events = events.filter(status=Event.Status.SCHEDULED, starts_at__gte=now, starts_at__lt=now + STARTING_SOON)
    return events.order_by("starts_at", "id").prefetch_related(_markets_prefetch(statuses=statuses))


def trading_events_page(*, filters: EventFilters, page_number: int = 1, per_page: int = EVENTS_PER_PAGE) -> Page:
    """One page of ``trading_events_query`` (a page number past the end gives the last page)."""
    return Paginator(trading_events_query(filters=filters), per_page).get_page(page_number)


def trading_filter_choices() -> dict[str, list]:
    """The sports and competitions the filter menus offer."""
    return {
        "sports": list(Sport.objects.order_by("display_order", "name").values("slug", "name")),
        "competitions": list(
            Competition.objects.select_related("sport").order_by("sport__display_order", "name").values("id", "name")
        ),
    }


def trading_event(*, event_id: int) -> Event:
    """One event with every market (settled ones included) and their selections."""
    return (
        Event.objects.select_related("competition__sport")
        .prefetch_related(_markets_prefetch(statuses=None))
        .get(id=event_id)
    )


def trading_market_query() -> QuerySet[Market]:
    """Markets with their event and ordered selections, as a trader's row shows them."""
    return Market.objects.select_related("event__competition__sport").prefetch_related(
        Prefetch("selections", queryset=Selection.objects.order_by("display_order", "id"))
    )


def trading_market(*, market_id: int) -> Market:
    return trading_market_query().get(id=market_id)


@dataclass
class ResultImpact:
    """What resulting (or settling) a market would do to the open bets with a leg in it.

    ``payout`` is what those bets pay if the result stands and every other leg of an accumulator
    wins too (the most the book can pay on them). ``stake`` and ``payout`` are in each bet's own
    currency; ``stake_book`` and ``payout_book`` are their sums in the book's currency at the
    operator's current rates.
    """

    market_id: int
    bets: int = 0
    stake: Amounts = field(default_factory=Amounts)
    payout: Amounts = field(default_factory=Amounts)
    stake_book: Decimal = Decimal("0.00")
    payout_book: Decimal = Decimal("0.00")
    winners: list[str] = field(default_factory=list)
    void: bool = False
    before_start: bool = False


def market_result_impact(*, market: Market, winners: Iterable[int] | None, now: datetime | None = None) -> ResultImpact:
    """The open bets a result would settle and what they would pay: ``winners`` win and the
    others lose; ``None`` voids the market (stakes back). For a market already resulted, the
    result stored on its selections is used and ``winners`` is ignored."""
    now = now or timezone.now()
    selections = list(market.selections.all())
    if market.status in (Market.Status.CLOSED, Market.Status.SETTLED):
        outcome = {s.id: s.result for s in selections}
    elif winners is None:
        outcome = {s.id: Selection.Result.VOID for s in selections}
    else:
        won = set(winners)
        outcome = {s.id: (Selection.Result.WON if s.id in won else Selection.Result.LOST) for s in selections}
    impact = ResultImpact(
        market_id=market.id,
        winners=[s.name for s in selections if outcome[s.id] == Selection.Result.WON],
        void=all(result == Selection.Result.VOID for result in outcome.values()),
        before_start=market.event.starts_at > now,
    )
    legs = BetLeg.objects.filter(market_id=market.id, bet__status__in=Bet.OPEN_STATUSES).select_related(
        "bet__user__wallet"
    )
    for leg in legs:
        bet = leg.bet
        currency = bet.user.wallet.currency
        impact.bets += 1
        impact.stake.add(bet.stake, currency)
        result = outcome.get(leg.selection_id, Selection.Result.UNDECIDED)
        if result == Selection.Result.WON:
            impact.payout.add(bet.potential_return, currency)
        elif result == Selection.Result.VOID:
            # A void leg counts at odds of 1: the bet pays its return without this leg's price.
            impact.payout.add((bet.potential_return / leg.price).quantize(Decimal("0.01")), currency)
    rates = exchange_rates_in_force()
    impact.stake_book, impact.payout_book = impact.stake.in_book(rates), impact.payout.in_book(rates)
    return impact


def market_open_bets_count(*, market_ids: list[int]) -> dict[int, int]:
    """Open bets with a leg in each market (markets without any are left out)."""
    rows = (
        BetLeg.objects.filter(market_id__in=market_ids, bet__status__in=Bet.OPEN_STATUSES)
        .values("market_id")
        .annotate(bets=Count("bet_id", distinct=True))
    )
    return {row["market_id"]: row["bets"] for row in rows}


OPEN_BETS_SHOWN = 50


def event_open_bets(*, event_id: int, limit: int = OPEN_BETS_SHOWN) -> list[Bet]:
    """The newest open bets with a leg on the event (punter and legs loaded), for the trader to
    void one if need be."""
    return list(
        Bet.objects.filter(status=Bet.Status.ACCEPTED, legs__event_id=event_id)
        .distinct()
        .select_related("user__wallet")
        .prefetch_related(Prefetch("legs", queryset=BetLeg.objects.select_related("selection__market")))
        .order_by("-placed_at", "-id")[:limit]
    )


def markets_live_attach(*, markets: Iterable[Market]) -> None:
    """Give each selection of ``markets`` (selections loaded) its ``live_price``: the price bets
    are placed at now, read from Redis as placement reads it (the reducers' state, or a trader's
    decision they have not applied yet), or None when the market has no live state. A Redis that
    cannot be read leaves every price None."""
    markets = list(markets)
    try:
        states = live_states(market_ids=[m.id for m in markets])
    except redis.RedisError:
        log.warning("live prices unavailable for the trading page", exc_info=True)
        states = LiveStates()
    for market in markets:
        state = states.get(market.id) or {}
        prices = {
            item["id"]: item.get("price")
            for item in state.get("selections", [])
            if isinstance(item, dict) and "id" in item
        }
        for selection in market.selections.all():
            raw = prices.get(selection.id)
            try:
                live = parse_price(str(raw)) if raw is not None else None
            except ValueError:
                live = None
            # An attribute for the template, as boards_attach gives events their board (set by name:
            # it is no field of the model, so the type checker knows no such attribute).
            setattr(selection, "live_price", live)  # noqa: B010
