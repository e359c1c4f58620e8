from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from odds.models import Event
from odds.selectors.catalogue import event_detail, event_list, sport_list


def home(request: HttpRequest, sport_slug: str | None = None) -> HttpResponse:
    return render(
        request,
        "odds/home.html",
        {"sports": sport_list(), "events": event_list(sport_slug=sport_slug), "active_sport": sport_slug},
    )


def event_page(request: HttpRequest, event_id: int) -> HttpResponse:
    try:
        event = event_detail(event_id=event_id)
    except Event.DoesNotExist as exc:
        raise Http404("no such event") from exc
    return render(request, "odds/event.html", {"sports": sport_list(), "event": event})
