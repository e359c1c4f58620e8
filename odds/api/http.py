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
from django.core.exceptions import BadRequest, RequestDataTooBig, SuspiciousOperation
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, RawPostDataException
from django.http.multipartparser import MultiPartParserError
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


def api_not_found(request: HttpRequest) -> HttpResponse:
    """Any path of the JSON APIs that no route matches (a bet id that is not a number included)."""
    return error_response(ApiError(404, "not_found", f"no API endpoint at {request.path[:200]}"))


SEND_JSON = "the body cannot be read as JSON: send it with Content-Type: application/json"


def _too_large() -> ApiError:
    return ApiError(413, "body_too_large", f"the request body exceeds {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes")


def json_body(request: HttpRequest) -> Any:
    """The request body parsed as JSON; numbers with a fraction become ``Decimal``, never float.

    Refused with a 400: what is not JSON (``NaN`` and ``Infinity`` included), nesting too deep
    for the parser, integers too long to convert, and values the platform could not store or
    send on (see ``_storable``).
    """
    try:
        body = request.body
    except RequestDataTooBig as exc:
        raise _too_large() from exc
    except RawPostDataException as exc:
        # A multipart form body, already read as a form by the CSRF check.
        raise ApiError(400, "bad_json", SEND_JSON) from exc
    if not body:
        raise ApiError(400, "bad_json", "the request body must be a JSON object")
    try:
        parsed = json.loads(body, parse_float=Decimal, parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError) as exc:
        # ValueError beyond JSONDecodeError: NaN or Infinity, or an integer of more than 4300
        # digits (Python refuses to convert those).
        raise ApiError(400, "bad_json", f"the request body is not valid JSON: {exc}") from exc
    except RecursionError as exc:
        raise ApiError(400, "bad_json", "the request body is nested too deeply") from exc
    _storable(parsed)
    return parsed


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


MIN_INT, MAX_INT = -(2**63), 2**63 - 1


def _storable(value: Any) -> None:
    """Refuse integers outside 64 bits (ids are PostgreSQL bigints; orjson and the Kafka records
    encode 64 bits) and strings with a lone surrogate (``"\\ud800"`` is valid JSON but not
    Unicode text: it cannot be written as UTF-8). ``field`` names the first value at fault."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, where = stack.pop()
        if isinstance(item, dict):
            for key, inner in item.items():
                _text(key, where)
                stack.append((inner, f"{where}.{key}" if where else key))
        elif isinstance(item, list):
            stack.extend((inner, f"{where}[{index}]") for index, inner in enumerate(item))
        elif isinstance(item, str):
            _text(item, where)
        elif isinstance(item, int) and not isinstance(item, bool) and not MIN_INT <= item <= MAX_INT:
            raise ApiError(400, "invalid", f"integers must be within {MIN_INT}..{MAX_INT}", field=_field(where))


def _text(text: str, where: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ApiError(
            400, "bad_json", "a string holds a lone surrogate escape (not Unicode text)", field=_field(where)
        ) from exc


def _field(where: str) -> str:
    return where[:200] or "body"


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
            try:
                # The CSRF check reads a form body for its token field: a body sent as a form that
                # cannot be parsed is refused here, in JSON, not by Django's HTML 400 page.
                rejected = _csrf.process_view(request, view, args, kwargs)
            except RequestDataTooBig:
                return error_response(_too_large())
            except (MultiPartParserError, BadRequest, SuspiciousOperation) as exc:
                return error_response(ApiError(400, "bad_json", f"{SEND_JSON} ({exc})"))
            if rejected is not None:
                return rejected
            try:
                return view(request, *args, **kwargs)
            except ApiError as error:
                return error_response(error)

        return csrf_exempt(never_cache(wrapper))

    return decorate
