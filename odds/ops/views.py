"""Operator pages and endpoints: the lag dashboard (/ops/lag) and Prometheus metrics (/metrics).

Their routes are ``odds/ops/urls.py``.
"""

from __future__ import annotations

import ipaddress
import secrets

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST

from odds.core.metrics_prometheus import metrics_exposition
from odds.core.staff import staff_page
from odds.ops.selectors.backups import backups_overview
from odds.ops.selectors.ops import DEAD_LETTER_SOURCES, RANGES, dead_letters_recent


@staff_page
def lag_page(request: HttpRequest) -> HttpResponse:
    context = {
        "page": "lag",
        "ranges": list(RANGES),
        "sample_s": settings.OPS_SAMPLE_INTERVAL_S,
        "stale_s": round(settings.OPS_REPORT_STALE_S),
    }
    return render(request, "odds/ops/lag.html", context)


DEAD_LETTERS_SHOWN = 100


@staff_page
def dead_letters_page(request: HttpRequest) -> HttpResponse:
    """The newest dead letters of every reducer topic, filtered by source topic and reason."""
    source = request.GET.get("source") or None
    reason = request.GET.get("reason") or None
    context = {
        "page": "dead-letters",
        "sources": list(DEAD_LETTER_SOURCES),
        "source": source,
        "reason": reason,
        "shown": DEAD_LETTERS_SHOWN,
    }
    if source is not None and source not in DEAD_LETTER_SOURCES:
        context["error"] = f"There is no dead-letter topic for “{source}”. Choose one of the list."
        return render(request, "odds/ops/dead_letters.html", context, status=400)
    found = dead_letters_recent(source=source, reason=reason, limit=DEAD_LETTERS_SHOWN)
    return render(request, "odds/ops/dead_letters.html", {**context, **found})


@staff_page
def backups_page(request: HttpRequest) -> HttpResponse:
    """PostgreSQL's newest backup and its WAL archive, each against its objective."""
    return render(request, "odds/ops/backups.html", {"page": "backups", **backups_overview()})


def metrics_token() -> str:
    return str(settings.METRICS_TOKEN)


def _loopback(request: HttpRequest) -> bool:
    try:
        return ipaddress.ip_address(request.META.get("REMOTE_ADDR", "")).is_loopback
    except ValueError:
        return False


@never_cache
@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    """Prometheus scrape target: ``Authorization: Bearer $METRICS_TOKEN``; with no token
    configured only loopback clients are answered, in development only (in production a
    reverse proxy on the same host makes every client loopback)."""
    token = metrics_token()
    if not token and settings.METRICS_TOKEN_REQUIRED:
        return HttpResponse("METRICS_TOKEN is not configured\n", status=403, content_type="text/plain")
    if token:
        given = request.headers.get("Authorization", "")
        if not secrets.compare_digest(given.encode(), f"Bearer {token}".encode()):
            response = HttpResponse("bearer token required\n", status=401, content_type="text/plain")
            response["WWW-Authenticate"] = 'Bearer realm="metrics"'
            return response
    elif not _loopback(request):
        return HttpResponse("set METRICS_TOKEN to scrape from other hosts\n", status=403, content_type="text/plain")
    return HttpResponse(metrics_exposition(), content_type=CONTENT_TYPE_LATEST)
