"""Shared pieces of the benchmarks: namespaces, processes, percentiles, machine facts and speed."""

from __future__ import annotations

import contextlib
import os
import platform
import time
import uuid
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import psutil

from bench.harness import ROOT, wait_until
from store.clients import redis_client

RESULTS = ROOT / "bench" / "results"


def django_ready() -> None:
    """Django set up, once, for a stage that needs its settings or models when run on its own
    (``python -m bench.<stage>``); under ``bench.run`` it already is."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
    import django
    from django.apps import apps

    if not apps.ready:
        django.setup()


def log(message: str) -> None:
    print(f"[{datetime.now().strftime('%H:%M:%S')}] {message}", flush=True)


def competitions_remove(**lookup: Any) -> None:
    """The benchmark's competitions matching ``lookup`` (``name=…``), with their events, markets
    and selections (the catalogue protects each from its parent's delete)."""
    from odds.catalogue.models import Competition, Event, Market, Selection

    events = Event.objects.filter(**{f"competition__{k}": v for k, v in lookup.items()})
    Selection.objects.filter(market__event__in=events).delete()
    Market.objects.filter(event__in=events).delete()
    events.delete()
    Competition.objects.filter(**lookup).delete()


def cell(value: Any) -> str:
    """A table cell: thousands separated, a figure not measured as a dash."""
    if value is None:
        return "—"
    return f"{value:,}" if isinstance(value, int) else str(value)


@contextlib.contextmanager
def curve_figure(path: Path, columns: int) -> Iterator[list[Any]]:
    """A row of ``columns`` plots of figures against a count (sockets, markets) on a log scale,
    from zero, each with its grid and legend, saved to ``path`` once drawn."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, columns, figsize=(4 * columns, 4))
    try:
        yield list(axes)
        for axis in axes:
            axis.set_xscale("log")
            axis.set_ylim(bottom=0)
            axis.grid(alpha=0.3)
            axis.legend(fontsize=8)
        fig.tight_layout()
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=100)
    finally:
        plt.close(fig)


def percentile(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))]


def median(values: list[float]) -> float:
    return percentile(values, 0.5)


def median_run(runs: list[dict[str, Any]], key: str) -> dict[str, Any]:
    """The run whose ``key`` is the median of ``runs`` (the lower one of an even count), so the
    figures reported beside it come from the same run; runs without ``key`` are left out."""
    measured = sorted((r for r in runs if r.get(key) is not None), key=lambda r: r[key])
    if not measured:
        return runs[0] if runs else {}
    return measured[(len(measured) - 1) // 2]


def machine() -> dict[str, Any]:
    return {
        "cpus": os.cpu_count(),
        "memory_gib": round(psutil.virtual_memory().total / 2**30, 1),
        "cpu_model": next(
            (
                line.split(":", 1)[1].strip()
                for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")
            ),
            platform.processor(),
        ),
        "kernel": platform.release(),
        "python": platform.python_version(),
    }


def cpu_probe_ms() -> float:
    """Milliseconds this machine takes for a fixed piece of pure-Python work (three million loop
    steps, the fastest of three), taken between stages: on a shared host the speed of the cores
    changes from minute to minute, and a ratio of two figures measured minutes apart is only as
    good as the speed being the same for both."""
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        total = 0
        for i in range(3_000_000):
            total += i
        best = min(best, time.perf_counter() - started)
    return round(best * 1000, 1)


def migrate_if_needed() -> None:
    """Apply the migrations the benchmark's database lacks (a fresh machine's has none)."""
    from django.core.management import call_command
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    if executor.migration_plan(executor.loader.graph.leaf_nodes()):
        print("applying migrations", flush=True)
        call_command("migrate", interactive=False, verbosity=0)


def database_url() -> str:
    """The database this process uses, as a URL for a server it starts (a test session's
    database included)."""
    from urllib.parse import quote

    from django.db import connection

    db = connection.settings_dict
    credentials = quote(db["USER"], safe="") + (f":{quote(db['PASSWORD'], safe='')}" if db["PASSWORD"] else "")
    return f"postgres://{credentials}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def session_create(*, user: Any, expiry_s: int = 3600, second_factor: bool = False) -> str:
    """A logged-in session of ``user`` in the site's session store, as a login would leave it
    (with ``second_factor``: as a staff member's login with a TOTP code leaves it); its key is the
    session cookie's value. It lapses after ``expiry_s`` if nobody removes it."""
    import time
    from importlib import import_module

    from allauth.account.authentication import AUTHENTICATION_METHODS_SESSION_KEY
    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY

    store = import_module(settings.SESSION_ENGINE).SessionStore()
    store[SESSION_KEY] = str(user.pk)
    store[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[0]
    store[HASH_SESSION_KEY] = user.get_session_auth_hash()
    if second_factor:
        store[AUTHENTICATION_METHODS_SESSION_KEY] = [{"method": "mfa", "at": time.time(), "type": "totp"}]
    store.set_expiry(expiry_s)
    store.create()
    assert store.session_key is not None
    return store.session_key


def sessions_remove(session_keys: list[str]) -> None:
    from importlib import import_module

    from django.conf import settings

    store_class = import_module(settings.SESSION_ENGINE).SessionStore
    for key in session_keys:
        store_class(session_key=key).delete()


@contextlib.contextmanager
def environment(**values: str) -> Iterator[None]:
    """These environment variables set meanwhile (for the processes started), restored afterwards."""
    previous = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in previous.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextlib.contextmanager
def in_namespace(name: str) -> Iterator[None]:
    """This process's topics and keys are those of namespace ``name`` meanwhile."""
    previous = os.environ.get("SPORTSBOOK_NAMESPACE")
    os.environ["SPORTSBOOK_NAMESPACE"] = name
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("SPORTSBOOK_NAMESPACE", None)
        else:
            os.environ["SPORTSBOOK_NAMESPACE"] = previous


@contextlib.contextmanager
def namespace() -> Iterator[str]:
    """A fresh namespace with its own topics, removed afterwards."""
    name = f"bench{uuid.uuid4().hex[:6]}"
    with in_namespace(name):
        from odds.core.kafka import admin_client, topics_ensure
        from reducers.topics import all_topics

        topics_ensure()
        try:
            yield name
        finally:
            admin_client().delete_topics([t.name for t in all_topics()], operation_timeout=30)
            from django.conf import settings

            client = redis_client(settings.REDIS_URL)
            for key in client.scan_iter(match=f"{name}:*", count=1000):
                client.delete(key)


def bench_definitions(count: int, *, first: int = 1) -> list[Any]:
    """Definitions of ``count`` open benchmark markets from ``first`` on, selections 1 and 2."""
    from reducers.schemas import MarketDefinition

    now = int(time.time() * 1000)
    return [
        MarketDefinition(
            market_id=market_id,
            version=1,
            event_id=market_id,
            sport="football",
            competition="Benchmark League",
            event_name=f"Benchmark {market_id}",
            kind="match_winner",
            name="Match winner",
            status="open",
            event_status="scheduled",
            starts_at=now + 3_600_000,
            selections=((1, "Home"), (2, "Away")),
            ts=now,
        )
        for market_id in range(first, first + count)
    ]


def markets_define(producer: Any, redis_client: Any, count: int, *, first: int = 1, timeout: float = 120) -> None:
    """Publish definitions of ``count`` markets from ``first`` on to the markets topic, as the feed does before its
    first prices, and wait until the reducers' markets table holds them all (prices of markets
    the table does not know are dead-lettered)."""
    from reducers import topics
    from store import keys

    ids = range(first, first + count)
    for definition in bench_definitions(count, first=first):
        producer.produce(topics.markets(), key=definition.key(), value=definition.encode())
    producer.flush(30)

    def defined() -> bool:
        pipe = redis_client.pipeline(transaction=False)
        for market_id in ids:
            pipe.exists(keys.market_definition(market_id))
        return all(pipe.execute())

    wait_until(defined, timeout=timeout, what=f"the markets table to hold {count} benchmark markets")


def markets_table_write(redis_client: Any, count: int, *, first: int = 1) -> None:
    """Write the benchmark markets into the markets table directly, through the markets query's
    own processor, for a consumer that runs without the reducers' markets query."""
    from django.conf import settings

    from reducers import topics
    from spark.jobs.markets import MarketTableProcessor
    from spark.sinks.dead_letter import DeadLetterSink

    rows = [
        {"key": d.key(), "value": d.encode(), "partition": 0, "offset": i, "kafka_ts": d.ts}
        for i, d in enumerate(bench_definitions(count, first=first))
    ]
    processor = MarketTableProcessor(
        redis_client=redis_client,
        dead_letters=DeadLetterSink(
            bootstrap_servers=settings.KAFKA_BOOTSTRAP_SERVERS, topic=topics.markets_dead_letter()
        ),
    )
    counts = processor.apply_rows(rows)
    if counts["rejected"]:
        raise RuntimeError(f"benchmark market definitions rejected: {counts}")
