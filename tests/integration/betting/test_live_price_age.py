"""A live price is used by a bet or a cash-out only while it is current: applied (or decided by
a trader) within ``LIVE_PRICE_MAX_AGE_S``, or vouched for by a sign of life of the price pipe
since. Older, its market counts as suspended: a stalled pipe never prices a bet at frozen odds."""

from __future__ import annotations

import time

import pytest

from odds.betting.models import Bet
from reducers.queries import PRICE_QUERIES
from store import keys
from tests.factories import live_state_write, market_create
from tests.integration.betting.helpers import bet_accepted, bet_body, error_of, selections_of

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture
def max_age(settings, redis_client):
    settings.LIVE_PRICE_MAX_AGE_S = 5
    # No sign of life from the price pipe unless a test gives one.
    redis_client.hdel(keys.reducer_seen(), *PRICE_QUERIES)
    return settings


def test_a_bet_on_a_live_price_older_than_the_maximum_is_refused_as_suspended(api, max_age, redis_client):
    market = market_create(prices=("2.10", "3.40", "3.50"))
    live_state_write(redis_client, market, prices=("2.10", "3.40", "3.50"), age_s=20)
    home = selections_of(market)[0]
    response = api.post_json("/api/bets", bet_body((home.id, "2.10")))
    assert error_of(response) == (409, "market_suspended", "selections")
    assert "not current" in response.json()["error"]["message"]


def test_a_sign_of_life_of_the_price_pipe_keeps_a_quiet_markets_price_current(api, max_age, redis_client):
    market = market_create(prices=("2.10", "3.40", "3.50"))
    live_state_write(redis_client, market, prices=("2.10", "3.40", "3.50"), age_s=20)
    redis_client.hset(keys.reducer_seen(), PRICE_QUERIES[0], int(time.time() * 1000))
    home = selections_of(market)[0]
    response = api.post_json("/api/bets", bet_body((home.id, "2.10")))
    assert response.status_code == 201, response.json()


def test_a_fresh_live_price_is_taken(api, max_age, redis_client):
    market = market_create(prices=("2.10", "3.40", "3.50"))
    live_state_write(redis_client, market, prices=("2.20", "3.40", "3.50"), age_s=1)
    home = selections_of(market)[0]
    response = api.post_json("/api/bets", bet_body((home.id, "2.20")))
    assert (response.status_code, response.json()["bet"]["legs"][0]["price"]) == (201, "2.20")


def test_no_cash_out_is_offered_on_a_live_price_older_than_the_maximum(api, punter, max_age, redis_client):
    market = market_create(prices=("2.10", "3.40", "3.50"))
    live_state_write(redis_client, market, prices=("2.10", "3.40", "3.50"))
    home = selections_of(market)[0]
    bet = bet_accepted(punter, home)
    assert api.get("/api/bets").json()["bets"][0]["cash_out"]["available"] is True
    live_state_write(redis_client, market, prices=("2.10", "3.40", "3.50"), age_s=20)
    assert api.get("/api/bets").json()["bets"][0]["cash_out"] == {"available": False, "quote": None}
    refused = api.post_json(f"/api/bets/{bet.id}/cash-out", {"v": 1, "quote": "9.50"})
    assert error_of(refused) == (409, "cash_out_unavailable", "quote")
    assert Bet.objects.get(id=bet.id).status == Bet.Status.ACCEPTED
