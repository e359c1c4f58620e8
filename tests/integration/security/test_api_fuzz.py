"""Schemathesis against the OpenAPI description (``odds/api/openapi.py``), calling the real Django
application in process (WSGI) on the real PostgreSQL, Redis and Kafka, logged in as a punter (staff
for the staff APIs) with a CSRF token.

For every operation, valid and invalid requests alike: no 5xx (``/healthz`` may answer 503: the
reducers, Celery and the feed do not run here), every answer conforms to the description, invalid
data is refused with a 4xx, and every 4xx is JSON naming an error code and a message. Each request
runs in a savepoint rolled back afterwards and the rate-limit counters are cleared, so examples do
not interfere and a refusal is always the request's own.
"""

from __future__ import annotations

import itertools
import os
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import orjson
import pytest
import schemathesis
from django.conf import settings
from django.contrib.auth.models import User
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections, transaction
from django.http import HttpRequest
from django.middleware.csrf import get_token
from django.test import Client
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from schemathesis.checks import (
    content_type_conformance,
    negative_data_rejection,
    not_a_server_error,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
    unsupported_method,
)
from schemathesis.generation.case import Case

from odds.api.openapi import openapi_description
from odds.services.streams import stream_subscribe
from odds.services.wallet import wallet_deposit
from reducers.subscriptions import spec_from_json
from tests.factories import market_create
from tests.integration.betting.helpers import bet_accepted, selections_of

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

MAX_EXAMPLES = int(os.environ.get("API_FUZZ_EXAMPLES", "30"))
STAFF_TAGS = {"trading", "ops"}

CONFIG = schemathesis.Config.from_dict(
    {
        "generation": {"mode": "all", "max-examples": MAX_EXAMPLES, "with-security-parameters": False},
        # examples (the description's), coverage (boundaries, wrong types, other methods), fuzzing
        "phases": {"coverage": {"enabled": True}, "stateful": {"enabled": False}},
        # A refusal of invalid data may also be 413: a generated list too long for the body limit.
        "checks": {"negative_data_rejection": {"expected-statuses": ["4xx"]}},
    }
)
SCHEMA = schemathesis.openapi.from_dict(orjson.loads(orjson.dumps(openapi_description())), config=CONFIG)
SCHEMA.app = WSGIHandler()


def _code_and_message(ctx: Any, response: Any, case: Case) -> bool | None:
    """Every 4xx is a JSON error body with a code and a message (what a client shows)."""
    if 400 <= response.status_code < 500:
        assert response.headers.get("content-type", [""])[0].startswith("application/json"), response.text[:200]
        error = orjson.loads(response.content).get("error")
        assert isinstance(error, dict), response.text[:200]
        assert isinstance(error.get("code"), str), error
        assert error["code"]
        assert isinstance(error.get("message"), str), error
        assert error["message"].strip()
    return None


CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    negative_data_rejection,
    unsupported_method,
    _code_and_message,
]


@dataclass(frozen=True)
class Login:
    cookies: dict[str, str]
    headers: dict[str, str]
    session_key: str
    user_id: int


def _login(user) -> Login:
    client = Client()
    client.force_login(user)
    request = HttpRequest()
    masked = get_token(request)
    session_key = client.cookies[settings.SESSION_COOKIE_NAME].value
    return Login(
        cookies={settings.SESSION_COOKIE_NAME: session_key, settings.CSRF_COOKIE_NAME: request.META["CSRF_COOKIE"]},
        headers={"X-CSRFToken": masked},
        session_key=session_key,
        user_id=user.pk,
    )


def _user(*, staff: bool = False) -> User:
    """A user without a password (hashing one costs half a second) and 100.00 in the wallet."""
    user = User.objects.create(username=f"fuzz-{uuid.uuid4().hex[:12]}", is_staff=staff)
    wallet_deposit(user=user, amount=Decimal("100.00"), reference=f"fuzz-{user.pk}")
    return user


