"""The caching proxy in front of the site (nginx from infra/conf/nginx.conf.in, the CDN's stand-in)
against the real ASGI server: a burst of view-snapshot loads reaches Django about once per max-age,
cookies never reach the origin, and websockets pass through."""

from __future__ import annotations

import concurrent.futures
import gzip
import json
import math
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from django.conf import settings

from bench.harness import free_port
from tests.factories import live_state_write, market_create

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[3]
BURST = 1_000
THREADS = 16


@pytest.fixture
def proxy(asgi_server, tmp_path) -> Iterator[tuple[str, Path]]:
    """nginx in front of the session's ASGI server; yields its URL and its access log."""
    listen = f"127.0.0.1:{free_port()}"
    env = {
        **os.environ,
        "SPORTSBOOK_VAR": str(tmp_path),
        "PROXY_LISTEN": listen,
        "PROXY_UPSTREAM": asgi_server.removeprefix("http://"),
    }
    script = ROOT / "infra" / "bin" / "nginx.sh"
    subprocess.run([str(script), "start"], env=env, check=True, capture_output=True, timeout=60)
    try:
        yield f"http://{listen}", tmp_path / "log" / "nginx-access.log"
    finally:
        subprocess.run([str(script), "stop"], env=env, check=True, capture_output=True, timeout=60)


def _origin_requests(log: Path, path: str) -> int:
    """Requests of ``path`` the proxy passed to the origin (the others it answered from its cache)."""
    lines = [line for line in log.read_text().splitlines() if f'"GET {path} ' in line]
    return sum(1 for line in lines if "upstream=-" not in line)


def test_a_burst_of_snapshot_loads_reaches_the_origin_about_once_per_max_age(proxy, redis_client):
    url, log = proxy
    market = market_create()
    live_state_write(redis_client, market, prices=("2.10", "3.40", "3.50"), seq=4)

    session = requests.Session()
    started = time.monotonic()

    def load(_: int) -> tuple[int, str]:
        response = requests.get(f"{url}/api/views/home", timeout=30)
        return response.status_code, response.headers.get("ETag", "")

    with concurrent.futures.ThreadPoolExecutor(THREADS) as pool:
        answers = list(pool.map(load, range(BURST)))
    elapsed = time.monotonic() - started
    session.close()
    time.sleep(0.5)  # the access log line of the last answers

    assert {status for status, _ in answers} == {200}
    origin = _origin_requests(log, "/api/views/home")
    # One fetch per max-age, plus a background refresh that can land in the next period.
    allowed = math.ceil(elapsed / settings.VIEW_SNAPSHOT_MAX_AGE_S) + 1
    print(f"{BURST} loads in {elapsed:.1f} s reached the origin {origin} times (allowed {allowed})")
    assert 1 <= origin <= allowed
    assert origin * 1000 / BURST <= 10 or elapsed > 10 * settings.VIEW_SNAPSHOT_MAX_AGE_S


def test_the_proxy_sends_no_cookie_to_the_origin_and_answers_again_from_its_cache(proxy, redis_client):
    url, log = proxy
    market = market_create()
    live_state_write(redis_client, market, prices=("2.10", "3.40", "3.50"), seq=4)
    path = f"/api/views/event/{market.event_id}"
    first = requests.get(url + path, cookies={"sessionid": "someone", "csrftoken": "x"}, timeout=30)
    second = requests.get(url + path, timeout=30)
    assert (first.status_code, second.status_code) == (200, 200)
    assert first.headers["X-Cache"] == "MISS"
    assert second.headers["X-Cache"] == "HIT"
    assert first.content == second.content
    assert "Set-Cookie" not in first.headers
    time.sleep(0.5)
    assert _origin_requests(log, path) == 1


def test_websockets_pass_through_the_proxy(proxy, redis_client):
    from websockets.sync.client import connect

    url, _ = proxy
    market = market_create()
    live_state_write(redis_client, market, prices=("2.10", "3.40", "3.50"), seq=4)
    ws_url = url.replace("http://", "ws://") + "/ws/odds/"
    with connect(ws_url, origin=url, open_timeout=10) as ws:
        assert json.loads(ws.recv(timeout=10))["type"] == "hello"
        ws.send(json.dumps({"type": "watch", "markets": [market.id], "since": {str(market.id): [3, "open"]}}))
        image = json.loads(ws.recv(timeout=10))
    assert [(m["market_id"], m["seq"]) for m in image["markets"]] == [(market.id, 4)]


