"""Websocket clients for the fault and soak tests, run in a background thread's event loop.

Each client behaves as the browser does: it reconnects when its connection drops, re-watches
its markets (and gets an image) or re-attaches its channel with the last sequence it saw (and
gets the missed frames or an explicit resync image). A control call answered 503 is asked
again after the page's delay, as the page does. Everything a client receives is recorded so the
tests can check what the protocol promises.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any

import websockets
from websockets.typing import Origin

from tests.factories import sign_in

# The page's delay before it asks the control API again (RETRY_MS in frontend/src/channels.ts),
# and how many times a client asks before it gives up (raises, counted as a drop).
CONTROL_RETRY_S = 3.0
CONTROL_ATTEMPTS = 5


@dataclass
class Session:
    """A logged-in browser: the session cookie (from the test database) and a CSRF token."""

    base: str
    sessionid: str
    csrf: str = field(default_factory=lambda: secrets.token_hex(16))

    @property
    def cookie(self) -> str:
        return f"sessionid={self.sessionid}; csrftoken={self.csrf}"

    def call(self, method: str, path: str, body: object | None = None) -> tuple[int, dict[str, Any]]:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(  # noqa: S310 - loopback test server
            f"{self.base}{path}",
            data=data,
            method=method,
            headers={"Cookie": self.cookie, "X-CSRFToken": self.csrf, "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=15) as response:  # noqa: S310 - loopback test server
                return response.status, json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as error:
            raw = error.read()
            try:
                return error.code, json.loads(raw)
            except ValueError:
                return error.code, {"raw": raw[:200].decode(errors="replace")}


def session_for(base: str, user) -> Session:
    from django.test import Client

    client = Client()
    sign_in(client, user)
    return Session(base=base, sessionid=client.cookies["sessionid"].value)


@dataclass
class Frame:
    seq: int
    type: str
    resync: bool


class Client:
    """Common part: connect, reconnect with back-off, record."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.connects = 0
        self.drops = 0
        self.errors: list[str] = []
        self.markets: dict[int, tuple[int, str]] = {}
        self.ready = asyncio.Event()
        self.stopped = False

    def summary(self) -> str:
        return f"{type(self).__name__} connects={self.connects} drops={self.drops} errors={self.errors[-5:]}"

    @property
    def ws_url(self) -> str:
        return self.session.base.replace("http://", "ws://") + "/ws/odds/"

    def note_market(self, frame: dict[str, Any]) -> None:
        seq = frame["seq"]
        known = self.markets.get(frame["market_id"])
        if known is None or seq > known[0]:
            self.markets[frame["market_id"]] = (seq, frame["selections"][0]["price"])

    async def on_open(self, ws: Any) -> None:
        raise NotImplementedError

    async def on_frame(self, ws: Any, frame: dict[str, Any]) -> None:
        raise NotImplementedError

    async def run(self) -> None:
        delay = 0.2
        while not self.stopped:
            try:
                async with websockets.connect(
                    self.ws_url,
                    origin=Origin(self.session.base),
                    additional_headers={"Cookie": self.session.cookie},
                    max_queue=None,
                    open_timeout=5,
                ) as ws:
                    self.connects += 1
                    delay = 0.2
                    await self.on_open(ws)
                    async for raw in ws:
                        await self.on_frame(ws, json.loads(raw))
            except (OSError, websockets.ConnectionClosed, websockets.InvalidHandshake, TimeoutError) as exc:
                if self.stopped:
                    return
                self.drops += 1
                self.errors.append(f"{type(exc).__name__}: {exc}"[:200])
                await asyncio.sleep(delay)
                delay = min(delay * 2, 2.0)


class WatchClient(Client):
    """Watches markets; keeps the highest sequence of each (images and deltas alike)."""

    def __init__(self, session: Session, markets: list[int]) -> None:
        super().__init__(session)
        self.watch = markets
        self.received = 0
        self.images = 0

    async def on_open(self, ws: Any) -> None:
        await ws.send(json.dumps({"type": "watch", "markets": self.watch}))

    async def on_frame(self, ws: Any, frame: dict[str, Any]) -> None:
        if frame["type"] == "image":
            self.images += 1
            for market in frame["markets"]:
                self.note_market(market)
            self.ready.set()
        elif frame["type"] == "market":
            self.received += 1
            self.note_market(frame)


