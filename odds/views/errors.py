"""The site's own 403 and 404 pages, in the staff look under the staff areas (trading, ops,
admin) and in the punters' look elsewhere."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

STAFF_PREFIXES = ("/trading/", "/ops/", "/admin/")


def _staff_area(request: HttpRequest) -> bool:
    return request.path.startswith(STAFF_PREFIXES)


def forbidden(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return render(request, "403.html", {"staff_area": _staff_area(request)}, status=403)


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return render(request, "404.html", {"staff_area": _staff_area(request)}, status=404)