def test_a_burst_of_anonymous_page_loads_reaches_the_origin_about_once_per_max_age(proxy, redis_client):
    url, log = proxy
    market = market_create()
    live_state_write(redis_client, market, prices=("2.10", "3.40", "3.50"), seq=4)
    path = "/sport/football/"
    started = time.monotonic()

    def load(n: int) -> tuple[int, bool]:
        # Some visitors carry a CSRF cookie of an earlier visit: they share the same copy.
        cookies = {"csrftoken": f"token-of-visitor-{n:026d}"} if n % 2 else {}
        response = requests.get(url + path, cookies=cookies, timeout=30)
        return response.status_code, f'data-market="{market.id}"' in response.text

    with concurrent.futures.ThreadPoolExecutor(THREADS) as pool:
        answers = list(pool.map(load, range(BURST)))
    elapsed = time.monotonic() - started
    time.sleep(0.5)

    assert set(answers) == {(200, True)}
    origin = _origin_requests(log, path)
    allowed = math.ceil(elapsed / settings.VIEW_SNAPSHOT_MAX_AGE_S) + 1
    print(f"{BURST} page loads in {elapsed:.1f} s reached the origin {origin} times (allowed {allowed})")
    assert 1 <= origin <= allowed


def test_a_logged_in_punters_page_always_comes_from_the_origin_and_is_never_shared(proxy, redis_client, client):
    from tests.factories import user_create

    url, log = proxy
    market = market_create()
    live_state_write(redis_client, market, prices=("2.10", "3.40", "3.50"), seq=4)
    user = user_create(balance="25.00")
    client.force_login(user)
    session = {settings.SESSION_COOKIE_NAME: client.cookies[settings.SESSION_COOKIE_NAME].value}
    path = f"/event/{market.event_id}/"

    personal = [requests.get(url + path, cookies=session, timeout=30) for _ in range(2)]
    anonymous = requests.get(url + path, timeout=30)
    for response in personal:
        assert response.status_code == 200
        assert response.headers["X-Cache"] == "BYPASS"
        assert f'data-user="{user.username}"' in response.text
    # The personal page was not stored: the visitor who is not logged in is not shown it.
    assert anonymous.headers["X-Cache"] == "MISS"
    assert 'data-user=""' in anonymous.text
    assert user.username not in anonymous.text
    time.sleep(0.5)
    assert _origin_requests(log, path) == 3


def test_the_login_form_posts_through_the_proxy_with_its_csrf_cookie(proxy):
    from tests.factories import user_create

    url, _ = proxy
    user = user_create()
    browser = requests.Session()
    form = browser.get(f"{url}/login/", timeout=30)
    assert form.status_code == 200
    assert form.headers["X-Cache"] != "HIT"
    token = browser.cookies["csrftoken"]
    answer = browser.post(
        f"{url}/login/",
        data={"username": user.username, "password": "pw-for-tests", "csrfmiddlewaretoken": token},
        headers={"Referer": f"{url}/login/"},
        allow_redirects=False,
        timeout=30,
    )
    assert answer.status_code == 302, answer.text[:500]
    assert settings.SESSION_COOKIE_NAME in browser.cookies
    page = browser.get(f"{url}/", timeout=30)
    assert page.headers["X-Cache"] == "BYPASS"
    assert f'data-user="{user.username}"' in page.text


def test_the_proxy_names_the_session_cookie_the_site_uses():
    conf = (ROOT / "infra" / "conf" / "nginx.conf.in").read_text()
    assert f"$cookie_{settings.SESSION_COOKIE_NAME}" in conf


def test_the_proxy_compresses_pages_and_snapshots_for_clients_that_accept_it(proxy, redis_client):
    url, _ = proxy
    for _ in range(5):  # documents above the smallest size worth compressing
        live_state_write(redis_client, market_create(), prices=("2.10", "3.40", "3.50"), seq=4)
    for path in ("/sport/football/", "/api/views/sport/football"):
        plain = requests.get(url + path, headers={"Accept-Encoding": "identity"}, timeout=30)
        packed = requests.get(url + path, headers={"Accept-Encoding": "gzip"}, timeout=30, stream=True)
        wire = packed.raw.read(decode_content=False)
        assert packed.headers.get("Content-Encoding") == "gzip", path
        assert "Accept-Encoding" in packed.headers.get("Vary", "")
        assert gzip.decompress(wire) == plain.content
        assert len(wire) < len(plain.content)
