"""/healthz: one entry per component, 200 only when all are healthy, 503 naming the failure."""

from __future__ import annotations

import time

import pytest

from odds.tasks import worker_heartbeat
from reducers import keys

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def test_healthz_is_503_and_names_the_missing_components(client, kafka_topics, redis_client):
    redis_client.delete(keys.heartbeat("celery"), keys.heartbeat("feed"), keys.heartbeat("reducers"))
    response = client.get("/healthz")
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


def test_a_stale_heartbeat_is_unhealthy(client, kafka_topics, redis_client):
    worker_heartbeat()
    redis_client.set(keys.heartbeat("feed"), int(time.time()) - 600)
    redis_client.set(keys.heartbeat("reducers"), int(time.time()))
    body = client.get("/healthz").json()
    assert body["failing"] == ["feed"]
    assert "ago" in body["components"]["feed"]["error"]


def test_a_reducer_query_waiting_to_be_restarted_makes_the_reducers_unhealthy(client, kafka_topics, redis_client):
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
        response = client.get("/healthz")
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
