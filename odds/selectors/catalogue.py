"""Reads of the catalogue for pages and APIs."""

from __future__ import annotations

from django.db.models import Prefetch, QuerySet

from odds.models import Event, Market, Selection, Sport


def sport_list() -> QuerySet[Sport]:
    return Sport.objects.all()


def event_list(*, sport_slug: str | None = None, limit: int = 60) -> list[Event]:
    """Upcoming and in-play events with their headline market and its selections."""
    events = (
        Event.objects.filter(status__in=[Event.Status.SCHEDULED, Event.Status.IN_PLAY])
        .select_related("competition__sport")
        .prefetch_related(
            Prefetch(
                "markets",
                queryset=Market.objects.filter(display_order=0).prefetch_related(
                    Prefetch("selections", queryset=Selection.objects.order_by("display_order"))
                ),
                to_attr="headline_markets",
            )
        )
        .order_by("-status", "starts_at", "id")
    )
    if sport_slug:
        events = events.filter(competition__sport__slug=sport_slug)
    return list(events[:limit])


def event_detail(*, event_id: int) -> Event:
    return (
        Event.objects.select_related("competition__sport")
        .prefetch_related(
            Prefetch(
                "markets",
                queryset=Market.objects.prefetch_related(
                    Prefetch("selections", queryset=Selection.objects.order_by("display_order"))
                ),
            )
        )
        .get(id=event_id)
    )
