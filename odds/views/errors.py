"""The site's own error pages (403, 404, 500, and 503 when Redis refuses or cannot be reached), in
the staff look under the staff areas (trading, ops, admin) and in the punters' look elsewhere.
Django's technical pages show only with ``DJANGO_DEBUG`` on, for a developer."""

from __future__ import annotations

import logging
import sys

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from redis import RedisError

from odds.api.http import STATE_RETRY_AFTER_S, state_unavailable

log = logging.getLogger(__name__)

STAFF_PREFIXES = ("/trading/", "/ops/", "/admin/")


def _staff_area(request: HttpRequest) -> bool:
    return request.path.startswith(STAFF_PREFIXES)


def forbidden(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return render(request, "403.html", {"staff_area": _staff_area(request)}, status=403)


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return render(request, "404.html", {"staff_area": _staff_area(request)}, status=404)


def server_error(request: HttpRequest) -> HttpResponse:
    """The 500 page: rendered without the request's context processors (the user, the session),
    whose own failure may be why it is shown. Django calls it while the exception is handled:
    Redis refusing a write or unreachable, wherever it was met (a view, the session's save), is
    a 503 with ``Retry-After`` instead."""
    if isinstance(sys.exc_info()[1], RedisError):
        log.warning("Redis refused or unreachable during %s %s", request.method, request.path, exc_info=True)
        return service_unavailable(request)
    return HttpResponse(render_to_string("500.html", {"staff_area": _staff_area(request)}), status=500)


API_PREFIXES = ("/api/", "/trading/api/", "/ops/api/")


def service_unavailable(request: HttpRequest) -> HttpResponse:
    """Redis refused a write (at its memory limit) or cannot be reached: 503 with ``Retry-After``,
    in JSON under the APIs and as the site's page elsewhere."""
    if request.path.startswith(API_PREFIXES):
        return state_unavailable(request)
    context = {"staff_area": _staff_area(request), "retry_after_s": STATE_RETRY_AFTER_S}
    response = HttpResponse(render_to_string("503.html", context), status=503)
    response["Retry-After"] = str(STATE_RETRY_AFTER_S)
    return response
