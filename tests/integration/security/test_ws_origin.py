"""The websocket handshake compares the Origin's scheme, host and port with the site's own origin
and ``CSRF_TRUSTED_ORIGINS``: a page of another port or scheme on the same host cannot open a
websocket with the visitor's session cookie. Tested against the real uvicorn."""

from __future__ import annotations

import asyncio
import json
from urllib.parse import urlsplit

import pytest
import websockets
from websockets.typing import Origin

from tests.factories import user_create
from tests.integration.reliability.clients import session_for
from webapp.origins import origin_allowed

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def _handshake(server: str, origin: str | None, cookie: str) -> str:
    """``"accepted"`` with the hello frame, or the HTTP status of the refused handshake."""
    url = server.replace("http://", "ws://", 1) + "/ws/odds/"

    async def attempt() -> str:
        try:
            async with websockets.connect(
                url,
                origin=Origin(origin) if origin is not None else None,
                additional_headers={"Cookie": cookie},
                open_timeout=10,
            ) as ws:
                hello = json.loads(await asyncio.wait_for(ws.recv(), 10))
                return "accepted" if hello["type"] == "hello" else f"unexpected {hello['type']}"
        except websockets.InvalidStatus as refused:
            return str(refused.response.status_code)

    return asyncio.run(attempt())


@pytest.fixture
def cookie(asgi_server):
    return session_for(asgi_server, user_create()).cookie


def test_the_sites_own_origin_is_accepted(asgi_server, cookie):
    assert _handshake(asgi_server, asgi_server, cookie) == "accepted"


def _with(server: str, *, scheme: str | None = None, host: str | None = None, port: int | None = None) -> str:
    parts = urlsplit(server)
    return f"{scheme or parts.scheme}://{host or parts.hostname}:{port or parts.port}"


@pytest.mark.parametrize(
    "variant",
    [
        {"port": 6666},
        {"scheme": "https"},
        {"host": "localhost"},
        {"host": "127.0.0.1.evil.example"},
    ],
)
def test_another_scheme_port_or_host_is_refused(asgi_server, cookie, variant):
    assert _handshake(asgi_server, _with(asgi_server, **variant), cookie) == "403"


@pytest.mark.parametrize("origin", ["http://127.0.0.1", "null", "http://127.0.0.1:notaport", "file://", ""])
def test_a_default_port_malformed_or_opaque_origin_is_refused(asgi_server, cookie, origin):
    assert _handshake(asgi_server, origin, cookie) == "403"


def test_a_handshake_without_an_origin_is_refused(asgi_server, cookie):
    assert _handshake(asgi_server, None, cookie) == "403"


def _scope(origin: str, host: str = "127.0.0.1:8000", scheme: str = "ws") -> dict:
    return {"type": "websocket", "scheme": scheme, "headers": [(b"origin", origin.encode()), (b"host", host.encode())]}


def test_without_trusted_origins_the_requests_own_origin_on_an_allowed_host_is_accepted(settings):
    settings.CSRF_TRUSTED_ORIGINS = []
    settings.ALLOWED_HOSTS = ["127.0.0.1"]
    assert origin_allowed(_scope("http://127.0.0.1:8000"))
    assert origin_allowed(_scope("https://127.0.0.1:8443", host="127.0.0.1:8443", scheme="wss"))
    assert not origin_allowed(_scope("http://127.0.0.1:6666"))
    assert not origin_allowed(_scope("https://127.0.0.1:8000"))
    assert not origin_allowed(_scope("http://evil.example:8000", host="evil.example:8000"))


def test_a_trusted_origin_with_a_subdomain_wildcard_matches_subdomains_on_its_scheme_and_port(settings):
    settings.CSRF_TRUSTED_ORIGINS = ["https://*.sportsbook.example"]
    assert origin_allowed(_scope("https://www.sportsbook.example", host="internal:8000"))
    assert not origin_allowed(_scope("http://www.sportsbook.example", host="internal:8000"))
    assert not origin_allowed(_scope("https://www.sportsbook.example:444", host="internal:8000"))
    assert not origin_allowed(_scope("https://evilsportsbook.example", host="internal:8000"))
