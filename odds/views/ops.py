"""Operator pages and endpoints: the lag dashboard (/ops/lag) and Prometheus metrics (/metrics).

``urlpatterns`` lists every staff page and API of the trader and operator areas; the project's
URL configuration includes it once.
"""

from __future__ import annotations

import ipaddress
import secrets

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import path
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST

from odds.api.api import urlpatterns_under
from odds.selectors.ops import DEAD_LETTER_SOURCES, RANGES, dead_letters_recent
from odds.services.metrics_prometheus import metrics_exposition
from odds.views import trading
from odds.views.trading import staff_page


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


# Staff pages and APIs (every one of them is checked for 401/403 by the tests).
staff_urlpatterns = [
    path("trading/", trading.markets_page, name="trading-markets"),
    path("trading/events", trading.event_create_view, name="trading-event-create"),
    path("trading/event/<int:event_id>/", trading.event_page, name="trading-event"),
    path("trading/markets/<int:market_id>/suspend", trading.market_suspend_view, name="trading-market-suspend"),
    path("trading/markets/<int:market_id>/resume", trading.market_resume_view, name="trading-market-resume"),
    path("trading/markets/<int:market_id>/price", trading.selection_price_view, name="trading-market-price"),
    path("trading/markets/<int:market_id>/result", trading.market_result_view, name="trading-market-result"),
    path("trading/markets/<int:market_id>/settle", trading.market_settle_view, name="trading-market-settle"),
    path(
        "trading/markets/<int:market_id>/result/confirm",
        trading.market_result_confirm_view,
        name="trading-market-result-confirm",
    ),
    path(
        "trading/markets/<int:market_id>/settle/confirm",
        trading.market_settle_confirm_view,
        name="trading-market-settle-confirm",
    ),
    path("trading/markets/<int:market_id>/settlement", trading.settlement_page, name="trading-settlement"),
    path("trading/liability", trading.liability_page, name="trading-liability"),
    path("trading/subscriptions", trading.subscriptions_page, name="trading-subscriptions"),
    path("ops/lag", lag_page, name="ops-lag"),
    path("ops/dead-letters", dead_letters_page, name="ops-dead-letters"),
    # The staff JSON APIs (odds/api/ops.py).
    *urlpatterns_under("trading/api/"),
    *urlpatterns_under("ops/api/"),
]

urlpatterns = [*staff_urlpatterns, path("metrics", metrics, name="metrics")]
