"""The websocket routes, and the router that serves them."""

from __future__ import annotations

from typing import Any

from channels.security.websocket import WebsocketDenier
from django.urls import URLPattern, path

from odds.streaming.consumers import OddsConsumer

websocket_urlpatterns = [
    path("ws/odds/", OddsConsumer.as_asgi()),
]


class SocketRouter:
    """Channels' ``URLRouter`` for a flat list of ``path()`` routes, with ``scope["url_route"]``
    set in place rather than on a copy of the scope (the copy stays alive as long as the socket:
    0.7 KiB each, see ``webapp.wsauth``). A path no route matches is denied (the handshake gets
    403) instead of failing with a server error."""

    def __init__(self, routes: list[URLPattern]) -> None:
        self.routes = routes

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        root = scope.get("root_path", "")
        wanted = scope["path"]
        wanted = wanted[len(root) :] if root and wanted.startswith(root) else wanted
        wanted = wanted.lstrip("/")
        for route in self.routes:
            match = route.pattern.match(wanted)
            if match:
                _, args, kwargs = match
                scope["url_route"] = {"args": args, "kwargs": {**kwargs, **route.default_args}}
                return await route.callback(scope, receive, send)
        return await WebsocketDenier()(scope, receive, send)
