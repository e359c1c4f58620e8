"""Requests the API fuzzing (schemathesis, hypothesis) found answered with a 500, an HTML page or a
wrong refusal; each is now a 4xx in JSON with a message (or accepted, where it was valid)."""

from __future__ import annotations

import json

import pytest
import redis
from django.conf import settings
from django.http import HttpRequest
from django.middleware.csrf import get_token
from django.test import Client

from odds.betting.models import Bet, Wallet
from odds.streaming.services import streams as stream_service
from odds.streaming.services.streams import StreamError
from store import keys
from tests.factories import market_create
from tests.integration.betting.helpers import bet_body, error_of, selections_of
from tests.integration.security.conftest import logged_in

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def _post(client, url: str, body: bytes | str):
    return client.post(url, data=body, content_type="application/json")


def _refused(response, status: int, code: str, field: str | None = None) -> dict:
    assert response["Content-Type"] == "application/json"
    assert error_of(response)[:2] == (status, code), response.content[:300]
    error = response.json()["error"]
    assert error["message"]
    if field is not None:
        assert error.get("field") == field
    return error


def test_a_body_nested_too_deeply_is_a_400(punter):
    body = "[" * 100_000 + "]" * 100_000
    _refused(_post(logged_in(punter), "/api/bets", body), 400, "bad_json")


def test_an_integer_of_thousands_of_digits_is_a_400(punter):
    _refused(_post(logged_in(punter), "/api/bets", '{"stake": ' + "1" * 5000 + "}"), 400, "bad_json")


def test_nan_is_not_json(punter):
    _refused(_post(logged_in(punter), "/api/bets", '{"stake": NaN}'), 400, "bad_json")


def test_an_id_beyond_64_bits_in_a_spec_is_a_400_naming_it(punter, kafka_topics):
    body = json.dumps({"view": "markets", "markets": [7, 2**64]})
    _refused(_post(logged_in(punter), "/api/streams", body), 400, "invalid", "markets[1]")


def test_a_lone_surrogate_in_a_spec_is_a_400_naming_it(punter, kafka_topics):
    body = '{"view": "markets", "query": {"sport": "\\ud800"}}'
    _refused(_post(logged_in(punter), "/api/streams", body), 400, "bad_json", "query.sport")


def test_a_claimed_bet_no_placement_would_take_is_refused(punter, kafka_topics):
    legs = [{"selection_id": 1, "market_id": 1, "price": "2.00"}]
    body = json.dumps({"view": "bets", "bets": [{"bet_id": 1, "stake": "1E+30", "legs": legs}]})
    _refused(_post(logged_in(punter), "/api/streams", body), 400, "invalid", "bets[0]")


def test_a_slip_of_more_legs_than_a_bet_takes_is_refused(punter, kafka_topics):
    slip = [{"selection_id": i, "market_id": i} for i in range(1, 22)]
    body = json.dumps({"view": "slip", "slip": slip, "stake": "1.00"})
    _refused(_post(logged_in(punter), "/api/streams", body), 400, "invalid", "slip")


@pytest.mark.parametrize(
    "url",
    ["/api/bets/-1/cash-out", "/api/bets/x/cash-out", "/api/nothing", "/trading/api/markets/-4361/settlement"],
)
def test_an_unknown_api_path_is_a_404_in_json(staff, url):
    _refused(logged_in(staff).get(url), 404, "not_found")


def test_fractional_latency_samples_are_kept(staff, redis_client):
    response = _post(logged_in(staff), "/ops/api/latency", '{"samples": [{"e2e": 95.5, "ws": 7.25}]}')
    assert response.status_code == 202, response.content
    assert response.json()["kept"] == 1


def test_ending_a_channel_while_kafka_refuses_is_a_503_in_json(staff, redis_client, monkeypatch):
    channel_id = "c" * 32
    redis.Redis.from_url(settings.REDIS_URL).hset(keys.channel_meta(channel_id), "user", 1)

    def refuse(command):
        raise StreamError(503, "command_not_sent", "the stream service is unavailable; try again")

    monkeypatch.setattr(stream_service, "_send", refuse)
    response = logged_in(staff).post(f"/trading/api/channels/{channel_id}/end")
    _refused(response, 503, "command_not_sent")


@pytest.mark.parametrize(("field", "value"), [("v", True), ("stake", " 10"), ("stake", "1e1"), ("stake", "+5")])
def test_values_a_client_does_not_mean_are_refused_and_move_no_money(punter, field, value):
    home = selections_of(market_create())[0]
    body = {**bet_body((home.id, str(home.price))), field: value}
    _refused(_post(logged_in(punter), "/api/bets", json.dumps(body)), 400, "invalid", field)
    assert Wallet.objects.get(user=punter).balance == 100
    assert not Bet.objects.filter(user=punter).exists()


def test_a_stake_sent_as_a_json_number_with_an_exponent_is_answered_as_money(punter):
    home = selections_of(market_create())[0]
    body = json.dumps(bet_body((home.id, str(home.price)))).replace('"stake": "10.00"', '"stake": 1E+1')
    response = _post(logged_in(punter), "/api/bets", body)
    assert response.status_code == 201, response.content
    assert response.json()["bet"]["stake"] == "10.00"


def _with_csrf_token(user) -> tuple[Client, dict[str, str]]:
    """A client that enforces CSRF like a browser, with a valid token to send in the header."""
    client = logged_in(user, csrf=True)
    request = HttpRequest()
    masked = get_token(request)
    client.cookies[settings.CSRF_COOKIE_NAME] = request.META["CSRF_COOKIE"]
    return client, {"X-CSRFToken": masked}


def test_a_multipart_content_type_without_a_boundary_is_a_400_in_json(punter):
    client, headers = _with_csrf_token(punter)
    response = client.post("/api/bets", data=b"{}", content_type="multipart/form-data", headers=headers)
    _refused(response, 400, "bad_json")


def test_a_form_body_where_json_is_expected_is_a_400_in_json(punter):
    client, headers = _with_csrf_token(punter)
    response = client.post("/api/bets", {"stake": "1.00"}, headers=headers)
    _refused(response, 400, "bad_json")
    assert not Bet.objects.filter(user=punter).exists()


@pytest.mark.parametrize(("name", "value"), [("bets", {}), ("slip", 0), ("slip", "")])
def test_a_list_of_a_spec_given_as_something_else_is_refused(punter, kafka_topics, name, value):
    body = json.dumps({"view": "markets", "markets": [42], name: value})
    _refused(_post(logged_in(punter), "/api/streams", body), 400, "invalid", name)


def test_a_claimed_bet_leg_that_is_not_an_object_is_refused(punter, kafka_topics):
    legs = [1, {"selection_id": 1, "market_id": 1, "price": "2.00"}]
    body = json.dumps({"view": "bets", "bets": [{"bet_id": 1, "stake": "1.00", "legs": legs}]})
    _refused(_post(logged_in(punter), "/api/streams", body), 400, "invalid", "bets[0].legs")
