"""The JSON APIs as one django-ninja API: its routers, its URL patterns and its OpenAPI document.

Each endpoint is declared once, in its area's router (``views``: bets and wallet, ``streams``,
``snapshots``, ``ops``: trading and operations, and ``meta`` below), with the bodies it reads
and answers (``odds/api/schemas/``, a module per router). From those declarations django-ninja validates every
request and generates the OpenAPI 3.1 document served at ``GET /api/openapi.json``; the URL
patterns below route to them. Adding an endpoint is one decorated function in its router.

The bet placement's ASGI fast path (``odds.api.placement``) answers ``POST /api/bets`` ahead of
Django with the same request model and the same answers.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any, cast

from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.http.response import HttpResponseBase
from django.urls import URLPattern, path
from django.utils.cache import add_never_cache_headers
from ninja import NinjaAPI, Router, Status
from ninja.openapi.schema import OpenAPISchema
from ninja.operation import Operation

from odds.api import game, ops, play, snapshots, streams, views
from odds.api.http import ANSWERED, JsonParser, JsonRenderer, answer_exception, answers, method_not_allowed
from odds.api.schemas import common
from odds.api.schemas.meta import Health, OpenApiDocument
from odds.core.health import health_public

View = Callable[..., HttpResponseBase]
WRITES = {"POST", "PUT", "PATCH", "DELETE"}


class _Document(OpenAPISchema):
    """The generated document, told two things ninja does not know: a write needs the CSRF header
    besides the session, and HEAD is GET without the body (not an operation of its own)."""

    def methods(self, operations: list[Operation]) -> dict[str, Any]:
        found: dict[str, Any] = super().methods(operations)
        found.pop("head", None)
        return found

    def operation_details(self, operation: Operation) -> dict[str, Any]:
        details: dict[str, Any] = super().operation_details(operation)
        details.setdefault("security", [])  # public: no session needed
        return details

    def operation_security(self, operation: Operation) -> list[dict[str, Any]] | None:
        security = super().operation_security(operation)
        if security is None:
            return None
        names = {name for requirement in security for name in requirement}
        if WRITES & set(operation.methods):
            self.securitySchemes["csrf"] = CSRF_SCHEME
            return [{**{name: [] for name in names}, "csrf": []}]
        return security


CSRF_SCHEME = {
    "type": "apiKey",
    "in": "header",
    "name": "X-CSRFToken",
    "description": "the `csrftoken` cookie's value, on every write",
}


class JsonApi(NinjaAPI):
    def get_openapi_schema(self, *, path_prefix: str | None = None, path_params: Any = None) -> Any:
        return _Document(self, "" if path_prefix is None else path_prefix)

    def get_content_type(self) -> str:
        return "application/json"


api = JsonApi(
    title="Sportsbook JSON API",
    version=str(common.API_VERSION),
    description=(
        "Bets, cash-out, wallet, the stream control API and the staff APIs. Every error is "
        '`{"v": 1, "error": {"code", "message", "field"?}}`; money and prices are decimal strings. '
        "Log in for a session cookie; send the `csrftoken` cookie's value as `X-CSRFToken` on writes. "
        "See docs/protocol.md."
    ),
    servers=[{"url": "/"}],
    openapi_url=None,
    docs_url=None,
    parser=JsonParser(),
    renderer=JsonRenderer(),
)
for _answered in ANSWERED:
    api.add_exception_handler(_answered, cast(Any, answer_exception))

meta = Router(tags=["meta"])


@functools.cache
def openapi_description() -> dict[str, Any]:
    """The OpenAPI 3.1 document of the JSON APIs (built once per process), as JSON has it."""
    document: dict[str, Any] = json.loads(json.dumps(api.get_openapi_schema()))
    return document


@meta.api_operation(
    ["GET", "HEAD"],
    "api/openapi.json",
    summary="This description",
    url_name="openapi",
    **answers({200: (OpenApiDocument, "OpenAPI 3.1.")}, access="public"),
)
def openapi_json(request: HttpRequest) -> HttpResponse:
    """Public, like the API's documentation."""
    return HttpResponse(common.dumps(openapi_description()), content_type="application/json")


# /healthz: public liveness, never cached by a client; the checks behind it run at most every
# HEALTH_PUBLIC_CACHE_S per process. What each found is /healthz/detail's (odds/ops/views.py).
health = Router(tags=["meta"])


@health.get(
    "healthz",
    summary="Whether every component is healthy",
    url_name="healthz",
    **answers(
        {
            200: (Health, "Every component is healthy."),
            503: (Health, "At least one component is not (`failing` names them)."),
        },
        access="public",
    ),
)
def healthz(request: HttpRequest) -> Status[dict[str, Any]]:
    report = health_public()
    return Status(200 if report["ok"] else 503, report)


api.add_router("", meta)
api.add_router("", health)
api.add_router("api/", views.router, tags=["bets"])
api.add_router("api/", play.router)
api.add_router("api/", streams.router)
api.add_router("api/views/", snapshots.router)
api.add_router("trading/api/", ops.trading)
api.add_router("ops/api/", ops.ops)
api.add_router("api/", game.router)
api.add_router("api/", game.public)
api.add_router("trading/api/", game.trading)

# The routers whose answers are a session's or a moment's: never cached. The others are public
# documents (the OpenAPI description) or say themselves how long to keep them (view snapshots).
NEVER_CACHED = {
    views.router,
    play.router,
    streams.router,
    ops.trading,
    ops.ops,
    health,
    game.router,
    game.public,
    game.trading,
}


def _json_edge(view: View, *, private: bool) -> View:
    """A route of the API: another method than its own is a 405 in JSON (with ``Allow``), and a
    ``private`` answer is never cached."""

    def edge(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        response = view(request, *args, **kwargs)
        if isinstance(response, HttpResponseNotAllowed):
            response = method_not_allowed([m.strip() for m in response["Allow"].split(",")])
        if private:
            add_never_cache_headers(response)
        return response

    edge.csrf_exempt = True  # type: ignore[attr-defined]  # Session checks CSRF on writes, in JSON
    return edge


def urlpatterns_under(prefix: str, *, relative: bool = False) -> list[URLPattern]:
    """The API's URL patterns whose route starts with ``prefix`` (``relative``: without it, to be
    included under it), one per path: ninja's view of a path answers each of its methods."""
    found: dict[str, URLPattern] = {}
    for bound in api._get_bound_routers():
        private = bound.template in NEVER_CACHED
        for pattern in bound.urls_paths(bound.prefix):
            route = str(pattern.pattern)
            if route.startswith(prefix) and route not in found:
                callback = _json_edge(pattern.callback, private=private)
                found[route] = path(route[len(prefix) :] if relative else route, callback, name=pattern.name)
    return list(found.values())
