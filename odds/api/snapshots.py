"""``GET /api/views/…``: view snapshots (``odds.selectors.snapshots``) served so that a cache in
front can share them: the same bytes for every punter, no cookies read or set, ``Cache-Control``
with a short max-age and ``stale-while-revalidate``, an entity tag and ``304`` for a copy still
current. Personal parts (balance, slip, login) come from their own endpoints."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from odds.api.http import error_response, public_get
from odds.api.schemas import ApiError
from odds.models import Competition, Event, Sport
from odds.selectors.catalogue import competition_get, event_detail, event_list
from odds.selectors.snapshots import Snapshot, view_snapshot


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


@public_get
def home_view(request: HttpRequest) -> HttpResponse:
    return _serve(request, view_snapshot(view="home", events=event_list(), markets_of="headline_markets"))


@public_get
def in_play_view(request: HttpRequest) -> HttpResponse:
    events = event_list(in_play=True)
    return _serve(request, view_snapshot(view="in-play", events=events, markets_of="headline_markets"))


@public_get
def starting_soon_view(request: HttpRequest) -> HttpResponse:
    events = event_list(starting_soon=True)
    return _serve(request, view_snapshot(view="starting-soon", events=events, markets_of="headline_markets"))


@public_get
def sport_view(request: HttpRequest, sport_slug: str) -> HttpResponse:
    if not Sport.objects.filter(slug=sport_slug).exists():
        return _missing("sport")
    events = event_list(sport_slug=sport_slug)
    return _serve(request, view_snapshot(view=f"sport/{sport_slug}", events=events, markets_of="headline_markets"))


@public_get
def competition_view(request: HttpRequest, sport_slug: str, competition_id: int) -> HttpResponse:
    try:
        competition_get(competition_id=competition_id, sport_slug=sport_slug)
    except Competition.DoesNotExist:
        return _missing("competition")
    events = event_list(competition_id=competition_id)
    view = f"sport/{sport_slug}/{competition_id}"
    return _serve(request, view_snapshot(view=view, events=events, markets_of="headline_markets"))


@public_get
def event_view(request: HttpRequest, event_id: int) -> HttpResponse:
    try:
        event = event_detail(event_id=event_id)
    except Event.DoesNotExist:
        return _missing("event")
    return _serve(request, view_snapshot(view=f"event/{event_id}", events=[event], markets_of="markets"))
