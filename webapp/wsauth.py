"""Session and user for websockets: read once, at the handshake, on the event loop.

A handshake with a session cookie reads the session from Redis and the user's row through the
web process's asyncio pool (``odds.accounts.sessions``, the rules of Django's ``get_user``; the
row kept per process for ``BET_AUTH_CACHE_S``). Channels' own ``AuthMiddleware`` (the session
through Django's cache in a thread, the user through the ORM in Channels' one database thread)
reads only what that path leaves to Django: a session not in Redis, a hash only a fallback
secret matches, a user gone, the pool saturated or away. At a storm of handshakes Channels' path
was the largest share of a web process's time.

Channels' ``SessionMiddleware`` is not used: it wraps ``send`` to save a modified session with an
HTTP response, and on a websocket that check ran for every frame sent and never saved anything
(a websocket carries no response to put a cookie on) while reading two lazy session properties per
frame, about a fifth of the edge's CPU under load. The session here is read only.

The keys these add go into the scope in place, not into a copy. ASGI asks middleware to copy a
scope it changes, lest the change leak to the server above; but each copy is held by its
middleware's frame for the life of the socket (0.7 KiB a copy, on every socket), and the scope
above is the server's own for this one connection, which never reads the keys added
(``cookies``, ``session``, ``user``, ``second_factor``; ``handshake_done`` from
``webapp.admission`` and ``url_route`` from ``odds.streaming.routing.SocketRouter`` likewise).

The scope also says whether the session used a second factor (``scope["second_factor"]``): the
staff's desk channels need one, as staff pages do (``odds.accounts.gate``).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

import psycopg
from channels.auth import AuthMiddleware
from channels.db import database_sync_to_async
from channels.sessions import InstanceSessionWrapper
from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.http.cookie import parse_cookie
from redis import RedisError

from odds.accounts.sessions import Connection, SessionUnknown, SessionUsers, second_factor_used
from odds.api.schemas.common import ApiError


class _DjangoSecondFactor:
    """After Channels' ``AuthMiddleware``: ``scope["second_factor"]`` from the session it loaded
    (read only for staff: nobody else needs it)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        user = scope.get("user")
        staff = bool(user is not None and user.is_authenticated and user.is_staff)
        scope["second_factor"] = staff and await database_sync_to_async(second_factor_used)(scope["session"])
        return await self.inner(scope, receive, send)


class _DjangoSession:
    """Channels' path: the scope's ``session`` from the cookie (read only), then ``AuthMiddleware``."""

    def __init__(self, inner: Any) -> None:
        self.inner = AuthMiddleware(_DjangoSecondFactor(inner))

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        wrapper = InstanceSessionWrapper(scope, send)
        await wrapper.resolve_session()
        return await self.inner(wrapper.scope, receive, send)


class Cookies:
    """``scope["cookies"]``: Channels' ``CookieMiddleware``, set in place."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        header = next((value for name, value in scope.get("headers", ()) if name == b"cookie"), None)
        scope["cookies"] = parse_cookie(header.decode("latin1")) if header is not None else {}
        return await self.inner(scope, receive, send)


class WebsocketSessionAuth:
    """``scope["session"]``, ``scope["user"]`` and ``scope["second_factor"]`` (needs
    ``Cookies`` above it). Without ``connection`` every session goes Channels' way."""

    def __init__(self, inner: Any, connection: Connection | None) -> None:
        self.inner = inner
        self.django = _DjangoSession(inner)
        self.auth = SessionUsers(connection) if connection is not None else None
        self.store = import_module(settings.SESSION_ENGINE).SessionStore

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        session_key = scope["cookies"].get(settings.SESSION_COOKIE_NAME)
        if not session_key:
            scope.update(session=self.store(None), user=AnonymousUser(), second_factor=False)
            return await self.inner(scope, receive, send)
        if self.auth is None:
            return await self.django(scope, receive, send)
        try:
            read = await self.auth.session_read(session_key)
            user = await self.auth.session_verify(session_key, read)
        except (SessionUnknown, RedisError, psycopg.Error, ApiError):
            return await self.django(scope, receive, send)
        scope.update(session=self.store(session_key), user=user.model(), second_factor=read.second_factor)
        return await self.inner(scope, receive, send)


def WebsocketAuthStack(inner: Any, connection: Connection | None = None) -> Any:  # noqa: N802 - named like Channels' AuthMiddlewareStack
    """Cookies, the session (read only), ``scope["user"]`` and ``scope["second_factor"]`` for a
    websocket application; ``connection``: the process's asyncio pool (``PlacementEndpoint``)."""
    return Cookies(WebsocketSessionAuth(inner, connection))
