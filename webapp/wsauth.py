"""Session and user for websockets, without wrapping ``send``.

Channels' ``SessionMiddleware`` wraps ``send`` to save a modified session with an HTTP response;
on a websocket that check runs for every frame sent and never saves anything (a websocket
carries no response to put a cookie on), yet it read two lazy session properties per frame,
about a fifth of the edge's CPU under load. Here the session is resolved once, at connect, read
only, and frames go straight to the server.
"""

from __future__ import annotations

from typing import Any

from channels.auth import AuthMiddleware
from channels.sessions import CookieMiddleware, InstanceSessionWrapper


class WebsocketSessionMiddleware:
    """The scope's ``session`` from the session cookie (needs ``CookieMiddleware`` above it)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        wrapper = InstanceSessionWrapper(scope, send)
        await wrapper.resolve_session()
        return await self.inner(wrapper.scope, receive, send)


def WebsocketAuthStack(inner: Any) -> Any:  # noqa: N802 - named like Channels' AuthMiddlewareStack
    """Cookies, the session (read only) and ``scope["user"]`` for a websocket application."""
    return CookieMiddleware(WebsocketSessionMiddleware(AuthMiddleware(inner)))
