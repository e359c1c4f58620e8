"""Health of every component the platform depends on, for /healthz and `make up`."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import redis
from django.conf import settings
from django.db import connection

from odds.core.kafka import admin_client
from reducers import topics
from reducers.supervision import RUNNING
from store.clients import redis_client
from store.pipeline import heartbeat_beat, heartbeat_read, reducer_queries_read

HEARTBEAT_MAX_AGE_S = 30


def _redis() -> redis.Redis:
    return redis_client(settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2)


def _check_kafka() -> dict[str, Any]:
    metadata = admin_client().list_topics(timeout=3)
    missing = [t for t in (topics.prices(), topics.commands(), topics.markets()) if t not in metadata.topics]
    if missing:
        return {"ok": False, "error": f"missing topics: {', '.join(missing)}"}
    return {
        "ok": True,
        "brokers": len(metadata.brokers),
        "price_partitions": len(metadata.topics[topics.prices()].partitions),
    }


def _check_redis() -> dict[str, Any]:
    client = _redis()
    info = client.info("memory")
    used, limit = info["used_memory"], info.get("maxmemory", 0)
    report: dict[str, Any] = {"ok": True, "used_memory_mb": round(used / 1e6, 1)}
    if limit:
        report["maxmemory_mb"] = round(limit / 1e6, 1)
    try:
        # A write, not a read: at maxmemory (noeviction) reads still work and every write fails.
        heartbeat_beat(client, "healthz", ttl_s=60)
    except redis.ResponseError as exc:
        report.update(ok=False, error=f"Redis refuses writes: {exc}"[:300])
    return report


def _check_postgres() -> dict[str, Any]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()
    return {"ok": True}


def _heartbeat(component: str, what: str) -> dict[str, Any]:
    beat = heartbeat_read(_redis(), component)
    if beat is None:
        return {"ok": False, "error": f"no {what} heartbeat"}
    age = time.time() - beat
    if age > HEARTBEAT_MAX_AGE_S:
        return {"ok": False, "error": f"last {what} heartbeat {age:.0f}s ago", "age_s": round(age, 1)}
    return {"ok": True, "age_s": round(age, 1)}


def reducer_query_runs() -> dict[str, dict[str, Any]]:
    """Each reducer query's supervision state as the reducer process last wrote it."""
    return reducer_queries_read(_redis())


def _check_reducers() -> dict[str, Any]:
    result = _heartbeat("reducers", "streaming-query progress")
    runs = reducer_query_runs()
    if runs:
        result["queries"] = {
            name: {"state": run["state"], "restarts": run["restarts"], "last_error": run["last_error"]}
            for name, run in runs.items()
        }
        down = [name for name, run in runs.items() if run["state"] != RUNNING]
        if down and result["ok"]:
            first = runs[down[0]]
            result["ok"] = False
            result["error"] = f"queries not running: {', '.join(down)} ({first['state']}: {first['last_error']})"[:300]
    return result


def _check_celery() -> dict[str, Any]:
    return _heartbeat("celery", "worker")


def _check_feed() -> dict[str, Any]:
    return _heartbeat("feed", "feed")


CHECKS: dict[str, Callable[[], dict[str, Any]]] = {
    "kafka": _check_kafka,
    "redis": _check_redis,
    "postgres": _check_postgres,
    "reducers": _check_reducers,
    "celery": _check_celery,
    "feed": _check_feed,
}


def health_report() -> dict[str, Any]:
    """One entry per component with what its check found (errors, ages, sizes, latencies); ``ok``
    overall only when every component is healthy. For operators (``/healthz/detail``): a fresh
    check every time."""
    components: dict[str, Any] = {}
    for name, check in CHECKS.items():
        started = time.perf_counter()
        try:
            result = check()
        except Exception as exc:  # any failure of a dependency is a health finding, not a crash
            result = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:300]}
        result["latency_ms"] = round((time.perf_counter() - started) * 1000, 1)
        components[name] = result
    failing = [name for name, r in components.items() if not r["ok"]]
    return {"ok": not failing, "failing": failing, "components": components}


_public: tuple[float, dict[str, Any]] | None = None
_public_lock = threading.Lock()


def health_public() -> dict[str, Any]:
    """What anyone may know (``/healthz``): whether each component is healthy, nothing of why.
    Checked at most once every ``HEALTH_PUBLIC_CACHE_S`` per process, however many ask: a flood
    of requests does not become a flood of checks against Kafka, Redis and PostgreSQL."""
    global _public
    with _public_lock:
        now = time.monotonic()
        if _public is None or now - _public[0] >= settings.HEALTH_PUBLIC_CACHE_S:
            report = health_report()
            public = {
                "ok": report["ok"],
                "failing": report["failing"],
                "components": {name: {"ok": result["ok"]} for name, result in report["components"].items()},
            }
            _public = (now, public)
        return _public[1]
