"""The JSON edge of the REST API: errors as JSON, session authentication, CSRF protection.

Every error body has one shape: ``{"error": {"code", "message", "field"?, ...}}``; ``field``
names the request field at fault (``stake``, ``selections[1].price``).
"""

from __future__ import annotations

import functools
import json
import logging
import re
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
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


api_csrf = _JsonCsrf(lambda request: HttpResponse())


def api_not_found(request: HttpRequest) -> HttpResponse:
    """Any path of the JSON APIs that no route matches (a bet id that is not a number included)."""
    return error_response(ApiError(404, "not_found", f"no API endpoint at {request.path[:200]}"))


SEND_JSON = "the body cannot be read as JSON: send it with Content-Type: application/json"


def _too_large() -> ApiError:
    return ApiError(413, "body_too_large", f"the request body exceeds {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes")


def json_body(request: HttpRequest) -> Any:
    """The request body parsed as JSON; numbers with a fraction become ``Decimal``, never float.

    Refused with a 400: what is not JSON (``NaN`` and ``Infinity`` included), nesting too deep
    for the parser, integers too long to convert, numbers with a fraction or an exponent beyond
    the bounds of ``JSON_NUMBER_MAX_CHARS`` / ``JSON_NUMBER_MAX_EXPONENT``
    (``number_out_of_range``), and values the platform could not store or send on (see
    ``_storable``).
    """
    try:
        body = request.body
    except RequestDataTooBig as exc:
        raise _too_large() from exc
    except RawPostDataException as exc:
        # A multipart form body, already read as a form by the CSRF check.
        raise ApiError(400, "bad_json", SEND_JSON) from exc
    return json_parse(body)


def json_parse(body: bytes) -> Any:
    """A request body parsed as ``json_body`` parses it (the checks included)."""
    if not body:
        raise ApiError(400, "bad_json", "the request body must be a JSON object")
    try:
        parsed = json.loads(body, parse_float=_number, parse_constant=_no_constant)
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


class _OutOfRange:
    """A JSON number too long or of too large an exponent to read: kept in place of its value,
    so that ``_storable`` can name the field that holds it."""

    def __init__(self, text: str) -> None:
        self.text = text


def _number(text: str) -> Decimal | _OutOfRange:
    """A JSON number with a fraction or an exponent, as an exact Decimal. ``1E+99999999999999999999``
    is beyond what Decimal can hold at all, and ``1e400`` beyond what any arithmetic of the
    platform takes (rounding it to the penny fails): both are refused before anything computes."""
    if len(text) > settings.JSON_NUMBER_MAX_CHARS:
        return _OutOfRange(text)
    try:
        value = Decimal(text)
    except InvalidOperation:
        return _OutOfRange(text)
    if value and abs(value.adjusted()) > settings.JSON_NUMBER_MAX_EXPONENT:
        return _OutOfRange(text)
    return value


MIN_INT, MAX_INT = -(2**63), 2**63 - 1


def _storable(value: Any) -> None:
    """Refuse integers outside 64 bits (ids are PostgreSQL bigints; orjson and the Kafka records
    encode 64 bits), numbers ``_number`` could not read, and strings with a lone surrogate
    (``"\\ud800"`` is valid JSON but not Unicode text: it cannot be written as UTF-8). ``field``
    names the first value at fault."""
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
        elif isinstance(item, _OutOfRange):
            raise _out_of_range(item.text, where)


def _out_of_range(text: str, where: str) -> ApiError:
    shown = text if len(text) <= 24 else f"{text[:24]}…"
    message = (
        f"the number {shown} is out of range: a number has at most {settings.JSON_NUMBER_MAX_CHARS} characters"
        f" and an exponent of at most ±{settings.JSON_NUMBER_MAX_EXPONENT} in scientific notation"
    )
    return ApiError(400, "number_out_of_range", message, field=_field(where))


# A positive id as a client writes it: ASCII digits only (int() would also read Arabic-Indic or
# fullwidth digits as 12), no sign, no leading zero, at most 19 digits (a PostgreSQL bigint).
ID_TEXT = re.compile(r"[1-9][0-9]{0,18}", re.ASCII)


def id_from_text(*, text: str) -> int | None:
    """The positive 64-bit integer ``text`` spells in ASCII digits, or None for anything else."""
    if not ID_TEXT.fullmatch(text):
        return None
    value = int(text)
    return value if value <= MAX_INT else None


def query_ids(request: HttpRequest, *, name: str, limit: int) -> list[int]:
    """The comma-separated ids of query parameter ``name`` (at most ``limit`` are read); 400
    naming ``name`` when it is missing or empty or any of them is not a positive id."""
    raw = request.GET.get(name, "")
    if not raw:
        raise ApiError(400, "required", f"{name} is required: positive ids separated by commas", field=name)
    ids = []
    for index, part in enumerate(raw.split(",")[:limit]):
        value = id_from_text(text=part)
        if value is None:
            message = f"each of {name} is a positive whole number in ASCII digits up to {MAX_INT}, separated by commas"
            raise ApiError(400, "invalid", message, field=f"{name}[{index}]")
        ids.append(value)
    return ids


def query_int(request: HttpRequest, *, name: str, default: int, low: int, high: int) -> int:
    """Query parameter ``name`` as a whole number in ASCII digits between ``low`` and ``high``."""
    raw = request.GET.get(name)
    if raw is None:
        return default
    value = id_from_text(text=raw) if len(raw) <= 19 else None
    if value is None or not low <= value <= high:
        raise ApiError(400, "invalid", f"a whole number between {low} and {high}", field=name)
    return value


def _text(text: str, where: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ApiError(
            400, "bad_json", "a string holds a lone surrogate escape (not Unicode text)", field=_field(where)
        ) from exc


def _field(where: str) -> str:
    return where[:200] or "body"


def public_get(view: View) -> View:
    """A public read (no login, no cookie read): GET and HEAD only, any other method a JSON 405."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.method not in ("GET", "HEAD"):
            response = error_response(ApiError(405, "method_not_allowed", "use GET"))
            response["Allow"] = "GET, HEAD"
            return response
        return view(request, *args, **kwargs)

    return wrapper


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
                rejected = api_csrf.process_view(request, view, args, kwargs)
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
