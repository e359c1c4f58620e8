"""Numbers and ids no client means: huge exponents and digit counts in JSON bodies, ids in
non-ASCII digits, negative, empty or longer than a bigint in query strings and paths. Each is a
4xx with the documented error shape and changes nothing; each body below was a 500 before."""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from odds.betting.models import Bet, LedgerEntry, Wallet
from tests.factories import market_create
from tests.integration.betting.helpers import selections_of
from tests.integration.security.conftest import logged_in

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

HUGE_NUMBERS = ["1E+99999999999999999999", "1e400", "-1E+999999", "1E-99999", "0." + "1" * 100]


def _bodies(selection_id: int, number: str) -> dict[str, tuple[str, str, str]]:
    """One body per JSON endpoint (method, path, body) with ``number`` in a field it reads."""
    leg = {"selection_id": selection_id, "price": "2.00"}
    bet = {"idempotency_key": "k1", "stake": "1.00", "selections": [leg]}
    spec_bet = {"bet_id": 1, "stake": "1.00", "legs": [{"selection_id": 1, "market_id": 1, "price": "2.00"}]}
    channel = "/api/streams/" + "c" * 32
    raw = {
        "bet stake": ("POST", "/api/bets", {**bet, "stake": "@"}),
        "bet price": ("POST", "/api/bets", {**bet, "selections": [{**leg, "price": "@"}]}),
        "bet selection id": ("POST", "/api/bets", {**bet, "selections": [{**leg, "selection_id": "@"}]}),
        "cash-out quote": ("POST", "/api/bets/1/cash-out", {"quote": "@"}),
        "subscribe markets": ("POST", "/api/streams", {"view": "markets", "markets": ["@"]}),
        "subscribe slip stake": ("POST", "/api/streams", {"view": "slip", "slip": [], "stake": "@"}),
        "subscribe bet stake": ("POST", "/api/streams", {"view": "bets", "bets": [{**spec_bet, "stake": "@"}]}),
        "subscribe version": ("POST", "/api/streams", {"v": "@", "view": "markets", "markets": [1]}),
        "change markets": ("PUT", channel, {"view": "markets", "markets": ["@"]}),
        "latency sample": ("POST", "/ops/api/latency", {"samples": [{"e2e": "@"}]}),
    }
    # The number goes into the body as a JSON number, exactly as written.
    return {name: (method, url, json.dumps(body).replace('"@"', number)) for name, (method, url, body) in raw.items()}


def _send(client, method: str, url: str, body: str):
    return client.generic(method, url, data=body, content_type="application/json")


@pytest.mark.parametrize("number", HUGE_NUMBERS)
def test_a_number_out_of_range_is_a_400_naming_its_field_on_every_json_endpoint(staff, kafka_topics, number):
    entries = LedgerEntry.objects.count()
    selection = selections_of(market_create())[0]
    client = logged_in(staff)
    for name, (method, url, body) in _bodies(selection.id, number).items():
        response = _send(client, method, url, body)
        assert response.status_code == 400, (name, response.status_code, response.content[:300])
        assert response["Content-Type"] == "application/json", name
        error = response.json()["error"]
        assert error["code"] == "number_out_of_range", (name, error)
        assert error["message"], name
        assert error["field"], name
    assert not Bet.objects.exists()
    assert LedgerEntry.objects.count() == entries
    assert Wallet.objects.get(user=staff).balance == 100


def test_the_field_of_a_number_out_of_range_is_named_in_a_list(punter):
    leg = '{"selection_id": 1, "price": 1E+99999999999999999999}'
    body = '{"idempotency_key": "k", "stake": "1.00", "selections": [' + leg + "]}"
    response = _send(logged_in(punter), "POST", "/api/bets", body)
    assert response.json()["error"]["field"] == "selections[0].price"


def test_a_stake_with_an_exponent_within_range_is_still_read_as_money(punter):
    home = selections_of(market_create())[0]
    body = {"idempotency_key": "k", "stake": "@", "selections": [{"selection_id": home.id, "price": str(home.price)}]}
    response = _send(logged_in(punter), "POST", "/api/bets", json.dumps(body).replace('"@"', "0.05E+2"))
    assert response.status_code == 201, response.content
    assert response.json()["bet"]["stake"] == "5.00"


@pytest.mark.parametrize("digits", [100, 4000, 5000])
def test_an_integer_of_many_digits_is_a_400_on_every_json_endpoint(staff, kafka_topics, digits):
    client = logged_in(staff)
    for name, (method, url, body) in _bodies(1, "7" * digits).items():
        response = _send(client, method, url, body)
        assert response.status_code == 400, (name, response.content[:300])
        assert response.json()["error"]["code"] in ("invalid", "bad_json"), name