class ChannelClient(Client):
    """Subscribes a channel through the control API, attaches, begins, and resumes after drops."""

    def __init__(self, session: Session, markets: list[int]) -> None:
        super().__init__(session)
        self.watch = markets
        self.spec = {"view": "markets", "markets": markets}
        self.channel: str | None = None
        self.frames: list[Frame] = []
        self.resumes: list[dict[str, Any]] = []
        # Channels the server lost (``ended`` / an attach refused): as the browser does, the
        # client subscribes a new one with the same spec. The frames of each lost one are kept.
        self.lost: list[tuple[str, list[Frame]]] = []
        self.refusals: list[str] = []

    def summary(self) -> str:
        return f"{super().summary()} refusals={self.refusals[-5:]}"

    @property
    def last_seq(self) -> int | None:
        return self.frames[-1].seq if self.frames else None

    async def control(self, what: str, method: str, path: str, body: object | None, expect: int) -> dict[str, Any]:
        """A control call as the page makes it: a 503 (the service could not store state or send
        the command) is asked again after the page's retry delay, with the socket kept open; it
        is recorded in ``refusals``, not counted as a drop. Any other answer but ``expect`` raises."""
        for _ in range(CONTROL_ATTEMPTS):
            status, answer = await asyncio.to_thread(self.session.call, method, path, body)
            if status != 503:
                break
            self.refusals.append(f"{what}: {answer.get('error', {}).get('code')}")
            await asyncio.sleep(CONTROL_RETRY_S)
        if status != expect:
            raise OSError(f"{what} answered {status}: {answer}")
        return answer

    async def on_open(self, ws: Any) -> None:
        if self.channel is None:
            created = await self.control("subscribe", "POST", "/api/streams", self.spec, 201)
            self.channel = created["channel"]
        attach: dict[str, Any] = {"type": "attach", "channel": self.channel}
        if self.last_seq is not None:
            attach["last_seq"] = self.last_seq
        await ws.send(json.dumps(attach))

    async def on_frame(self, ws: Any, frame: dict[str, Any]) -> None:
        kind = frame["type"]
        if kind == "attached" and self.last_seq is None:
            await self.control("begin", "POST", f"/api/streams/{self.channel}/begin", None, 202)
        elif kind == "resumed":
            self.resumes.append(frame)
        elif kind in ("view.image", "view.delta"):
            seq = frame["seq"]
            if self.last_seq is not None and seq <= self.last_seq:
                return  # seen already: the protocol lets clients drop repeats
            self.frames.append(Frame(seq=seq, type=kind, resync=bool(frame.get("resync"))))
            for market in frame["markets"]:
                self.note_market(market)
            self.ready.set()
        elif kind == "ended" and frame["channel"] == self.channel:
            await self._subscribe_again(ws, frame["reason"])
        elif kind == "error":
            self.errors.append(frame["code"])
            if frame["code"] == "not_your_channel" and self.channel is not None:
                await self._subscribe_again(ws, frame["code"])

    async def _subscribe_again(self, ws: Any, reason: str) -> None:
        assert self.channel is not None
        self.lost.append((self.channel, self.frames))
        self.errors.append(f"lost: {reason}")
        self.channel, self.frames = None, []
        await self.on_open(ws)

    def silent_gaps(self) -> list[tuple[int, int]]:
        """Pairs (previous seq, next seq) that skip sequences without a resync image."""
        gaps = []
        for before, after in zip(self.frames, self.frames[1:], strict=False):
            if after.seq != before.seq + 1 and not after.resync:
                gaps.append((before.seq, after.seq))
        return gaps


class Loop:
    """An event loop in a daemon thread, running client coroutines until stopped."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.tasks: list[Any] = []

    def submit(self, coroutine: Coroutine[Any, Any, Any]) -> Any:
        future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        self.tasks.append(future)
        return future

    def start(self, clients: Sequence[Client]) -> None:
        for client in clients:
            self.submit(client.run())

    def call(self, coroutine: Coroutine[Any, Any, Any], timeout: float = 60) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def wait_ready(self, clients: Sequence[Client], timeout: float = 90) -> None:
        async def all_ready() -> None:
            await asyncio.gather(*(c.ready.wait() for c in clients))

        try:
            self.call(asyncio.wait_for(all_ready(), timeout), timeout + 5)
        except TimeoutError as exc:
            waiting = [c.summary() for c in clients if not c.ready.is_set()]
            raise AssertionError(f"{len(waiting)} clients not ready: {waiting[:3]}") from exc

    def stop(self, clients: Sequence[Client]) -> None:
        for client in clients:
            client.stopped = True
        for future in self.tasks:
            future.cancel()
        time.sleep(0.2)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
