"""/healthz: one entry per component, 200 only when all are healthy, 503 naming the failure; what
each check found only in /healthz/detail, for staff and monitoring (the scrape token)."""

from __future__ import annotations

import time

import pytest

from odds.core import health
from odds.tasks import worker_heartbeat
from store import keys
from tests.factories import sign_in, user_create

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture(autouse=True)
def fresh_checks(settings):
    """Every request of these tests runs the checks (the public answer is otherwise kept 2 s)."""
    settings.HEALTH_PUBLIC_CACHE_S = 0


@pytest.fixture
def operator(client):
    """The test client logged in as staff, who may read /healthz/detail."""
    sign_in(client, user_create(staff=True))
    return client


def test_healthz_is_503_and_names_the_missing_components(operator, kafka_topics, redis_client):
    redis_client.delete(keys.heartbeat("celery"), keys.heartbeat("feed"), keys.heartbeat("reducers"))
    response = operator.get("/healthz/detail")
    assert response.status_code == 503
    body = response.json()
    assert set(body["components"]) == {"kafka", "redis", "postgres", "reducers", "celery", "feed"}
    assert set(body["failing"]) == {"reducers", "celery", "feed"}
    assert body["components"]["kafka"]["ok"] is True
    assert "heartbeat" in body["components"]["celery"]["error"]


def test_healthz_is_200_when_every_component_reports(client, kafka_topics, redis_client):
    worker_heartbeat()
    now = int(time.time())
    redis_client.set(keys.heartbeat("feed"), now)
    redis_client.set(keys.heartbeat("reducers"), now)
    response = client.get("/healthz")
    assert response.status_code == 200, response.json()
    assert response.json()["failing"] == []


def test_a_stale_heartbeat_is_unhealthy(operator, kafka_topics, redis_client):
    worker_heartbeat()
    redis_client.set(keys.heartbeat("feed"), int(time.time()) - 600)
    redis_client.set(keys.heartbeat("reducers"), int(time.time()))
    body = operator.get("/healthz/detail").json()
    assert body["failing"] == ["feed"]
    assert "ago" in body["components"]["feed"]["error"]


def test_a_reducer_query_waiting_to_be_restarted_makes_the_reducers_unhealthy(operator, kafka_topics, redis_client):
    import orjson

    from reducers.supervision import Backoff, QueryRun, run_failed, run_started

    worker_heartbeat()
    now = int(time.time())
    redis_client.set(keys.heartbeat("feed"), now)
    redis_client.set(keys.heartbeat("reducers"), now)
    running = run_started(QueryRun(), now_ms=now * 1000)
    failed = run_failed(running, error="StreamingQueryException: Redis down", now_ms=now * 1000, backoff=Backoff())
    redis_client.hset(
        keys.reducer_queries(),
        mapping={"prices": orjson.dumps(running.to_json()), "liability": orjson.dumps(failed.to_json())},
    )
    try:
        response = operator.get("/healthz/detail")
        assert response.status_code == 503
        reducers = response.json()["components"]["reducers"]
        assert "liability" in reducers["error"]
        assert "Redis down" in reducers["error"]
        assert reducers["queries"]["liability"] == {
            "state": "restarting",
            "restarts": 0,
            "last_error": "StreamingQueryException: Redis down",
        }
        assert reducers["queries"]["prices"]["state"] == "running"
    finally:
        redis_client.delete(keys.reducer_queries())


def test_the_public_answer_says_which_components_fail_and_nothing_of_why(client, kafka_topics, redis_client):
    redis_client.delete(keys.heartbeat("celery"), keys.heartbeat("feed"), keys.heartbeat("reducers"))
    response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert set(body["failing"]) == {"reducers", "celery", "feed"}
    # No errors, ages, sizes, broker counts or latencies for anyone who asks.
    assert body["components"] == {name: {"ok": name not in body["failing"]} for name in health.CHECKS}


def test_a_flood_of_public_requests_runs_the_checks_once_per_interval(client, kafka_topics, settings, monkeypatch):
    settings.HEALTH_PUBLIC_CACHE_S = 60
    monkeypatch.setattr(health, "_public", None)
    runs: list[int] = []
    check = health.CHECKS["postgres"]

    def counted() -> dict:
        runs.append(1)
        return check()

    monkeypatch.setitem(health.CHECKS, "postgres", counted)
    for _ in range(20):
        client.get("/healthz")
    assert len(runs) == 1


def test_the_detail_is_for_staff_and_the_scrape_token_only(client, settings, kafka_topics):
    settings.METRICS_TOKEN = "s3cret-token-for-the-detail"
    assert client.get("/healthz/detail").status_code == 401
    assert client.get("/healthz/detail", headers={"Authorization": "Bearer wrong"}).status_code == 401
    allowed = client.get("/healthz/detail", headers={"Authorization": "Bearer s3cret-token-for-the-detail"})
    assert allowed.status_code in (200, 503)
    assert "latency_ms" in allowed.json()["components"]["postgres"]
    sign_in(client, user_create())
    assert client.get("/healthz/detail").status_code == 401
