"""Shared fixtures for the real services: one Kafka, one Redis, one PostgreSQL and one
SparkSession per test session. Every topic, key and channel of the session lives under its
own namespace, so tests run beside a running stack without touching it."""

from __future__ import annotations

import contextlib
import os
import subprocess
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from bench.harness import ROOT, free_port, uvicorn_command, wait_until, web_up

os.environ["SPORTSBOOK_NAMESPACE"] = f"t{uuid.uuid4().hex[:8]}"
os.environ.setdefault("SPARK_SHUFFLE_PARTITIONS", "2")
# Playwright's sync API runs an event loop in the test thread; the ORM calls made by the
# tests themselves are still synchronous (Django's documented switch for this case).
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
os.environ.setdefault("KAFKA_PRICES_PARTITIONS", "4")
# The monitoring's fixed loopback ports belong to the stack of `make up`: reducers and brokers a
# test starts serve no metrics there (a test that wants them sets its own ports).
os.environ.setdefault("SPARK_DRIVER_METRICS", "off")
os.environ.setdefault("KAFKA_JMX_LISTEN", "")
# Live states the tests write by hand stay usable for bets as long as a slow test takes (on a
# shared machine a browser test may take longer than the 15 s a production price lives without
# a sign of life from the pipe); the tests of that age set their own (betting/test_live_price_age.py).
os.environ.setdefault("LIVE_PRICE_MAX_AGE_S", "600")


# Every test carries the marker of its group (its folder, or a benchmark's file name), so a
# group runs alone: ``pytest -m reliability``, ``pytest -m "not browser and not bench"``.
FOLDER_GROUPS = ("unit", "browser", "reliability", "security", "betting", "ops", "streaming")
BENCH_FILES = ("test_bench_", "test_soak")
# The runs that are loads in their own right (every benchmark stage end to end, a minute of soak):
# `make bench-check` and `make bench` run them, `make test` leaves them out (pyproject's addopts).
LOAD_FILES = ("test_bench_quick", "test_soak")


def groups_of(path: Path) -> list[str]:
    """The group markers of the test file at ``path``."""
    groups = [part for part in path.relative_to(ROOT / "tests").parts[:-1] if part in FOLDER_GROUPS]
    if path.name.startswith(BENCH_FILES):
        groups.append("bench")
    if path.name.startswith(LOAD_FILES):
        groups.append("load")
    return groups


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        for group in groups_of(Path(item.path)):
            item.add_marker(group)


def _start_service(name: str) -> None:
    subprocess.run([str(ROOT / "infra" / "bin" / f"{name}.sh"), "start"], check=True, capture_output=True)


@pytest.fixture(scope="session")
def services() -> None:
    """Kafka, Redis, PostgreSQL and the mail catcher are running (started here when nothing
    listens yet)."""
    for name in ("kafka", "redis", "postgres", "mailpit"):
        _start_service(name)


@pytest.fixture(scope="session")
def django_db_modify_db_settings(services) -> None:
    """The test database lives on the real PostgreSQL; make sure it runs first.

    Its name carries the session's namespace, so test sessions running side by side (or
    beside a running stack) never share a database.
    """
    from django.conf import settings

    default = settings.DATABASES["default"]
    test = cast(dict[str, Any], default.setdefault("TEST", {}))
    test["NAME"] = f"test_{default['NAME']}_{os.environ['SPORTSBOOK_NAMESPACE']}"


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker) -> Iterator[None]:
    """pytest-django's test database; before it is dropped, every other connection to it is
    ended (PostgreSQL refuses to drop a database in use): the in-process ASGI application's
    asyncio pool, where a websocket's handshake reads its user, and the Django connections of the
    threads that tests and Channels ran database work in."""
    yield
    from django.db import connection

    others = "FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute(f"SELECT pg_terminate_backend(pid) {others}")

        def ended() -> bool:
            cursor.execute(f"SELECT count(*) {others}")
            return cursor.fetchone()[0] == 0

        wait_until(ended, timeout=10, what="the test database's other connections to end")


@pytest.fixture(scope="session")
def kafka_topics(services) -> Iterator[dict[str, str]]:
    from odds.core.kafka import admin_client, topics_ensure
    from reducers.topics import all_topics

    outcome = topics_ensure()
    yield outcome
    futures = admin_client().delete_topics([t.name for t in all_topics()], operation_timeout=30)
    for future in futures.values():
        future.result()


