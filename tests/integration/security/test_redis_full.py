"""Redis at its memory limit (it evicts nothing, every write fails) answers 503 with
``Retry-After`` on every path that must write to it: a bet on either HTTP path, a login (whose
attempt could not be counted), never a bare 500 and never an attempt let through uncounted.

The Redis is one of the test's own, started by the operators' script with a 4 MB limit and held
past it."""

from __future__ import annotations

import json

import pytest
import redis
from django.test import Client

from odds.betting.models import Bet
from odds.core.connections import redis_shared
from tests.conftest import uvicorn_serving
from tests.factories import market_create, user_create
from tests.integration.betting.helpers import bet_body, selections_of
from tests.integration.betting.test_placement_endpoint import post, session_of
from tests.integration.streaming.test_edge_limits import _past_the_limit, small_redis

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

__all__ = ["small_redis"]  # the fixture, used by name


@pytest.fixture
def full_redis(small_redis, settings):
    """Every use of ``REDIS_URL`` by this process goes to a Redis past its memory limit."""
    _past_the_limit(redis.Redis.from_url(small_redis))
    original = settings.REDIS_URL
    settings.REDIS_URL = small_redis
    redis_shared.cache_clear()
    yield small_redis
    # The shared client made again from the real address, never the small Redis (stopped after).
    settings.REDIS_URL = original
    redis_shared.cache_clear()


def test_a_bet_is_a_503_with_retry_after_and_records_nothing(services, full_redis):
    punter = user_create(balance="100.00")
    home = selections_of(market_create())[0]
    client = Client()
    client.force_login(punter)
    response = client.post("/api/bets", data=json.dumps(bet_body((home.id, "2.10"))), content_type="application/json")
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "state_unavailable"
    assert int(response["Retry-After"]) >= 1
    assert not Bet.objects.filter(user=punter).exists()


def test_a_login_is_a_503_with_retry_after_without_checking_the_password(services, full_redis):
    member = user_create()
    member.set_password("correct horse battery staple")
    member.save()
    response = Client().post("/login/", {"username": member.username, "password": "correct horse battery staple"})
    assert response.status_code == 503
    assert int(response["Retry-After"]) >= 1
    assert "paused" in response.content.decode()


@pytest.mark.django_db(transaction=True)
def test_a_bet_through_the_asgi_server_is_a_503_with_retry_after(services, small_redis, tmp_path):
    punter = user_create(balance="100.00")
    home = selections_of(market_create())[0]
    session = session_of(punter)
    _past_the_limit(redis.Redis.from_url(small_redis))
    with uvicorn_serving(tmp_path, REDIS_URL=small_redis) as url:
        status, headers, body = post(url, bet_body((home.id, "2.10")), session=session)
    assert (status, body["error"]["code"]) == (503, "state_unavailable")
    assert int(headers["retry-after"]) >= 1
    assert not Bet.objects.filter(user=punter).exists()
