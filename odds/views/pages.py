"""Punter pages: event lists, event pages, my bets. Live data is added in the browser.

The public pages (the event lists and an event) are built from the same live overlay as the view
snapshots (``odds.api.snapshots``). For a visitor who is not logged in, such a page is the same
bytes for everyone: no cookie is read or set (the page has no form to protect), and it is served
with the snapshots' ``Cache-Control`` and an entity tag, so a cache in front can share it. A
logged-in punter gets a page with their own header (balance, logout form), which no cache keeps.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from allauth.account import views as allauth_views
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import AuthenticationForm
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.middleware.csrf import get_token
from django.shortcuts import render
from django.utils.cache import get_conditional_response, patch_cache_control, set_response_etag
from django.views.decorators.csrf import ensure_csrf_cookie
from django.views.decorators.http import require_GET

from odds.accounts.play import ENDED_PARAM, ENDED_SESSION_LIMIT, SESSION_LIMIT_SIGNED_OUT
from odds.api.http import error_response, query_ids
from odds.api.schemas.common import ApiError
from odds.api.snapshots import public_cache_control
from odds.catalogue.models import Competition, Event
from odds.catalogue.selectors.catalogue import (
    STARTING_SOON,
    boards_attach,
    competition_get,
    event_detail,
    event_groups,
    event_list,
    event_scores,
    sport_nav,
)
from odds.core.pages import private_page
from odds.streaming.selectors.snapshots import live_overlay
from reducers.subscriptions import QuerySpec

MAX_LIVE_EVENTS = 200

PageView = Callable[..., HttpResponse]


def shared_page(view: PageView) -> PageView:
    """A public page: shareable by a cache for visitors who are not logged in, personal otherwise."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.user.is_authenticated:
            get_token(request)  # the page's forms and the API calls of its scripts send it
            response = view(request, *args, **kwargs)
            patch_cache_control(response, private=True, no_cache=True)
            return response
        response = view(request, *args, **kwargs)
        if response.status_code != 200 or request.method not in ("GET", "HEAD"):
            return response
        response["Cache-Control"] = public_cache_control()
        set_response_etag(response)
        return get_conditional_response(request, etag=response["ETag"], response=response) or response

    return wrapper


def _page(request: HttpRequest, template: str, context: dict[str, Any]) -> HttpResponse:
    return render(request, template, {"nav": sport_nav(), **context})


# ``?fragment=listing``: only the list, which a page following its query fetches again when the
# query's shared channel says markets joined, left or changed (``v``, the channel's sequence, keeps
# a cache in front from answering with an older list).
LISTING_FRAGMENT = "listing"
LIST_LIMIT = 80


def _listing(
    request: HttpRequest, *, title: str, events: list[Event], query: QuerySpec, **context: Any
) -> HttpResponse:
    live = [e for e in events if e.status == Event.Status.IN_PLAY]
    upcoming = [e for e in events if e.status != Event.Status.IN_PLAY]
    # ``headline_markets``: prefetched by event_list.
    held = live_overlay(markets=[market for event in events for market in getattr(event, "headline_markets", [])])
    boards_attach(events=events, layout="row")
    fragment = request.GET.get("fragment") == LISTING_FRAGMENT
    return _page(
        request,
        "odds/_listing.html" if fragment else "odds/home.html",
        {
            "title": title,
            "live_groups": event_groups(live),
            "upcoming_groups": event_groups(upcoming),
            "held": held,
            "list_query": query.canonical().decode(),
            # A list cut at event_list's limit lacks events its query holds, by design.
            "list_cut": LIST_LIMIT if len(events) >= LIST_LIMIT else None,
            **context,
        },
    )


@shared_page
def home(request: HttpRequest, sport_slug: str | None = None) -> HttpResponse:
    events = event_list(sport_slug=sport_slug, limit=LIST_LIMIT)
    if sport_slug is None:
        return _listing(request, title="Live and upcoming", events=events, query=QuerySpec(headline=True))
    nav = {item.sport.slug: item.sport.name for item in sport_nav()}
    if sport_slug not in nav:
        raise Http404("no such sport")
    return _listing(
        request,
        title=nav[sport_slug],
        events=events,
        query=QuerySpec(sport=sport_slug, headline=True),
        active_sport=sport_slug,
    )


