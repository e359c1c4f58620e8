"""The JSON edge of the REST API: bodies read as JSON (numbers as Decimal, never float), every
refusal answered in one error shape, session authentication and CSRF protection.

Every error body has one shape: ``{"v": 1, "error": {"code", "message", "field"?, ...}}``;
``field`` names the request field at fault (``stake``, ``selections[1].price``). django-ninja
runs the endpoints (``odds/api/api.py``); this module gives it its parser, renderer, session
check and the handlers that turn every refusal, its validation errors included, into that shape.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from decimal import Decimal, InvalidOperation
from typing import Any, TypeVar

from django.conf import settings
from django.core.exceptions import BadRequest, RequestDataTooBig, SuspiciousOperation
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, RawPostDataException
from django.http.multipartparser import MultiPartParserError
from django.middleware.csrf import CsrfViewMiddleware
from ninja.errors import AuthenticationError, HttpError, ValidationError
from ninja.parser import Parser
from ninja.renderers import BaseRenderer
from ninja.security import APIKeyCookie
from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError
from redis import RedisError

from odds.api.schemas.common import (
    ApiError,
    BodyRefused,
    CsrfFailed,
    DatabaseUnavailable,
    NotAuthenticated,
    StaffOnly,
    StaffRead,
    TooLarge,
    dumps,
)
from odds.core.text import MAX_INT, MIN_INT, id_from_text

log = logging.getLogger(__name__)
M = TypeVar("M", bound=BaseModel)
# Seconds a client waits before trying again when Redis refused or could not be reached.
STATE_RETRY_AFTER_S = 5


def error_response(error: ApiError) -> HttpResponse:
    """The error as JSON; one that says when to try again (``retry_after_s``) says it in
    ``Retry-After`` too."""
    body: dict[str, Any] = {"code": error.code, "message": error.message}
    if error.field:
        body["field"] = error.field
    body.update(error.extra)
    payload: dict[str, Any] = {"v": 1, "error": body}
    payload.update(error.attachments)
    response = json_response(payload, status=error.status)
    retry_after = error.extra.get("retry_after_s")
    if isinstance(retry_after, int):
        response["Retry-After"] = str(retry_after)
    return response


def json_response(payload: dict[str, Any], *, status: int = 200) -> HttpResponse:
    return HttpResponse(dumps(payload), status=status, content_type="application/json")


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


def _text(text: str, where: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ApiError(
            400, "bad_json", "a string holds a lone surrogate escape (not Unicode text)", field=_field(where)
        ) from exc


def _field(where: str) -> str:
    return where[:200] or "body"


class JsonParser(Parser):
    """Request bodies as ``json_parse`` reads them (exact decimals, the checks included)."""

    def parse_body(self, request: HttpRequest) -> Any:
        return json_body(request)


def json_only(request: HttpRequest) -> None:
    """A ``Session`` check for an endpoint whose body is optional and read only when sent as JSON:
    a form with fields is refused, any other body is taken as none."""
    if request.content_type == "application/json":
        return
    if request.POST:
        raise ApiError(400, "bad_json", "send the body as JSON")
    # The form (maybe read by the CSRF check) is empty: the endpoint sees no body at all.
    request._body = b""


class JsonRenderer(BaseRenderer):
    """Answers as the error bodies are written: orjson, decimals as strings."""

    media_type = "application/json"

    def render(self, request: HttpRequest, data: Any, *, response_status: int) -> bytes:
        return dumps(data)


def _csrf_protected(request: HttpRequest) -> HttpResponse:
    """What the CSRF check is told it guards: a view that is not CSRF-exempt."""
    raise NotImplementedError


class Session(APIKeyCookie):
    """Who may call an endpoint: the logged-in user of the Django session (else 401), CSRF on
    writes (403 ``csrf_failed``), staff only when ``staff`` (403 ``staff_only``), then ``check``
    (a rate limit, answered before the body is read). Raises ``ApiError`` for each refusal."""

    param_name = settings.SESSION_COOKIE_NAME
    openapi_description = "Django session"

    def __init__(self, *, staff: bool = False, check: Callable[[HttpRequest], None] | None = None) -> None:
        super().__init__(csrf=False)
        self.staff = staff
        self.check = check

    def __call__(self, request: HttpRequest) -> Any:
        if not request.user.is_authenticated:
            return None  # ninja answers AuthenticationError: see ``not_authenticated``
        csrf_check(request)
        if self.staff and not request.user.is_staff:
            raise ApiError(403, "staff_only", "this API is for staff")
        if self.check is not None:
            self.check(request)
        return request.user

    def _get_key(self, request: HttpRequest) -> str | None:
        return request.COOKIES.get(self.param_name)

    def authenticate(self, request: HttpRequest, key: str | None) -> Any:
        return self(request)


class _JsonCsrf(CsrfViewMiddleware):
    """Django's CSRF check; its refusal's reason is kept for the JSON error."""

    def _reject(self, request: HttpRequest, reason: str) -> HttpResponse:
        raise ApiError(403, "csrf_failed", f"CSRF verification failed: {reason}")


_csrf = _JsonCsrf(lambda request: HttpResponse())


def csrf_check(request: HttpRequest) -> None:
    """Django's CSRF check of a write (``ApiError`` 403 ``csrf_failed``). It reads a form body for
    its token field: a body sent as a form that cannot be parsed is refused here, in JSON, not by
    Django's HTML 400 page."""
    try:
        _csrf.process_view(request, _csrf_protected, (), {})
    except RequestDataTooBig as exc:
        raise _too_large() from exc
    except (MultiPartParserError, BadRequest, SuspiciousOperation) as exc:
        raise ApiError(400, "bad_json", f"{SEND_JSON} ({exc})") from exc


