"""The websocket edge: one Redis subscription per process, fanned out in-process.

Each ASGI worker process holds a single Redis pub-sub connection. A channel (a market's price
channel or a subscriber's view channel) is subscribed once per process however many websockets
want it, and every message received is handed, already encoded, to each local listener of that
channel. This replaces one channel-layer message per client per update (the plain Channels path)
with one Redis message per process per update.
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from collections.abc import Iterable
from typing import Protocol

import redis.asyncio as aioredis
from django.conf import settings

log = logging.getLogger(__name__)
REPORT_INTERVAL_S = 5.0


class Listener(Protocol):
    def deliver(self, channel: bytes, payload: str) -> None: ...


class Hub:
    def __init__(self, redis_url: str) -> None:
        self._redis_url = redis_url
        self._listeners: dict[bytes, set[Listener]] = defaultdict(set)
        self._pubsub: aioredis.client.PubSub | None = None
        self._reader: asyncio.Task[None] | None = None
        self._reporter: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()
        self.sockets = 0

    def _connection(self) -> aioredis.client.PubSub:
        if self._pubsub is None:
            self._pubsub = aioredis.Redis.from_url(self._redis_url).pubsub(ignore_subscribe_messages=True)
        return self._pubsub

    async def add(self, listener: Listener, channels: Iterable[str]) -> None:
        """Start delivering the channels' messages to the listener; no channels is a no-op."""
        names = list(channels)
        if not names:
            return
        async with self._lock:
            pubsub = self._connection()
            new = []
            for name in names:
                key = name.encode()
                if not self._listeners[key]:
                    new.append(name)
                self._listeners[key].add(listener)
            if new:
                await pubsub.subscribe(*new)
            # A pub-sub has its connection only from its first subscribe on: a reader started
            # before that dies at once ("pubsub connection not set").
            if pubsub.connection is not None and (self._reader is None or self._reader.done()):
                self._reader = asyncio.create_task(self._read(pubsub), name="hub-reader")

    async def remove(self, listener: Listener, channels: Iterable[str]) -> None:
        async with self._lock:
            gone = []
            for name in channels:
                key = name.encode()
                watchers = self._listeners.get(key)
                if watchers is None:
                    continue
                watchers.discard(listener)
                if not watchers:
                    del self._listeners[key]
                    gone.append(name)
            if gone and self._pubsub is not None:
                await self._pubsub.unsubscribe(*gone)

    def channel_count(self) -> int:
        return len(self._listeners)

    def socket_opened(self) -> None:
        """Count a websocket of this process, for the operators' per-worker figures."""
        self.sockets += 1
        if self._reporter is None or self._reporter.done():
            self._reporter = asyncio.create_task(self._report(), name="hub-reporter")

    def socket_closed(self) -> None:
        self.sockets = max(0, self.sockets - 1)

    async def _report(self) -> None:
        from odds.services.metrics import websockets_report

        while True:
            try:
                await asyncio.to_thread(websockets_report, count=self.sockets)
            except Exception as exc:  # the figure is advisory; the edge must keep running
                log.warning("websocket count not reported: %s", exc)
            await asyncio.sleep(REPORT_INTERVAL_S)

    async def _read(self, pubsub: aioredis.client.PubSub) -> None:
        while True:
            try:
                message = await pubsub.get_message(timeout=1.0)
            except (ConnectionError, aioredis.ConnectionError):
                # redis-py resubscribes every channel when the connection comes back.
                log.warning("hub lost its Redis connection; retrying")
                await asyncio.sleep(0.5)
                continue
            if message is None:
                if not pubsub.subscribed:
                    await asyncio.sleep(0.05)
                continue
            if message["type"] != "message":
                continue
            channel: bytes = message["channel"]
            listeners = self._listeners.get(channel)
            if not listeners:
                continue
            text = message["data"].decode()  # decoded once, shared by every local websocket
            for listener in tuple(listeners):
                listener.deliver(channel, text)


_hub: Hub | None = None


def get_hub() -> Hub:
    """The process's hub, created on first use inside the running event loop."""
    global _hub
    if _hub is None:
        _hub = Hub(settings.REDIS_URL)
    return _hub