@shared_page
def competition_page(request: HttpRequest, sport_slug: str, competition_id: int) -> HttpResponse:
    try:
        competition = competition_get(competition_id=competition_id, sport_slug=sport_slug)
    except Competition.DoesNotExist as exc:
        raise Http404("no such competition") from exc
    return _listing(
        request,
        title=competition.name,
        events=event_list(competition_id=competition_id, limit=LIST_LIMIT),
        query=QuerySpec(competition=competition_id, headline=True),
        active_sport=sport_slug,
        active_competition=competition_id,
        crumb=competition.sport,
    )


@shared_page
def in_play(request: HttpRequest) -> HttpResponse:
    return _listing(
        request,
        title="In play",
        events=event_list(in_play=True, limit=LIST_LIMIT),
        query=QuerySpec(in_play=True, headline=True),
        active_in_play=True,
    )


@shared_page
def starting_soon(request: HttpRequest) -> HttpResponse:
    hours = int(STARTING_SOON.total_seconds() // 3600)
    return _listing(
        request,
        title="Starting soon",
        events=event_list(starting_soon=True, limit=LIST_LIMIT),
        query=QuerySpec(starting_within_minutes=int(STARTING_SOON.total_seconds() // 60), headline=True),
        active_starting_soon=True,
        empty=f"Nothing starts in the next {hours} hours.",
    )


@shared_page
def event_page(request: HttpRequest, event_id: int) -> HttpResponse:
    try:
        event = event_detail(event_id=event_id)
    except Event.DoesNotExist as exc:
        raise Http404("no such event") from exc
    held = live_overlay(markets=list(event.markets.all()))
    boards_attach(events=[event], layout="head")
    context = {"event": event, "active_sport": event.competition.sport.slug, "held": held}
    return _page(request, "odds/event.html", context)


@login_required
@ensure_csrf_cookie
@private_page
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


# Seconds a login refused because its attempt could not be counted (Redis) asks the client to wait.
LOGIN_UNAVAILABLE_RETRY_S = 5


class LoginView(allauth_views.LoginView):
    """The site's login page: allauth's login (username or email and password, then the
    account's second factor when it has one). Every POST to it has been counted by the login
    throttle (``webapp.middleware.LoginThrottleMiddleware``) before the password is checked;
    ``next`` is followed only to a path of this site (allauth's own check)."""

    template_name = "odds/login.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        # The demo accounts are listed only where they exist: a development stack with demo data.
        context = super().get_context_data(**kwargs)
        return {
            **context,
            "next": context.get("redirect_field_value") or "",
            "demo_accounts": settings.DEMO,
            "session_limit_ended": self.request.GET.get(ENDED_PARAM) == ENDED_SESSION_LIMIT,
            "session_limit_message": SESSION_LIMIT_SIGNED_OUT,
        }


def login_refused(
    request: HttpRequest, *, username: str, retry_after_s: int, unavailable: bool = False
) -> HttpResponse:
    """The login page refusing an attempt without checking its password: 429 over the throttle's
    limit, 503 when the attempt could not be counted; ``Retry-After`` either way. The admin's
    login form gets the same page, which brings its staff back to the admin."""
    # An unbound form: validating a bound one would check the password.
    form = AuthenticationForm(request, initial={"username": username[:150]})
    next_url = str(request.POST.get("next") or request.GET.get("next") or "")
    if not next_url and request.path_info.startswith("/admin/"):
        next_url = "/admin/"
    context = {
        "form": form,
        "next": next_url,
        "throttled_minutes": 0 if unavailable else -(-retry_after_s // 60),
        "login_unavailable": unavailable,
        "demo_accounts": settings.DEMO,
    }
    response = render(request, "odds/login.html", context, status=503 if unavailable else 429)
    response["Retry-After"] = str(retry_after_s)
    return response
