"""/metrics in production: the token is required of every client, loopback included (a reverse
proxy on the same host makes every client loopback), and production settings refuse to start
without one. Development keeps loopback access without a token."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.integration.security.test_production_settings import PRODUCTION_ENV, run

pytestmark = [pytest.mark.integration]

SCRAPE = (
    "import django; django.setup(); from django.test import Client; "
    "client = Client(REMOTE_ADDR='127.0.0.1', HTTP_HOST='sportsbook.example'); "
    "print(client.get('/metrics', secure=True{auth}).status_code)"
)


def _production_scrape(auth: str = "") -> int:
    result = run(["-c", SCRAPE.format(auth=auth)], PRODUCTION_ENV)
    assert result.returncode == 0, result.stderr
    return int(result.stdout.strip().splitlines()[-1])


def test_production_refuses_to_start_without_a_metrics_token():
    env = {k: v for k, v in PRODUCTION_ENV.items() if k != "METRICS_TOKEN"}
    result = run(["-c", "import django; django.setup()"], env)
    assert result.returncode != 0
    assert "METRICS_TOKEN must be set" in result.stderr


def test_production_metrics_refuses_a_loopback_client_without_the_token():
    assert _production_scrape() == 401


def test_production_metrics_refuses_a_loopback_client_with_a_wrong_token():
    assert _production_scrape(", HTTP_AUTHORIZATION='Bearer wrong'") == 401


@pytest.mark.django_db
def test_metrics_without_a_configured_token_answers_no_one_where_a_token_is_required(settings, monkeypatch):
    settings.METRICS_TOKEN = ""
    settings.METRICS_TOKEN_REQUIRED = True
    monkeypatch.delenv("METRICS_TOKEN", raising=False)
    response = Client().get("/metrics", REMOTE_ADDR="127.0.0.1")
    assert response.status_code == 403
    assert b"METRICS_TOKEN" in response.content


@pytest.mark.django_db
def test_development_metrics_still_answers_loopback_without_a_token(settings, monkeypatch, redis_client):
    settings.METRICS_TOKEN = ""
    settings.METRICS_TOKEN_REQUIRED = False
    monkeypatch.delenv("METRICS_TOKEN", raising=False)
    assert Client().get("/metrics", REMOTE_ADDR="127.0.0.1").status_code == 200
    assert Client().get("/metrics", REMOTE_ADDR="10.1.2.3").status_code == 403
