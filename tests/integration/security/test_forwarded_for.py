"""The client's address behind a proxy: ``X-Forwarded-For`` is believed only from the proxies in
``TRUSTED_PROXIES``, through the server `make up` runs (``python -m webapp.serve``). A direct
client cannot choose its address: per-address limits and the loopback-only ``/metrics`` see the
peer. A configured proxy passes its clients' own addresses on, so one attacker behind it does not
lock every client out."""

from __future__ import annotations

import urllib.error
import urllib.parse
import urllib.request
import uuid

import pytest

from store import keys
from tests.integration.streaming.test_serve import serve, stop

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]


def _login_failures(base: str, *, forwarded_for: str) -> int:
    """One failed login (a username no one has) sent with ``X-Forwarded-For``; its status."""
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
    with opener.open(f"{base}/login/", timeout=20) as page:
        token = page.read().decode().split('name="csrfmiddlewaretoken" value="', 1)[1].split('"', 1)[0]
    body = urllib.parse.urlencode(
        {"username": f"nobody-{uuid.uuid4().hex[:8]}", "password": "wrong", "csrfmiddlewaretoken": token}
    ).encode()
    request = urllib.request.Request(f"{base}/login/", body, headers={"X-Forwarded-For": forwarded_for})  # noqa: S310 - loopback
    try:
        with opener.open(request, timeout=20) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


@pytest.fixture
def counters_cleared(redis_client):
    yield
    for key in redis_client.keys(f"{keys.rate_limits()}:login_*"):
        redis_client.delete(key)


def test_a_direct_client_cannot_choose_its_address_with_x_forwarded_for(services, tmp_path, counters_cleared):
    served = serve(tmp_path, workers=1, LOGIN_FAILURES_PER_IP="3")
    try:
        codes = [_login_failures(served.base, forwarded_for=f"203.0.113.{n}") for n in range(1, 5)]
    finally:
        stop(served)
    # Every attempt counts against the peer's own address, whatever the header claims.
    assert codes == [200, 200, 200, 429]


def test_a_trusted_proxy_passes_on_each_clients_own_address(services, tmp_path, counters_cleared):
    served = serve(tmp_path, workers=1, LOGIN_FAILURES_PER_IP="3", TRUSTED_PROXIES="127.0.0.1")
    try:
        attacker = [_login_failures(served.base, forwarded_for="198.51.100.7") for _ in range(4)]
        neighbour = _login_failures(served.base, forwarded_for="198.51.100.8")
    finally:
        stop(served)
    assert attacker == [200, 200, 200, 429]
    assert neighbour == 200
