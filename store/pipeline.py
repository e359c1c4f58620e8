"""The pipeline's bookkeeping in Redis: counters, heartbeats, the reducer queries' progress, signs
of life, lag and supervision states, the store's mark, the price query's watermark and the lag
readings' window; and the names the pipeline's other stores are kept under (the Celery broker's
key prefix, the weekly digest's cache marker).

Written by the reducers, the feed, the workers and the web processes, read by /healthz, the ops
pages and ``/metrics``. Each function carries out one write or read on the client (or pipeline)
it is handed, so a caller that queues several writes on one pipeline keeps them in one round
trip. It imports no client library: Spark executors import it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from store import keys


def queue_keep_newest(pipe: Any, key: str, items: Sequence[bytes], *, keep: int, ttl_s: int) -> None:
    """Queue on ``pipe`` the addition of ``items`` to the list ``key``, newest first, the ``keep``
    newest kept for ``ttl_s`` after the latest addition."""
    pipe.lpush(key, *items)
    pipe.ltrim(key, 0, keep - 1)
    pipe.expire(key, ttl_s)


# --- counters --------------------------------------------------------------------------------


def counter_add(pipe: Any, name: str, field: str, n: int) -> None:
    """Add ``n`` to ``field`` of the ``name`` counter family (``keys.counter``), on ``pipe`` (a
    client, or a pipeline the caller sends)."""
    pipe.hincrby(keys.counter(name), field, n)


def counters_read(client: Any, name: str) -> dict[str, int]:
    """Every field of the ``name`` counter family and its count, by field name."""
    return {field.decode(): int(value) for field, value in sorted(counter_fields(client, name).items())}


def counter_report(pipe: Any, name: str, field: str, value: bytes, *, ttl_s: int) -> None:
    """Queue on ``pipe`` the replacement of ``field`` of the ``name`` hash by ``value`` (a
    reporter's latest figures), the hash expiring ``ttl_s`` after the latest report."""
    key = keys.counter(name)
    pipe.hset(key, field, value)
    pipe.expire(key, ttl_s)


def counter_fields(client: Any, name: str) -> dict[bytes, bytes]:
    """The raw fields and values of the ``name`` hash."""
    fields: dict[bytes, bytes] = client.hgetall(keys.counter(name))
    return fields


def counter_forget(client: Any, name: str, fields: Sequence[bytes]) -> None:
    """Remove ``fields`` from the ``name`` hash."""
    client.hdel(keys.counter(name), *fields)


# --- heartbeats ------------------------------------------------------------------------------


def heartbeat_beat(client: Any, component: str, *, ttl_s: int) -> None:
    """Write ``component``'s heartbeat (``keys.heartbeat``): now in epoch seconds, gone after
    ``ttl_s`` without another beat."""
    client.set(keys.heartbeat(component), int(time.time()), ex=ttl_s)


def heartbeat_read(client: Any, component: str) -> float | None:
    """When ``component`` last beat (epoch seconds), or None when its heartbeat has expired or
    never was."""
    raw = client.get(keys.heartbeat(component))
    return None if raw is None else float(raw)


# --- the reducer queries ---------------------------------------------------------------------


def reducer_progress_write(pipe: Any, query: str, report: bytes, *, ttl_s: int) -> None:
    """Write ``report`` (progress JSON) as ``query``'s latest (``keys.reducer_progress``), kept
    ``ttl_s`` after it was written."""
    pipe.set(keys.reducer_progress(query), report, ex=ttl_s)


def reducer_progress_keep(pipe: Any, query: str, report: bytes, *, keep: int, ttl_s: int) -> None:
    """Queue on ``pipe`` the addition of ``report`` to ``query``'s recent progress reports
    (``keys.reducer_progress_recent``), newest first, the ``keep`` newest kept, for ``ttl_s``
    after the latest."""
    queue_keep_newest(pipe, keys.reducer_progress_recent(query), [report], keep=keep, ttl_s=ttl_s)


def reducer_progress_read(client: Any, queries: Sequence[str]) -> dict[str, bytes | None]:
    """Each query's latest progress JSON (None where there is none), in one round trip."""
    reports = client.mget([keys.reducer_progress(query) for query in queries])
    return dict(zip(queries, reports, strict=True))


def reducer_lag_write(pipe: Any, query: str, lag: Mapping[str, Any], *, ttl_s: int) -> None:
    """Write ``query``'s lag per partition at its latest progress report (``keys.reducer_lag``),
    kept ``ttl_s``."""
    pipe.set(keys.reducer_lag(query), orjson.dumps(lag), ex=ttl_s)


def reducer_seen_write(pipe: Any, query: str, at_ms: int) -> None:
    """Record ``at_ms`` (epoch ms) as ``query``'s last sign of life (``keys.reducer_seen``)."""
    pipe.hset(keys.reducer_seen(), query, at_ms)


def reducer_seen_read(client: Any) -> dict[str, int]:
    """Each reducer query's last sign of life (epoch ms), by query name."""
    return {name.decode(): int(value) for name, value in client.hgetall(keys.reducer_seen()).items()}


def reducer_queries_write(client: Any, runs: Mapping[str, Mapping[str, Any]]) -> None:
    """Write the supervision state of each of ``runs``' queries (``keys.reducer_queries``),
    leaving the other queries' as they are."""
    client.hset(keys.reducer_queries(), mapping={name: orjson.dumps(run) for name, run in runs.items()})


def reducer_queries_read(client: Any) -> dict[str, dict[str, Any]]:
    """Each reducer query's supervision state as the reducer process last wrote it, by name."""
    raw = client.hgetall(keys.reducer_queries())
    return {name.decode(): orjson.loads(value) for name, value in sorted(raw.items())}


# --- the lag readings' window ----------------------------------------------------------------


def lag_window_read(client: Any, query: str, *, size: int) -> list[dict[str, Any]]:
    """The ``size`` newest lag readings of ``query``'s window (``keys.lag_window``), newest first."""
    return [orjson.loads(item) for item in client.lrange(keys.lag_window(query), 0, size - 1)]


def lag_window_add(
    client: Any, query: str, reading: Mapping[str, Any], *, size: int, spacing_ms: int, ttl_s: int
) -> bool:
    """Add ``reading`` to ``query``'s window, keeping the ``size`` newest for ``ttl_s`` after the
    latest, unless one was added less than ``spacing_ms`` ago (``keys.lag_window_lock``: several
    readers poll). Returns whether it was added."""
    if not client.set(keys.lag_window_lock(query), 1, nx=True, px=spacing_ms):
        return False
    pipe = client.pipeline(transaction=False)
    queue_keep_newest(pipe, keys.lag_window(query), [orjson.dumps(reading)], keep=size, ttl_s=ttl_s)
    pipe.execute()
    return True


# --- the store's mark and the watermark ------------------------------------------------------


def store_mark_write(client: Any, mark: Mapping[str, Any]) -> None:
    """Mark the store as holding what Kafka retains (``keys.store_mark``), with ``mark``'s figures."""
    client.set(keys.store_mark(), orjson.dumps(mark))


def store_marked(client: Any) -> bool:
    """Whether the store has its mark (absent: Redis came back empty, or is new)."""
    return bool(client.exists(keys.store_mark()))


def store_mark_read(client: Any) -> dict[str, Any] | None:
    """The figures of the store's mark, or None when it has none."""
    raw = client.get(keys.store_mark())
    if raw is None:
        return None
    mark: dict[str, Any] = orjson.loads(raw)
    return mark


def store_mark_remove(client: Any) -> None:
    """Remove the store's mark: the reducers rebuild the store from Kafka when they next look."""
    client.delete(keys.store_mark())


def watermark_read(client: Any, query: str) -> int:
    """``query``'s stored event-time watermark (epoch ms; 0 when none is stored)."""
    return int(client.get(keys.watermark(query)) or 0)


def watermark_write(pipe: Any, query: str, watermark_ms: int) -> None:
    """Store ``query``'s event-time watermark (epoch ms), for a restart to go on from."""
    pipe.set(keys.watermark(query), watermark_ms)


# --- names of the pipeline's keys in other stores --------------------------------------------


def celery_key_prefix(of_namespace: str | None = None) -> str:
    """What every Celery key on the broker starts with: the namespace's (this process's unless
    ``of_namespace`` is given), so stacks sharing one Redis keep their own queues."""
    return keys.celery_prefix(of_namespace)


def digest_sent_read(cache: Any, *, week: str, user_id: int) -> bool:
    """Whether ``cache`` (a Django cache, or anything with its ``get``) holds the marker that the
    weekly digest of ``week`` (ISO) went to the user."""
    return bool(cache.get(keys.digest_sent(week=week, user_id=user_id)))


def digest_sent_mark(cache: Any, *, week: str, user_id: int, ttl_s: int) -> None:
    """Set in ``cache`` the marker that the weekly digest of ``week`` went to the user, for ``ttl_s``."""
    cache.set(keys.digest_sent(week=week, user_id=user_id), 1, timeout=ttl_s)