# Error types of the API's own validators (``PydanticCustomError``) that are answered as codes.
OWN_CODES = frozenset({"invalid", "required", "bad_json", "bad_since", "number_out_of_range"})


def validation_error(errors: list[dict[str, Any]]) -> ApiError:
    """The first of ninja's validation errors (of a path, a query or the body) as the API's 400."""
    error = errors[0]
    source, *where = error["loc"]
    if source == "body":
        where = where[1:]  # the name of the endpoint's body parameter
    return _refused(error, tuple(where), body=source == "body")


def _refused(error: Any, where: tuple[Any, ...], *, body: bool) -> ApiError:
    """A validation error as the API's 400: ``field`` is where it is (``selections[1].price``),
    ``code`` ``required`` for a missing field, the validator's own code where it gave one (see
    ``OWN_CODES``), else ``invalid``."""
    kind = error["type"]
    if body and not where and kind == "missing":
        return ApiError(400, "bad_json", "the request body must be a JSON object")
    field = _field("".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in where).lstrip("."))
    if kind == "missing":
        return ApiError(400, "required", "is required", field=field)
    return ApiError(400, kind if kind in OWN_CODES else "invalid", str(error["msg"]), field=field)


def body_read(model: type[M], body: bytes) -> M:
    """A request body parsed and validated as ninja does for an endpoint that declares ``model``,
    refused with the same errors (for the ASGI fast path, which runs ahead of ninja)."""
    try:
        return model.model_validate(json_parse(body))
    except PydanticValidationError as exc:
        error = exc.errors()[0]
        raise _refused(error, error["loc"], body=True) from exc


def not_authenticated() -> HttpResponse:
    response = error_response(ApiError(401, "not_authenticated", "log in first"))
    response["WWW-Authenticate"] = 'Session realm="sportsbook"'
    return response


def database_unavailable(request: HttpRequest) -> HttpResponse:
    """The database cannot be reached (the session lookup included): the request's transaction
    did not commit, so nothing it would have written exists."""
    log.exception("database unavailable during %s %s", request.method, request.path)
    response = error_response(
        ApiError(503, "database_unavailable", "the service is temporarily unavailable; try again")
    )
    response["Retry-After"] = "5"
    return response


def state_unavailable(request: HttpRequest) -> HttpResponse:
    """Redis refused a write (at its memory limit: it evicts nothing) or cannot be reached:
    nothing the request would have counted or written was."""
    log.warning("Redis refused or unreachable during %s %s", request.method, request.path, exc_info=True)
    response = error_response(ApiError(503, "state_unavailable", "the service cannot store state; try again"))
    response["Retry-After"] = str(STATE_RETRY_AFTER_S)
    return response


