"""Every staff page and API: anonymous → login (pages) or 401 (APIs), non-staff → 403, staff → in."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import URLPattern, reverse

from odds.urls import staff_urlpatterns

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

ARGS = {
    "market_id": 999999,
    "event_id": 999999,
    "competition_id": 999999,
    "bet_id": 999999,
    "channel_id": "no-such-channel",
    "incident_id": 999999,
    "question_id": 999999,
    "user_id": 999999,
}
POST_ONLY = {
    "trading-event-create",
    "trading-market-suspend",
    "trading-bet-void",
    "trading-event-suspend",
    "trading-event-resume",
    "trading-competition-suspend",
    "trading-competition-resume",
    "trading-market-resume",
    "trading-market-price",
    "trading-market-result",
    "trading-market-settle",
    "trading-api-channel-end",
    "ops-api-latency",
    "ops-incident-acknowledge",
    "ops-incident-resolve",
    "ops-dead-letters-act",
    "game-staff-void",
    "trading-api-game-void",
    "trading-referral-decide",
    "trading-referral-offer",
}


def _url(pattern: URLPattern) -> str:
    kwargs = {name: ARGS[name] for name in pattern.pattern.converters}
    return reverse(pattern.name, kwargs=kwargs)


def _is_api(pattern: URLPattern) -> bool:
    return "/api/" in f"/{pattern.pattern}"


def _request(client: Client, pattern: URLPattern):
    url = _url(pattern)
    if pattern.name in POST_ONLY:
        return client.post(url, data="{}", content_type="application/json")
    return client.get(url)


PATTERNS = [pytest.param(p, id=p.name) for p in staff_urlpatterns]


def test_every_staff_url_is_covered_by_this_test():
    assert len(PATTERNS) >= 15
    assert all(p.name for p in staff_urlpatterns)


@pytest.mark.parametrize("pattern", PATTERNS)
def test_anonymous_is_sent_to_login_or_told_401(pattern, services):
    response = _request(Client(), pattern)
    if _is_api(pattern):
        assert response.status_code == 401
        assert response.json()["error"]["code"] == "not_authenticated"
    else:
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))


@pytest.mark.parametrize("pattern", PATTERNS)
def test_non_staff_user_gets_403(pattern, punter):
    client = Client()
    client.force_login(punter)
    response = _request(client, pattern)
    assert response.status_code == 403
    if _is_api(pattern):
        assert response.json()["error"]["code"] == "staff_only"


@pytest.mark.parametrize(
    "name",
    [
        "trading-markets",
        "trading-liability",
        "trading-risk",
        "trading-ticker",
        "trading-movers",
        "trading-subscriptions",
        "ops-lag",
        "trading-api-liability",
    ],
)
def test_staff_gets_the_page(name, staff_client, redis_client):
    assert staff_client.get(reverse(name)).status_code == 200
