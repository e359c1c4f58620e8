"""``GET /api/views/…``: view snapshots (``odds.streaming.selectors.snapshots``) served so that a cache in
front can share them: the same bytes for every punter, no cookies read or set, ``Cache-Control``
with a short max-age and ``stale-while-revalidate``, an entity tag and ``304`` for a copy still
current. Personal parts (balance, slip, login) come from their own endpoints."""

from __future__ import annotations

from typing import Annotated, Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from ninja import Router
from pydantic import Field

from odds.api.http import answers, error_response
from odds.api.schemas import common
from odds.api.schemas import snapshots as s
from odds.api.schemas.common import ApiError
from odds.catalogue.models import Competition, Event, Sport
from odds.catalogue.selectors.catalogue import STARTING_SOON, competition_get, event_detail, event_list
from odds.streaming.selectors.snapshots import Snapshot, view_snapshot


def public_cache_control() -> str:
    """What a shared cache may do with a view: keep it briefly, then serve it stale while it
    refreshes (the HTML pages of visitors who are not logged in say the same)."""
    max_age, stale = settings.VIEW_SNAPSHOT_MAX_AGE_S, settings.VIEW_SNAPSHOT_STALE_S
    return f"public, max-age={max_age}, stale-while-revalidate={stale}"


def _serve(request: HttpRequest, snapshot: Snapshot) -> HttpResponse:
    held = [tag.strip() for tag in request.headers.get("If-None-Match", "").split(",")]
    if snapshot.etag in held or "*" in held:
        response = HttpResponse(status=304)
    else:
        response = HttpResponse(snapshot.body, content_type="application/json")
    response["ETag"] = snapshot.etag
    response["Cache-Control"] = public_cache_control()
    return response


def _missing(what: str) -> HttpResponse:
    return error_response(ApiError(404, "not_found", f"no such {what}"))


# Public reads: no login, no cookie read; GET and HEAD.
router = Router(tags=["views"])
ABOUT = (
    "The same for every punter (no cookie read or set), cacheable: `Cache-Control` public with a short max-age and"
    " `stale-while-revalidate`, an `ETag`, and `304 Not Modified` (no body) to an `If-None-Match` naming the current"
    " one. Each market's `seq` and `status` go in a `watch`'s `since` (docs/protocol.md), so the stream then brings"
    " only what moved."
)


def _view(path: str, summary: str, url_name: str, *, missing: str | None = None) -> Any:
    found = {200: (s.ViewSnapshot, "The view's snapshot.", ("ETag", "Cache-Control"))}
    refused = {404: (common.NotFound, f"No such {missing}.")} if missing else {}
    return router.api_operation(
        ["GET", "HEAD"],
        path,
        summary=summary,
        description=ABOUT,
        url_name=url_name,
        **answers(found, refused, access="public"),
    )


SportSlug = Annotated[str, Field(pattern="^[-a-zA-Z0-9_]+$", description="A sport's slug (football).")]


@_view("home", "Live and upcoming events with their main market", "view-home")
def home_view(request: HttpRequest) -> HttpResponse:
    return _serve(request, view_snapshot(view="home", events=event_list(), markets_of="headline_markets"))


@_view("in-play", "Events in play with their main market", "view-in-play")
def in_play_view(request: HttpRequest) -> HttpResponse:
    events = event_list(in_play=True)
    return _serve(request, view_snapshot(view="in-play", events=events, markets_of="headline_markets"))


@_view(
    "starting-soon",
    f"Events kicking off within {STARTING_SOON.total_seconds() / 3600:g} hours, with their main market",
    "view-starting-soon",
)
def starting_soon_view(request: HttpRequest) -> HttpResponse:
    events = event_list(starting_soon=True)
    return _serve(request, view_snapshot(view="starting-soon", events=events, markets_of="headline_markets"))


@_view("sport/{slug:sport_slug}", "A sport's events", "view-sport", missing="sport")
def sport_view(request: HttpRequest, sport_slug: SportSlug) -> HttpResponse:
    if not Sport.objects.filter(slug=sport_slug).exists():
        return _missing("sport")
    events = event_list(sport_slug=sport_slug)
    return _serve(request, view_snapshot(view=f"sport/{sport_slug}", events=events, markets_of="headline_markets"))


@_view(
    "sport/{slug:sport_slug}/{int:competition_id}", "A competition's events", "view-competition", missing="competition"
)
def competition_view(request: HttpRequest, sport_slug: SportSlug, competition_id: int) -> HttpResponse:
    try:
        competition_get(competition_id=competition_id, sport_slug=sport_slug)
    except Competition.DoesNotExist:
        return _missing("competition")
    events = event_list(competition_id=competition_id)
    view = f"sport/{sport_slug}/{competition_id}"
    return _serve(request, view_snapshot(view=view, events=events, markets_of="headline_markets"))


@_view("event/{int:event_id}", "An event with every market", "view-event", missing="event")
def event_view(request: HttpRequest, event_id: int) -> HttpResponse:
    try:
        event = event_detail(event_id=event_id)
    except Event.DoesNotExist:
        return _missing("event")
    return _serve(request, view_snapshot(view=f"event/{event_id}", events=[event], markets_of="markets"))
