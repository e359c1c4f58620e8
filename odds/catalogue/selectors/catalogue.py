"""Reads of the catalogue for pages and APIs."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import orjson
import redis
from django.db.models import Case, Count, IntegerField, Prefetch, Q, QuerySet, Value, When
from django.utils import timezone

from odds.catalogue.models import Competition, Event, Market, Selection, Sport
from odds.catalogue.scoreboard import Layout, board_of
from odds.core.connections import redis_shared
from store.matches import queue_matches

LISTED = (Event.Status.SCHEDULED, Event.Status.IN_PLAY)
TRADED = (Market.Status.OPEN, Market.Status.SUSPENDED)
# "Starting soon": events not yet in play whose kick-off is within this window (punters' pages
# and the traders' filter alike).
STARTING_SOON = timedelta(hours=2)


def sport_list() -> QuerySet[Sport]:
    return Sport.objects.all()


@dataclass
class SportNav:
    sport: Sport
    live: int
    upcoming: int
    competitions: list[Competition] = field(default_factory=list)


def sport_nav() -> list[SportNav]:
    """Sports with their competitions and how many events each has in play and coming up."""
    live = Count("competitions__events", filter=Q(competitions__events__status=Event.Status.IN_PLAY), distinct=True)
    upcoming = Count(
        "competitions__events", filter=Q(competitions__events__status=Event.Status.SCHEDULED), distinct=True
    )
    competitions = Competition.objects.annotate(
        listed=Count("events", filter=Q(events__status__in=LISTED)),
        live=Count("events", filter=Q(events__status=Event.Status.IN_PLAY)),
    ).order_by("name")
    sports = Sport.objects.annotate(live=live, upcoming=upcoming).prefetch_related(
        Prefetch("competitions", queryset=competitions, to_attr="listed_competitions")
    )
    return [
        SportNav(
            sport=sport,
            live=sport.live,
            upcoming=sport.upcoming,
            competitions=[c for c in sport.listed_competitions if c.listed],
        )
        for sport in sports
    ]


def _headline_markets() -> Prefetch[Any]:
    return Prefetch(
        "markets",
        queryset=Market.objects.filter(display_order=0).prefetch_related(
            Prefetch("selections", queryset=Selection.objects.order_by("display_order", "id"))
        ),
        to_attr="headline_markets",
    )


def event_list(
    *,
    sport_slug: str | None = None,
    competition_id: int | None = None,
    in_play: bool | None = None,
    starting_soon: bool = False,
    limit: int = 80,
) -> list[Event]:
    """Listed events, in play first, then by kick-off; each with its headline market
    (``headline_markets``) and the number of markets still traded (``market_count``).
    ``starting_soon``: only events not in play whose kick-off is within ``STARTING_SOON``."""
    events = (
        Event.objects.filter(status__in=LISTED)
        .select_related("competition__sport")
        .annotate(
            live_first=Case(
                When(status=Event.Status.IN_PLAY, then=Value(0)), default=Value(1), output_field=IntegerField()
            ),
            market_count=Count("markets", filter=Q(markets__status__in=TRADED)),
        )
        .prefetch_related(_headline_markets())
        .order_by("live_first", "starts_at", "id")
    )
    if sport_slug:
        events = events.filter(competition__sport__slug=sport_slug)
    if competition_id is not None:
        events = events.filter(competition_id=competition_id)
    if in_play is not None:
        events = events.filter(status=Event.Status.IN_PLAY) if in_play else events.filter(status=Event.Status.SCHEDULED)
    if starting_soon:
        now = timezone.now()
        events = events.filter(status=Event.Status.SCHEDULED, starts_at__gte=now, starts_at__lt=now + STARTING_SOON)
    return list(events[:limit])


@dataclass
class EventGroup:
    """Consecutive events of one competition, shown under one heading with price columns."""

    competition: Competition
    columns: list[str]
    events: list[Event]


def _columns(events: list[Event]) -> list[str]:
    headlines = (m for e in events for m in getattr(e, "headline_markets", ()))
    widest = max((len(m.selections.all()) for m in headlines), default=0)
    return ["1", "X", "2"] if widest == 3 else ["1", "2"] if widest == 2 else [""] * widest


def event_groups(events: list[Event]) -> list[EventGroup]:
    """Group an ordered event list by competition; groups keep the order of their first event."""
    runs: dict[int, list[Event]] = {}
    for event in events:
        runs.setdefault(event.competition_id, []).append(event)
    return [
        EventGroup(competition=members[0].competition, columns=_columns(members), events=members)
        for members in runs.values()
    ]


def event_detail(*, event_id: int) -> Event:
    """The event with every market, settled ones too (the punter sees their winners)."""
    return (
        Event.objects.select_related("competition__sport")
        .prefetch_related(
            Prefetch(
                "markets",
                queryset=Market.objects.order_by("display_order", "id").prefetch_related(
                    Prefetch("selections", queryset=Selection.objects.order_by("display_order", "id"))
                ),
            )
        )
        .get(id=event_id)
    )


def event_scores(*, event_ids: list[int]) -> list[dict[str, Any]]:
    """Status, score and clock of events, for pages that show them live; ``match`` is the
    event's latest match state as the reducers keep it (the one its channels get), or ``None``."""
    rows: list[dict[str, Any]] = [
        dict(row)
        for row in Event.objects.filter(id__in=event_ids[:200])
        .values("id", "status", "home_score", "away_score", "clock")
        .order_by("id")
    ]
    if not rows:
        return rows
    try:
        states = match_states([row["id"] for row in rows])
    except redis.RedisError:
        states = [None] * len(rows)
    for row, state in zip(rows, states, strict=True):
        row["match"] = state
    return rows


def match_states(event_ids: list[int]) -> list[dict[str, Any] | None]:
    """Each event's latest match state as the reducers keep it (the ``match`` message its
    channels get), ``None`` where there is none; raises ``redis.RedisError`` when Redis fails."""
    if not event_ids:
        return []
    pipe = redis_shared().pipeline(transaction=False)
    queue_matches(pipe, event_ids)
    return [None if raw is None else orjson.loads(raw) for raw in pipe.execute()]


def boards_attach(*, events: list[Event], layout: Layout) -> None:
    """Give each event its scoreboard (``event.board``, odds.catalogue.scoreboard) as it stands
    now: from the match state the reducers hold, else from the event's own status and score. The
    events must have their competition's sport loaded."""
    ids = [event.id for event in events]
    try:
        states = match_states(ids)
    except redis.RedisError:
        states = [None] * len(ids)
    now_ms = int(time.time() * 1000)
    for event, state in zip(events, states, strict=True):
        event.board = board_of(  # type: ignore[attr-defined]  # in memory only: the page renders it
            event_id=event.id,
            sport=event.competition.sport.slug,
            home=event.home,
            away=event.away,
            match=state,
            now_ms=now_ms,
            layout=layout,
            status=event.status,
            home_score=event.home_score,
            away_score=event.away_score,
        )


def competition_get(*, competition_id: int, sport_slug: str) -> Competition:
    return Competition.objects.select_related("sport").get(id=competition_id, sport__slug=sport_slug)