@dataclass(frozen=True)
class World:
    punter: Login
    staff: Login
    bet_id: int
    market_id: int
    channel_id: str
    selections: tuple[tuple[int, Decimal], ...]


@pytest.fixture
def world(kafka_topics, redis_client) -> Iterator[World]:
    """A punter with an open bet and a channel of their own, and a staff member; the application
    serves in this test's transaction (Django's test client does the same)."""
    market = market_create()
    others = [market_create() for _ in range(2)]
    punter_user = _user()
    bet = bet_accepted(punter_user, selections_of(market)[0], stake="5.00")
    punter = _login(punter_user)
    channel = stream_subscribe(
        user_id=punter.user_id,
        session_key=punter.session_key,
        spec=spec_from_json({"view": "markets", "markets": [market.id]}),
    )
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield World(
            punter=punter,
            staff=_login(_user(staff=True)),
            bet_id=bet.id,
            market_id=market.id,
            channel_id=channel.channel_id,
            selections=tuple((s.id, s.price) for m in (market, *others) for s in selections_of(m)),
        )
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


def _checks_for(case: Case, status: int) -> list[Any]:
    """``/healthz`` is a plain view: 503 while the reducers, Celery and the feed do not run (here),
    and it answers any method."""
    if case.operation.path != "/healthz":
        return CHECKS
    return [c for c in CHECKS if c is not unsupported_method and (status != 503 or c is not not_a_server_error)]


_turn = itertools.count()


def _aim_at_real_resources(case: Case, world: World) -> None:
    """Every other valid case names the punter's own bet, channel, a real market or real selections
    (at their prices, every fourth case), so the paths past the 404 and ``unknown_selection`` are
    fuzzed too: placement, price checks, rejections, cash-out quotes."""
    turn = next(_turn)
    if turn % 2 or case.meta is None or not case.meta.generation.mode.is_positive:
        return
    params = case.path_parameters or {}
    real = {"bet_id": world.bet_id, "channel_id": world.channel_id, "market_id": world.market_id}
    for name in params.keys() & real.keys():
        params[name] = real[name]
    legs = case.body.get("selections") if isinstance(case.body, dict) else None
    if case.operation.label == "POST /api/bets" and isinstance(legs, list):
        for leg, (selection_id, price) in zip(legs, world.selections[turn % 3 :: 3], strict=False):
            if isinstance(leg, dict):
                leg["selection_id"] = selection_id
                if turn % 4 == 0:
                    leg["price"] = str(price)


def _rate_limits_clear(redis_client) -> None:
    for key in redis_client.scan_iter(match=f"{os.environ['SPORTSBOOK_NAMESPACE']}:rl:*", count=1000):
        redis_client.delete(key)


CALLS: Counter[tuple[str, int]] = Counter()


@pytest.fixture(scope="module", autouse=True)
def _figures() -> Iterator[None]:
    """Print what was tried (``-s`` shows it): requests per operation and status, time per request."""
    started = time.perf_counter()
    yield
    total = sum(CALLS.values())
    if total:
        elapsed = time.perf_counter() - started
        print(f"\napi fuzz: {total} requests in {elapsed:.1f} s ({1000 * elapsed / total:.0f} ms each)")
        for (label, status), count in sorted(CALLS.items()):
            print(f"  {label:55} {status} x{count}")


@SCHEMA.parametrize()
@hypothesis_settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.filter_too_much],
)
def test_api_answers_every_request_within_its_description(case: Case, world: World, redis_client):
    login = world.staff if STAFF_TAGS & set(case.operation.tags or ()) else world.punter
    _aim_at_real_resources(case, world)
    _rate_limits_clear(redis_client)
    with transaction.atomic():
        response = case.call(cookies=login.cookies, headers=login.headers)
        case.validate_response(response, checks=_checks_for(case, response.status_code))
        transaction.set_rollback(True)
    CALLS[(case.operation.label, response.status_code)] += 1
