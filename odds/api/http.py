"""The JSON edge of the REST API: errors as JSON, session authentication, CSRF protection.

Every error body has one shape: ``{"error": {"code", "message", "field"?, ...}}``; ``field``
names the request field at fault (``stake``, ``selections[1].price``).
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse
from django.middleware.csrf import CsrfViewMiddleware
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt

from odds.api.schemas import ApiError, dumps

View = Callable[..., HttpResponse]

log = logging.getLogger(__name__)


def error_response(error: ApiError) -> HttpResponse:
    body: dict[str, Any] = {"code": error.code, "message": error.message}
    if error.field:
        body["field"] = error.field
    body.update(error.extra)
    payload: dict[str, Any] = {"v": 1, "error": body}
    payload.update(error.attachments)
    return json_response(payload, status=error.status)


def json_response(payload: dict[str, Any], *, status: int = 200) -> HttpResponse:
    return HttpResponse(dumps(payload), status=status, content_type="application/json")


class _JsonCsrf(CsrfViewMiddleware):
    """Django's CSRF check, answering a failure in JSON instead of the HTML failure page."""

    def _reject(self, request: HttpRequest, reason: str) -> HttpResponse:
        return error_response(ApiError(403, "csrf_failed", f"CSRF verification failed: {reason}"))


_csrf = _JsonCsrf(lambda request: HttpResponse())


def json_body(request: HttpRequest) -> Any:
    """The request body parsed as JSON; numbers with a fraction become ``Decimal``, never float."""
    try:
        body = request.body
    except RequestDataTooBig as exc:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        raise ApiError(413, "body_too_large", f"the request body exceeds {limit} bytes") from exc
    if not body:
        raise ApiError(400, "bad_json", "the request body must be a JSON object")
    try:
        return json.loads(body, parse_float=Decimal)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ApiError(400, "bad_json", f"the request body is not valid JSON: {exc}") from exc


def api_view(*, methods: tuple[str, ...]) -> Callable[[View], View]:
    """Wrap a view: allowed methods, logged-in user, CSRF on writes, ``ApiError`` → JSON.

    A database that cannot be reached (the session lookup included) is a 503 in JSON: the
    transaction of the request did not commit, so nothing it would have written exists.
    """

    def decorate(view: View) -> View:
        @functools.wraps(view)
        def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            try:
                return checked(request, *args, **kwargs)
            except (OperationalError, InterfaceError):
                log.exception("database unavailable during %s %s", request.method, request.path)
                response = error_response(
                    ApiError(503, "database_unavailable", "the service is temporarily unavailable; try again")
                )
                response["Retry-After"] = "5"
                return response

        def checked(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if request.method not in methods:
                response = error_response(ApiError(405, "method_not_allowed", f"use {' or '.join(methods)}"))
                response["Allow"] = ", ".join(methods)
                return response
            if not request.user.is_authenticated:
                response = error_response(ApiError(401, "not_authenticated", "log in first"))
                response["WWW-Authenticate"] = 'Session realm="sportsbook"'
                return response
            rejected = _csrf.process_view(request, view, args, kwargs)
            if rejected is not None:
                return rejected
            try:
                return view(request, *args, **kwargs)
            except ApiError as error:
                return error_response(error)

        return csrf_exempt(never_cache(wrapper))

    return decorate
