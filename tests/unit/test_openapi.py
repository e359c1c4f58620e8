"""The OpenAPI description names every JSON route of the URL configuration, with exactly the methods
the route answers, so it cannot silently go stale when a route is added or changed."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import orjson
import pytest
from django.test import Client, RequestFactory
from django.urls import URLPattern, URLResolver, get_resolver

from odds.api.api import healthz, openapi_description

METHODS = ("get", "put", "post", "delete", "patch")
# Routes to odds/api/ views that are not operations: the JSON 404 for any other path of the APIs.
NOT_OPERATIONS = {"api-not-found"}


def _openapi_path(route: str) -> str:
    """``api/bets/<int:bet_id>/cash-out`` → ``/api/bets/{bet_id}/cash-out``."""
    return "/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route)


def _routes(
    patterns: list[URLPattern | URLResolver], prefix: str = "", namespace: str = ""
) -> Iterator[tuple[str, str, Callable[..., Any]]]:
    """(OpenAPI path, route name, view) for every route, includes flattened."""
    for entry in patterns:
        route = str(entry.pattern)
        if isinstance(entry, URLResolver):
            inner = f"{namespace}{entry.namespace}:" if entry.namespace else namespace
            yield from _routes(entry.url_patterns, prefix + route, inner)
        else:
            path = _openapi_path(prefix + route)
            yield path, f"{namespace}{entry.name}", entry.callback


def _json_routes() -> dict[str, tuple[str, Callable[..., Any]]]:
    found = {}
    for path, name, view in _routes(get_resolver().url_patterns):
        if name in NOT_OPERATIONS:
            continue
        if view.__module__.startswith("odds.api.") or view is healthz:
            found[path] = (name, view)
    return found


def _allowed(view: Callable[..., Any], path: str) -> set[str]:
    """The methods a view answers, from the ``Allow`` header of its 405 to an OPTIONS request."""
    kwargs = dict.fromkeys(re.findall(r"{(\w+)}", path), "1")
    response = view(RequestFactory().options(path.format(**kwargs)), **kwargs)
    assert response.status_code == 405, f"{path} answered OPTIONS with {response.status_code}"
    return {m.strip().lower() for m in response["Allow"].split(",")} - {"head"}


def test_every_json_route_is_described():
    described = set(openapi_description()["paths"])
    routes = set(_json_routes())
    assert routes - described == set(), "routes missing from the OpenAPI document"
    assert described - routes == set(), "described paths that no route serves"


def test_every_route_of_odds_api_urls_is_described():
    from odds.api import urls

    described = set(openapi_description()["paths"])
    for entry in urls.urlpatterns:
        assert _openapi_path(f"api/{entry.pattern}") in described, entry.name


@pytest.mark.parametrize("path", sorted(set(_json_routes()) - {"/healthz"}))
def test_described_methods_are_the_methods_the_route_answers(path):
    name, view = _json_routes()[path]
    described = {m for m in openapi_description()["paths"][path] if m in METHODS}
    assert described == _allowed(view, path), name


def test_every_operation_documents_its_errors_as_json():
    for path, item in openapi_description()["paths"].items():
        for method, operation in item.items():
            for status, response in operation["responses"].items():
                assert "application/json" in response["content"], (method, path, status)
            if operation["security"]:
                assert {"401", "503"} <= set(operation["responses"]), (method, path)


def test_the_description_is_served_at_api_openapi_json():
    response = Client().get("/api/openapi.json")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert orjson.loads(response.content) == orjson.loads(orjson.dumps(openapi_description()))


def test_the_description_loads_as_openapi_3_1_with_every_reference_resolved():
    import schemathesis
    from schemathesis.core.result import Ok

    schema = schemathesis.openapi.from_dict(orjson.loads(orjson.dumps(openapi_description())))
    operations = list(schema.get_all_operations())
    assert all(isinstance(result, Ok) for result in operations), [r for r in operations if not isinstance(r, Ok)]
    assert len(operations) == sum(
        len([m for m in item if m in METHODS]) for item in schema.raw_schema["paths"].values()
    )


def test_the_cash_out_tolerance_is_described_as_the_validator_reads_it():
    from odds.api.schemas.views import CashOutRequest

    accept = openapi_description()["components"]["schemas"]["CashOutRequest"]["properties"]["accept"]
    read = [CashOutRequest.model_validate({"quote": "1.00", "accept": value}).accept for value in accept["enum"]]
    assert (read, CashOutRequest.model_validate({"quote": "1.00"}).accept) == (accept["enum"], accept["default"])