def answer_exception(request: HttpRequest, exc: Exception) -> HttpResponse:
    """Every exception an endpoint, its session check or its body validation raises that the
    API answers (anything else is a server error)."""
    if isinstance(exc, ApiError):
        return error_response(exc)
    if isinstance(exc, AuthenticationError):
        return not_authenticated()
    if isinstance(exc, ValidationError):
        return error_response(validation_error(exc.errors))
    if isinstance(exc, HttpError):
        if isinstance(exc.__cause__, ApiError):
            return error_response(exc.__cause__)  # the parser's refusal, wrapped by ninja
        return error_response(ApiError(exc.status_code, "bad_json", exc.message))  # ninja's own: the body
    if isinstance(exc, RequestDataTooBig):
        return error_response(_too_large())
    if isinstance(exc, RawPostDataException):
        # A form body, already read as a form by the CSRF check.
        return error_response(ApiError(400, "bad_json", SEND_JSON))
    if isinstance(exc, OperationalError | InterfaceError):
        return database_unavailable(request)
    if isinstance(exc, RedisError):
        return state_unavailable(request)
    raise exc


ANSWERED: tuple[type[Exception], ...] = (
    ApiError,
    HttpError,
    ValidationError,
    RequestDataTooBig,
    RawPostDataException,
    OperationalError,
    InterfaceError,
    RedisError,
)


def method_not_allowed(allowed: list[str]) -> HttpResponse:
    methods = sorted(allowed, key=["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"].index)
    response = error_response(ApiError(405, "method_not_allowed", f"use {' or '.join(methods)}"))
    response["Allow"] = ", ".join(methods)
    return response


Answer = tuple[Any, str] | tuple[Any, str, tuple[str, ...]]


def answers(
    ok: Mapping[int, Answer],
    refused: Mapping[int, Answer] | None = None,
    *,
    access: str = "punter",
    body: bool = False,
    examples: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """An operation's answers for ninja (``response=``) and their descriptions for the OpenAPI
    document: ``ok`` and ``refused`` map a status to (body model, description[, header names]).

    ``access`` adds what every endpoint of its kind may answer: ``punter`` and ``staff`` reads
    401 and 503 (and 403 ``staff_only`` for staff), ``write`` and ``staff_write`` also 403
    ``csrf_failed``; ``body`` adds 400 for a body that is not JSON or a field that is invalid,
    and 413. An entry of ``refused`` replaces the default of its status. ``examples``: request
    bodies by name, shown in the document (and tried by the API fuzzing)."""
    common: dict[int, Answer] = {}
    if access != "public":
        common[401] = (NotAuthenticated, "Not logged in.", ("WWW-Authenticate",))
        common[503] = (
            DatabaseUnavailable,
            "The database cannot be reached (retry after `Retry-After` seconds); nothing was written.",
            ("Retry-After",),
        )
    forbidden = {
        "write": (CsrfFailed, "Refused: the CSRF token is missing or wrong."),
        "staff": (StaffRead, "Refused: the user is not staff."),
        "staff_write": (StaffOnly, "Refused: the CSRF token is missing or wrong or the user is not staff."),
    }
    if access in forbidden:
        common[403] = forbidden[access]
    if body:
        common[400] = (BodyRefused, "The body is not JSON or a field is invalid (`field` names it).")
        common[413] = (TooLarge, "The body is larger than `DATA_UPLOAD_MAX_MEMORY_SIZE`.")
    every = {**common, **ok, **(refused or {})}
    described: dict[int, Any] = {}
    for status, (_model, description, *headers) in every.items():
        described[status] = {"description": description}
        if headers:
            described[status]["headers"] = {name: {"schema": {"type": "string"}} for name in headers[0]}
    extra: dict[str, Any] = {"responses": described}
    if examples:
        values = {name: {"value": value} for name, value in examples.items()}
        extra["requestBody"] = {"content": {"application/json": {"examples": values}}}
    return {"response": {status: model for status, (model, *_) in every.items()}, "openapi_extra": extra}
