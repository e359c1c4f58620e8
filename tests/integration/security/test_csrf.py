"""CSRF: every state-changing form and API refuses a request without the token (403), and
the JSON APIs answer that refusal in JSON. Logged in as staff, so only the CSRF check stands
between the request and its effect."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import URLPattern, reverse

from odds.urls import staff_urlpatterns
from tests.integration.security.conftest import logged_in

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

CHANNEL = "c" * 32
WRITES: list[tuple[str, str]] = [
    ("POST", "/api/bets"),
    ("POST", "/api/bets/1/cash-out"),
    ("POST", "/api/streams"),
    ("POST", f"/api/streams/{CHANNEL}/begin"),
    ("PUT", f"/api/streams/{CHANNEL}"),
    ("DELETE", f"/api/streams/{CHANNEL}"),
    ("POST", "/logout/"),
    ("POST", "/admin/catalogue/market/add/"),
    ("POST", "/admin/logout/"),
]
STAFF_WRITES = {
    "trading-event-create",
    "trading-market-suspend",
    "trading-market-resume",
    "trading-market-price",
    "trading-market-result",
    "trading-market-settle",
    "trading-api-channel-end",
    "ops-api-latency",
    "ops-incident-acknowledge",
    "ops-incident-resolve",
    "ops-dead-letters-act",
}


def _staff_url(pattern: URLPattern) -> str:
    kwargs = {name: 1 if name in ("market_id", "incident_id") else CHANNEL for name in pattern.pattern.converters}
    return reverse(pattern.name, kwargs=kwargs)


for _pattern in staff_urlpatterns:
    if _pattern.name in STAFF_WRITES:
        WRITES.append(("POST", _staff_url(_pattern)))


def _send(client: Client, method: str, url: str):
    return client.generic(method, url, data="{}", content_type="application/json")


def test_every_staff_write_is_in_the_list():
    assert {p.name for p in staff_urlpatterns} >= STAFF_WRITES
    assert len(WRITES) == 9 + len(STAFF_WRITES)


@pytest.mark.parametrize(("method", "url"), WRITES)
def test_write_without_a_csrf_token_is_refused(staff, method, url):
    response = _send(logged_in(staff, csrf=True), method, url)
    assert response.status_code == 403, response.content[:300]


@pytest.mark.parametrize(("method", "url"), [w for w in WRITES if "/api/" in w[1]])
def test_api_csrf_refusal_is_json_with_a_reason(staff, method, url):
    response = _send(logged_in(staff, csrf=True), method, url)
    assert response["Content-Type"] == "application/json"
    error = response.json()["error"]
    assert error["code"] == "csrf_failed"
    assert "CSRF" in error["message"]


def test_login_form_without_a_csrf_token_is_refused(punter):
    client = Client(enforce_csrf_checks=True)
    response = client.post("/login/", {"username": punter.username, "password": "pw-for-tests"})
    assert response.status_code == 403
    assert "_auth_user_id" not in client.session


def test_a_token_from_another_session_is_refused(staff, punter):
    """The token must match this browser's CSRF cookie; a token lifted from elsewhere does not."""
    other = logged_in(punter, csrf=True)
    other.get("/login/")
    stolen = other.cookies["csrftoken"].value
    client = logged_in(staff, csrf=True)
    client.get("/login/")
    response = client.post(
        "/api/streams", data="{}", content_type="application/json", headers={"X-CSRFToken": stolen[::-1]}
    )
    assert response.status_code == 403
