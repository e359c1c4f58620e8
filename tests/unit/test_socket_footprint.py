"""What each open socket holds (docs/performance.md, "Memory per socket"): the scope passed on,
not copied, by every middleware of the websocket stack; no task of its own while it waits for its
client; a writer's wake-up without a deque; the watched markets in a compact set."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from channels.exceptions import StopConsumer
from django.conf import settings
from django.contrib.auth.models import AnonymousUser

from odds.streaming.consumers import OddsConsumer, Wake
from odds.streaming.session import Limits, Session
from webapp.admission import HandshakeAdmission
from webapp.wsauth import WebsocketAuthStack


class Seen:
    """An application that keeps the scope it was given."""

    def __init__(self) -> None:
        self.scope: dict[str, Any] | None = None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        self.scope = scope
        if "handshake_done" in scope:
            scope["handshake_done"]()


async def test_the_websocket_stack_adds_its_keys_to_the_scope_it_was_given() -> None:
    inner = Seen()
    stack = HandshakeAdmission(WebsocketAuthStack(inner), at_once=4, wait_s=1.0)
    scope: dict[str, Any] = {"type": "websocket", "path": "/ws/odds/", "headers": [(b"cookie", b"theme=dark; lang=en")]}

    await stack(scope, None, None)

    assert inner.scope is scope, "a middleware passed on a copy: each copy stays alive as long as the socket"
    assert scope["cookies"] == {"theme": "dark", "lang": "en"}
    assert isinstance(scope["user"], AnonymousUser)
    assert scope["second_factor"] is False
    assert scope["session"].session_key is None
    assert callable(scope["handshake_done"])


async def test_a_scope_without_a_cookie_header_has_no_cookies() -> None:
    inner = Seen()
    scope: dict[str, Any] = {"type": "websocket", "path": "/ws/odds/", "headers": [(b"origin", b"http://127.0.0.1")]}

    await WebsocketAuthStack(inner)(scope, None, None)

    assert inner.scope is scope
    assert scope["cookies"] == {}
    assert not scope["user"].is_authenticated


async def test_a_socket_waiting_for_its_client_holds_no_task_of_its_own() -> None:
    messages: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    dispatched: list[str] = []
    tasks_while_waiting: list[int] = []

    class Recording(OddsConsumer):
        async def dispatch(self, message: dict[str, Any]) -> None:
            dispatched.append(message["type"])
            if message["type"] == "websocket.disconnect":
                raise StopConsumer

    async def receive() -> dict[str, Any]:
        tasks_while_waiting.append(len(asyncio.all_tasks() - before - {socket}))
        return await messages.get()

    before = asyncio.all_tasks()
    socket = asyncio.create_task(Recording()({"type": "websocket"}, receive, None))
    for message in ({"type": "websocket.connect"}, {"type": "websocket.receive"}, {"type": "websocket.disconnect"}):
        await messages.put(message)
    await asyncio.wait_for(socket, timeout=5)

    assert dispatched == ["websocket.connect", "websocket.receive", "websocket.disconnect"]
    # No task but the socket's own: Channels' loop added one per receive.
    assert tasks_while_waiting == [0, 0, 0]


async def test_the_writers_wake_up_wakes_a_waiter_and_is_cleared() -> None:
    wake = Wake()
    waiter = asyncio.create_task(wake.wait())
    await asyncio.sleep(0)
    assert not waiter.done()

    wake.set()
    await asyncio.wait_for(waiter, timeout=1)
    assert wake.is_set()
    await asyncio.wait_for(wake.wait(), timeout=1)  # already set: at once

    wake.clear()
    again = asyncio.create_task(wake.wait())
    await asyncio.sleep(0)
    assert not again.done(), "a cleared wake-up waits again"
    again.cancel()
    await asyncio.gather(again, return_exceptions=True)
    wake.set()  # nobody waits: nothing to wake, and no error
    assert wake.is_set()


def test_the_watched_markets_take_a_compact_set() -> None:
    session = Session(limits=Limits(frames_per_s=20, image_markets_per_min=2000, markets=500, events=500))
    session.watch(list(range(1000, 1020)))

    assert list(session.watched) == list(range(1000, 1020))
    # A set grown to 20 ids by updates takes 2.2 KiB; the keys of a dict made at once 0.6 KiB.
    assert sys.getsizeof(session.watched) < 1024

    session.unwatch([1000, 1019, 5])
    assert list(session.watched) == list(range(1001, 1019))
    assert session.watch_refusal(range(1000, 1500), []) is None
    assert session.watch_refusal(range(1000, 1501), []) == ("too_many_markets", "at most 500 markets")


def test_a_sessions_empty_queues_hold_no_blocks() -> None:
    session = Session(
        limits=Limits(
            frames_per_s=20, image_markets_per_min=settings.WS_MAX_IMAGE_MARKETS_PER_MIN, markets=500, events=500
        )
    )
    # An empty deque holds a block of 64 slots (0.7 KiB) from the start.
    assert sys.getsizeof(session.ordered) + sys.getsizeof(session.images) < 200
    assert session.image_allowed(markets=10, now=0.0)
    assert session.image_allowed(markets=10, now=30.0)
    assert session.image_allowed(markets=10, now=61.0)
    assert [n for _, n in session.images] == [10, 10], "the first image left the minute's window"


async def test_the_router_sets_the_route_in_place_and_denies_a_path_it_does_not_serve() -> None:
    from django.urls import URLPattern
    from django.urls.resolvers import RoutePattern

    from odds.streaming.routing import SocketRouter

    inner = Seen()
    # What ``path("ws/odds/", application)`` makes.
    router = SocketRouter([URLPattern(RoutePattern("ws/odds/", is_endpoint=True), inner)])
    scope: dict[str, Any] = {"type": "websocket", "path": "/ws/odds/"}
    await router(scope, None, None)
    assert inner.scope is scope
    assert scope["url_route"] == {"args": (), "kwargs": {}}

    messages: list[dict[str, Any]] = [{"type": "websocket.connect"}, {"type": "websocket.disconnect", "code": 1006}]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return messages.pop(0)

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await asyncio.wait_for(router({"type": "websocket", "path": "/ws/nowhere/"}, receive, send), timeout=5)
    assert sent == [{"type": "websocket.close"}], "a path with no route is denied (403), not a server error"
    assert inner.scope is scope, "the route's application was not called"
