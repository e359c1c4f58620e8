"""Browser-test helpers: the built frontend, logged-in pages, prices produced to Kafka."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page

from reducers.schemas import PriceUpdate
from tests.factories import sign_in

ROOT = Path(__file__).resolve().parents[2]
FRONTEND = ROOT / "frontend"
BUNDLE = ROOT / "odds" / "static" / "odds" / "dist" / "app.js"


@pytest.fixture(scope="session", autouse=True)
def frontend_built() -> None:
    """Build the bundle when it is missing or older than its sources (tests must run today's code)."""
    sources = [*FRONTEND.joinpath("src").rglob("*.ts"), FRONTEND / "package.json"]
    newest = max(path.stat().st_mtime for path in sources)
    if not BUNDLE.exists() or BUNDLE.stat().st_mtime < newest:
        subprocess.run(["npm", "run", "-s", "build"], cwd=FRONTEND, check=True, capture_output=True)


@pytest.fixture
def login(page: Page, asgi_server: str) -> Callable[..., User]:
    """Log a user into the browser context through a real session (no form round trip)."""
    from django.test import Client

    def log_in(user: User) -> User:
        client = Client()
        sign_in(client, user)
        session = client.cookies["sessionid"].value
        page.context.add_cookies([{"name": "sessionid", "value": session, "url": asgi_server}])
        return user

    return log_in


@pytest.fixture(scope="module")
def asgi_server_not_debug(tmp_path_factory, django_db_setup, django_db_blocker):
    """The ASGI application with DEBUG off, as in production (the site's own 404 page instead of
    Django's debug page), its static files still served from the sources."""
    from tests.conftest import uvicorn_serving

    with uvicorn_serving(
        tmp_path_factory.mktemp("asgi-not-debug"), DJANGO_DEBUG="0", WHITENOISE_USE_FINDERS="1"
    ) as url:
        yield url


@pytest.fixture
def publish(producer, redis_client) -> Callable[..., None]:
    """Produce price updates to the price topic and wait for the broker's acknowledgement; their
    markets are put in the markets table first, as the feed's definitions precede its prices."""
    from odds.catalogue.models import Market
    from reducers import topics
    from tests.factories import markets_define

    def send(*updates: PriceUpdate) -> None:
        markets_define(redis_client, *Market.objects.filter(id__in={update.market_id for update in updates}))
        for update in updates:
            producer.produce(topics.prices(), key=update.key(), value=update.encode())
        assert producer.flush(10) == 0

    return send


@pytest.fixture(scope="session")
def celery_worker(asgi_server):
    """A real Celery worker on the test database and namespace (its queue is the session's own)."""
    import os
    import signal
    import subprocess

    from django.conf import settings

    from tests.conftest import ROOT

    db = settings.DATABASES["default"]
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}:{db['PASSWORD']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    process = subprocess.Popen(
        [
            str(ROOT / ".venv" / "bin" / "celery"),
            "-A",
            "webapp",
            "worker",
            "-l",
            "WARNING",
            "--concurrency",
            "1",
            "-n",
            f"test-{os.environ['SPORTSBOOK_NAMESPACE']}@%h",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    yield process
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
