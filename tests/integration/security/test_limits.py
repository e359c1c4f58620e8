"""Rate limits (subscribe 30 a minute, bets 20 every 10 s per punter) and the body size limit:
each refusal is a 4xx in JSON with a message, and a refused bet moves no money."""

from __future__ import annotations

import json
import uuid
from decimal import Decimal

import pytest
from django.conf import settings

from odds.betting.models import Bet, Wallet
from tests.factories import market_create
from tests.integration.betting.helpers import bet_body, selections_of
from tests.integration.security.conftest import logged_in

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def test_bets_above_the_rate_limit_get_a_429_in_json_and_move_no_money(punter, redis_client):
    home = selections_of(market_create())[0]
    client = logged_in(punter)
    # Attempts count whether or not they are valid; cheap ones fill the window quickly (the
    # window starts with the punter's first attempt).
    for _ in range(settings.BET_PLACE_LIMIT):
        client.post("/api/bets", data="{}", content_type="application/json")
    body = bet_body((home.id, str(home.price)), stake="0.10")
    response = client.post("/api/bets", data=json.dumps(body), content_type="application/json")
    assert response.status_code == 429
    error = response.json()["error"]
    assert error["code"] == "rate_limited"
    assert "20 bets every 10 seconds" in error["message"]
    assert error["retry_after_s"] >= 1
    assert not Bet.objects.filter(user=punter).exists()
    assert Wallet.objects.get(user=punter).balance == Decimal("100.00")


def test_bet_rate_limit_is_per_punter(punter, redis_client):
    from tests.factories import user_create

    home = selections_of(market_create())[0]
    first, second = logged_in(punter), logged_in(user_create(balance="10.00"))
    for _ in range(settings.BET_PLACE_LIMIT + 1):
        first.post("/api/bets", data="{}", content_type="application/json")
    body = bet_body((home.id, str(home.price)), stake="1.00")
    assert second.post("/api/bets", data=json.dumps(body), content_type="application/json").status_code == 201


def test_subscriptions_above_the_rate_limit_get_a_429_in_json(punter, kafka_topics, redis_client):
    client = logged_in(punter)
    codes = [
        client.post("/api/streams", {"view": "markets", "markets": [1]}, content_type="application/json").status_code
        for _ in range(settings.STREAM_SUBSCRIBE_LIMIT + 2)
    ]
    assert codes.count(429) >= 1
    assert set(codes) <= {201, 429}
    response = client.post("/api/streams", {"view": "markets", "markets": [1]}, content_type="application/json")
    assert response.status_code == 429
    assert response.json()["error"]["code"] == "rate_limited"


def test_body_above_the_limit_gets_a_413_in_json(punter):
    body = json.dumps({"pad": "x" * settings.DATA_UPLOAD_MAX_MEMORY_SIZE})
    response = logged_in(punter).post("/api/bets", data=body, content_type="application/json")
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "body_too_large"
    assert Bet.objects.filter(user=punter).count() == 0


def test_body_above_the_limit_on_a_form_is_refused(staff):
    response = logged_in(staff).post(
        "/admin/catalogue/market/add/", data={"name": "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1)}
    )
    assert response.status_code == 400


def test_a_retried_idempotency_key_places_one_bet(punter):
    home = selections_of(market_create())[0]
    client = logged_in(punter)
    key = uuid.uuid4().hex
    body = json.dumps(bet_body((home.id, str(home.price)), key=key))
    first = client.post("/api/bets", data=body, content_type="application/json")
    again = client.post("/api/bets", data=body, content_type="application/json")
    assert (first.status_code, again.status_code) == (201, 200)
    assert Bet.objects.filter(user=punter, idempotency_key=key).count() == 1
