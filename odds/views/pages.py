"""Punter pages: event lists, event pages, my bets. Live data is added in the browser."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.csrf import ensure_csrf_cookie
from django.views.decorators.http import require_GET

from odds.api.http import error_response, query_ids
from odds.api.schemas import ApiError
from odds.models import Competition, Event
from odds.selectors.catalogue import (
    competition_get,
    event_detail,
    event_groups,
    event_list,
    event_scores,
    sport_nav,
)

MAX_LIVE_EVENTS = 200


def _page(request: HttpRequest, template: str, context: dict[str, Any]) -> HttpResponse:
    return render(request, template, {"nav": sport_nav(), **context})


def _listing(request: HttpRequest, *, title: str, events: list[Event], **context: Any) -> HttpResponse:
    live = [e for e in events if e.status == Event.Status.IN_PLAY]
    upcoming = [e for e in events if e.status != Event.Status.IN_PLAY]
    return _page(
        request,
        "odds/home.html",
        {"title": title, "live_groups": event_groups(live), "upcoming_groups": event_groups(upcoming), **context},
    )


@ensure_csrf_cookie
def home(request: HttpRequest, sport_slug: str | None = None) -> HttpResponse:
    events = event_list(sport_slug=sport_slug)
    if sport_slug is None:
        return _listing(request, title="Live and upcoming", events=events)
    nav = {item.sport.slug: item.sport.name for item in sport_nav()}
    if sport_slug not in nav:
        raise Http404("no such sport")
    return _listing(request, title=nav[sport_slug], events=events, active_sport=sport_slug)


@ensure_csrf_cookie
def competition_page(request: HttpRequest, sport_slug: str, competition_id: int) -> HttpResponse:
    try:
        competition = competition_get(competition_id=competition_id, sport_slug=sport_slug)
    except Competition.DoesNotExist as exc:
        raise Http404("no such competition") from exc
    return _listing(
        request,
        title=competition.name,
        events=event_list(competition_id=competition_id),
        active_sport=sport_slug,
        active_competition=competition_id,
        crumb=competition.sport,
    )


@ensure_csrf_cookie
def in_play(request: HttpRequest) -> HttpResponse:
    return _listing(request, title="In play", events=event_list(in_play=True), active_in_play=True)


@ensure_csrf_cookie
def event_page(request: HttpRequest, event_id: int) -> HttpResponse:
    try:
        event = event_detail(event_id=event_id)
    except Event.DoesNotExist as exc:
        raise Http404("no such event") from exc
    return _page(request, "odds/event.html", {"event": event, "active_sport": event.competition.sport.slug})


@login_required
@ensure_csrf_cookie
def my_bets(request: HttpRequest) -> HttpResponse:
    return _page(request, "odds/my_bets.html", {"active_my_bets": True})


@require_GET
def events_live(request: HttpRequest) -> HttpResponse:
    """``GET /live/events?ids=1,2,3``: status, score and clock of each event, which the price
    stream does not carry."""
    try:
        ids = query_ids(request, name="ids", limit=MAX_LIVE_EVENTS)
    except ApiError as error:
        return error_response(error)
    response = JsonResponse({"v": 1, "events": event_scores(event_ids=ids)})
    response["Cache-Control"] = "no-store"
    return response