ARABIC_INDIC_12 = "\u0661\u0662"
FULLWIDTH_12 = "\uff11\uff12"
BAD_IDS = [ARABIC_INDIC_12, FULLWIDTH_12, "9" * 5000, "9" * 20, "-1", "0", "", "1,,2", "²", "+3", " 4", "1e3", "0x10"]


@pytest.mark.parametrize("ids", BAD_IDS)
def test_live_events_refuses_ids_that_are_not_plain_positive_integers(punter, ids):
    response = logged_in(punter).get("/live/events", {"ids": ids})
    assert response.status_code == 400, response.content[:300]
    error = response.json()["error"]
    assert error["code"] in ("invalid", "required")
    assert error["message"]
    assert error["field"].startswith("ids")


def test_live_events_answers_well_formed_ids(punter):
    event_id = market_create().event_id
    response = logged_in(punter).get("/live/events", {"ids": f"{event_id},{2**63 - 1}"})
    assert response.status_code == 200
    assert [event["id"] for event in response.json()["events"]] == [event_id]


@pytest.mark.parametrize("limit", [ARABIC_INDIC_12, FULLWIDTH_12, "9" * 5000, "-1", "", "12.0"])
def test_the_bet_list_limit_must_be_written_in_ascii_digits(punter, limit):
    response = logged_in(punter).get("/api/bets", {"limit": limit})
    assert response.status_code == 400, response.content[:300]
    assert response.json()["error"]["field"] == "limit"


@pytest.mark.parametrize(
    "url",
    [
        "/event/99999999999999999999/",
        "/event/-1/",
        "/event/%D9%A1%D9%A2/",
        "/event/%EF%BC%91%EF%BC%92/",
        "/sport/football/99999999999999999999/",
        "/event/" + "9" * 5000 + "/",
    ],
)
def test_a_page_for_an_id_that_cannot_exist_is_the_sites_404(punter, url):
    assert logged_in(punter).get(url).status_code == 404


@pytest.mark.parametrize(
    "url",
    [
        "/api/bets/99999999999999999999/cash-out",
        "/api/bets/%D9%A1%D9%A2/cash-out",
        "/api/bets/" + "9" * 5000 + "/cash-out",
        "/trading/api/markets/99999999999999999999/settlement",
        "/trading/api/markets/%EF%BC%91/settlement",
    ],
)
def test_an_api_path_with_an_id_that_cannot_exist_is_a_404_in_json(staff, url):
    client = logged_in(staff)
    response = (
        client.post(url, data='{"quote": "1.00"}', content_type="application/json")
        if "cash" in url
        else client.get(url)
    )
    assert response.status_code == 404, response.content[:300]
    assert response.json()["error"]["code"] == "not_found"


# Any JSON number literal: sign, up to 80 digits, a fraction, an exponent up to 30 digits long.
number_literals = st.builds(
    lambda sign, digits, fraction, exponent: f"{sign}{digits}{fraction}{exponent}",
    st.sampled_from(["", "-"]),
    st.from_regex(r"\A(0|[1-9][0-9]{0,79})\Z"),
    st.sampled_from([""]) | st.from_regex(r"\A\.[0-9]{1,40}\Z"),
    st.sampled_from([""]) | st.from_regex(r"\A[eE][+-]?[0-9]{1,30}\Z"),
)
DOCUMENTED_400 = {"number_out_of_range", "invalid", "required", "bad_json"} | {
    "stake_too_low",
    "stake_too_high",
    "return_too_high",
    "unknown_selection",
}


@pytest.fixture
def staff_client(staff):
    """Signed in once for all of a property's examples: a person signing in forty times a minute
    meets the login throttle, and a TOTP code works once."""
    return logged_in(staff)


@given(number=number_literals, endpoint=st.sampled_from(sorted(_bodies(1, "0"))))
@hypothesis_settings(
    max_examples=int(os.environ.get("NUMBER_PROPERTY_EXAMPLES", "40")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_any_json_number_in_any_json_endpoint_is_answered_without_a_server_error(
    staff_client, kafka_topics, number, endpoint
):
    method, url, body = _bodies(1, number)[endpoint]
    response = _send(staff_client, method, url, body)
    assert response.status_code < 500, (endpoint, number, response.content[:300])
    assert response["Content-Type"] == "application/json"
    if response.status_code >= 400:
        error = response.json()["error"]
        assert error["message"]
        if response.status_code == 400:
            assert error["code"] in DOCUMENTED_400, (endpoint, number, error)