@pytest.fixture
def own_namespace(kafka_topics, redis_client, monkeypatch) -> Iterator[str]:
    """Topics and keys of one test's own, under a namespace of its own: for a test that must not
    share a topic with the session's running reducers (which would read, dead-letter or count its
    records too) or with other tests' records (which it would count as its own)."""
    from odds.core.kafka import admin_client, topics_ensure
    from reducers.topics import all_topics

    name = f"{os.environ['SPORTSBOOK_NAMESPACE']}o{uuid.uuid4().hex[:6]}"
    monkeypatch.setenv("SPORTSBOOK_NAMESPACE", name)
    topics_ensure()
    yield name
    for future in admin_client().delete_topics([t.name for t in all_topics()], operation_timeout=30).values():
        future.result()
    for key in redis_client.scan_iter(match=f"{name}:*", count=1000):
        redis_client.delete(key)


@pytest.fixture(scope="session")
def redis_client(services):
    import redis
    from django.conf import settings

    client = redis.Redis.from_url(settings.REDIS_URL)
    yield client
    namespace = os.environ["SPORTSBOOK_NAMESPACE"]
    for key in client.scan_iter(match=f"{namespace}:*", count=1000):
        client.delete(key)


@pytest.fixture(scope="session")
def spark(services):
    from spark.session import build_session

    session = build_session("sportsbook-tests", master="local[4]")
    yield session
    session.stop()


def wait_for(
    predicate,
    *,
    timeout: float = 60.0,
    interval: float = 0.2,
    what: str = "condition",
    detail: Callable[[], object] | None = None,
):
    """Poll until ``predicate()`` returns a truthy value; fail with ``what`` after ``timeout``,
    and with what ``detail()`` says of the state then when it is given."""
    try:
        return wait_until(predicate, timeout=timeout, interval=interval, what=what)
    except TimeoutError as exc:
        pytest.fail(str(exc) if detail is None else f"{exc}: {detail()}")


# Reducer queries the session starts only for the tests that need them.
ON_DEMAND_QUERIES = ("game",)


@pytest.fixture(scope="session")
def reducers_running(spark, kafka_topics, redis_client, tmp_path_factory):
    """Every reducer query but ``ON_DEMAND_QUERIES`` (markets, commands, prices in micro-batch, …)
    in the session's SparkSession, with the progress listener that writes lag to Redis and
    commits offsets to Kafka."""
    from django.conf import settings

    from spark.jobs.reducers import COMPONENT, starters
    from spark.progress import RedisProgressListener

    listener = RedisProgressListener(redis_client, COMPONENT, bootstrap=settings.KAFKA_BOOTSTRAP_SERVERS)
    spark.streams.addListener(listener)
    found = starters(
        spark,
        bootstrap=settings.KAFKA_BOOTSTRAP_SERVERS,
        redis_url=settings.REDIS_URL,
        checkpoint_root=tmp_path_factory.mktemp("checkpoints"),
        mode="microbatch",
    )
    # The game query (stateful, with Python workers of its own) runs only while the tests that
    # play the game run (``game_running``), not beside every other test on two cores.
    queries = {name: start() for name, start in found.items() if name not in ON_DEMAND_QUERIES}
    yield queries
    for query in queries.values():
        query.stop()
    spark.streams.removeListener(listener)


@pytest.fixture(scope="session")
def price_query(reducers_running):
    return reducers_running["prices"]


@pytest.fixture(scope="session")
def producer(kafka_topics):
    from odds.core.kafka import producer_create

    p = producer_create(**{"linger.ms": 0})
    yield p
    p.flush(10)


@contextlib.contextmanager
def uvicorn_serving(log_dir: Path, **extra_env: str) -> Iterator[str]:
    """The real ASGI application under uvicorn, on the test database and namespace, with
    ``extra_env`` on top of the session's environment; yields its base URL."""
    from django.conf import settings

    db = settings.DATABASES["default"]
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}:{db['PASSWORD']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
        "DJANGO_CSRF_TRUSTED_ORIGINS": f"http://127.0.0.1:{port}",
        "PYTHONUNBUFFERED": "1",
        **extra_env,
    }
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    log = (log_dir / "uvicorn.log").open("wb")
    process = subprocess.Popen(
        uvicorn_command(port, ws_max_size=settings.WS_MAX_FRAME_BYTES),
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:

        def up() -> bool:
            return web_up(url, timeout=1) or (process.poll() is not None and pytest.fail("uvicorn exited; see its log"))

        wait_for(up, timeout=60, what="the ASGI server")
        yield url
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


@pytest.fixture(scope="session")
def asgi_server(django_db_setup, django_db_blocker, tmp_path_factory) -> Iterator[str]:
    """The real ASGI application under uvicorn, on the test database and namespace."""
    with uvicorn_serving(tmp_path_factory.mktemp("asgi")) as url:
        yield url


CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


@pytest.fixture(scope="module")
def browser():
    """Chromium for one test module; closing it also ends Playwright's event loop in this thread."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        instance = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS)
        yield instance
        instance.close()


@pytest.fixture
def page(browser):
    context = browser.new_context()
    page = context.new_page()
    yield page
    context.close()
