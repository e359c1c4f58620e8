"""The websocket handshake's Origin check: scheme, host and port all compared.

Channels' ``AllowedHostsOriginValidator`` compares host names only, so a page served from
``http://127.0.0.1:6666`` (another program on the same machine) or over another scheme could
open a websocket with the visitor's session cookie. As Django's CSRF origin check does, an
origin is allowed when it is the request's own (the scheme of the connection, the ``Host``
header's host and port, that host in ``ALLOWED_HOSTS``) or one of ``CSRF_TRUSTED_ORIGINS``
(the origins the site is served from, e.g. behind a TLS proxy).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http.request import split_domain_port, validate_host

DEFAULT_PORTS = {"http": 80, "https": 443}
# The page scheme a websocket scheme belongs to.
PAGE_SCHEME = {"ws": "http", "wss": "https"}


@dataclass(frozen=True)
class Origin:
    scheme: str
    host: str
    port: int

    def matches(self, pattern: Origin) -> bool:
        """``pattern`` may name subdomains with a leading ``*.`` (as CSRF_TRUSTED_ORIGINS may)."""
        if (self.scheme, self.port) != (pattern.scheme, pattern.port):
            return False
        if pattern.host.startswith("*."):
            return self.host.endswith(pattern.host[1:])
        return self.host == pattern.host


def origin_parse(text: str) -> Origin | None:
    """``scheme://host[:port]`` with scheme http or https, nothing after it; else None."""
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname or parts.path not in ("", "/"):
        return None
    if parts.query or parts.fragment or parts.username is not None or parts.password is not None:
        return None
    return Origin(parts.scheme, parts.hostname.lower(), port or DEFAULT_PORTS[parts.scheme])


def _header(scope: dict[str, Any], name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return bytes(value).decode("latin1")
    return None


def _own_origin(scope: dict[str, Any], host_header: str) -> Origin | None:
    scheme = PAGE_SCHEME.get(scope.get("scheme", "ws"), "http")
    return origin_parse(f"{scheme}://{host_header}")


def origin_allowed(scope: dict[str, Any]) -> bool:
    """Whether the websocket handshake of ``scope`` comes from a page of this site."""
    raw = _header(scope, b"origin")
    origin = origin_parse(raw) if raw else None
    if origin is None:
        return False
    host_header = _header(scope, b"host") or ""
    domain, _ = split_domain_port(host_header)
    if domain and validate_host(domain, settings.ALLOWED_HOSTS) and origin == _own_origin(scope, host_header):
        return True
    trusted = (origin_parse(item) for item in settings.CSRF_TRUSTED_ORIGINS)
    return any(pattern is not None and origin.matches(pattern) for pattern in trusted)


class OriginValidator:
    """ASGI middleware: a websocket handshake from an origin not allowed is denied (403)."""

    def __init__(self, application: Any) -> None:
        self.application = application

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        if scope["type"] == "websocket" and not origin_allowed(scope):
            return await WebsocketDenier()(scope, receive, send)
        return await self.application(scope, receive, send)
