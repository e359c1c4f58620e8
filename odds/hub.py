"""The websocket edge: one Redis subscription per process, fanned out in-process.

Each ASGI worker process holds a single Redis pub-sub connection. A market channel is
subscribed once per process however many websockets watch it, and every message received is
handed, already encoded, to each local websocket that watches the market. This replaces one
channel-layer message per client per update (the plain Channels path) with one Redis message
per process per update.
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from collections.abc import Iterable
from typing import Protocol

import redis.asyncio as aioredis
from django.conf import settings

from reducers import keys

log = logging.getLogger(__name__)


class Listener(Protocol):
    def deliver(self, market_id: int, payload: bytes) -> None: ...


class MarketHub:
    def __init__(self, redis_url: str) -> None:
        self._redis_url = redis_url
        self._listeners: dict[int, set[Listener]] = defaultdict(set)
        self._pubsub: aioredis.client.PubSub | None = None
        self._client: aioredis.Redis | None = None
        self._reader: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()
        self._prefix = keys.market_channel(0)[:-1].encode()

    async def _ensure_started(self) -> aioredis.client.PubSub:
        if self._pubsub is None:
            self._client = aioredis.Redis.from_url(self._redis_url)
            self._pubsub = self._client.pubsub(ignore_subscribe_messages=True)
        return self._pubsub

    async def add(self, listener: Listener, market_ids: Iterable[int]) -> None:
        """Start delivering the markets' updates to the listener."""
        async with self._lock:
            pubsub = await self._ensure_started()
            new = []
            for market_id in market_ids:
                if not self._listeners[market_id]:
                    new.append(keys.market_channel(market_id))
                self._listeners[market_id].add(listener)
            if new:
                await pubsub.subscribe(*new)
            if self._reader is None or self._reader.done():
                self._reader = asyncio.create_task(self._read(pubsub), name="market-hub-reader")

    async def remove(self, listener: Listener, market_ids: Iterable[int]) -> None:
        async with self._lock:
            gone = []
            for market_id in market_ids:
                watchers = self._listeners.get(market_id)
                if watchers is None:
                    continue
                watchers.discard(listener)
                if not watchers:
                    del self._listeners[market_id]
                    gone.append(keys.market_channel(market_id))
            if gone and self._pubsub is not None:
                await self._pubsub.unsubscribe(*gone)

    def watched_markets(self) -> int:
        return len(self._listeners)

    async def _read(self, pubsub: aioredis.client.PubSub) -> None:
        prefix_len = len(self._prefix)
        while True:
            try:
                message = await pubsub.get_message(timeout=1.0)
            except (ConnectionError, aioredis.ConnectionError):
                log.warning("market hub lost Redis; resubscribing")
                await asyncio.sleep(0.5)
                continue
            if message is None:
                if not pubsub.subscribed:
                    await asyncio.sleep(0.05)
                continue
            if message["type"] != "message":
                continue
            channel: bytes = message["channel"]
            market_id = int(channel[prefix_len:])
            for listener in tuple(self._listeners.get(market_id, ())):
                listener.deliver(market_id, message["data"])


_hub: MarketHub | None = None


def get_hub() -> MarketHub:
    """The process's hub, created on first use inside the running event loop."""
    global _hub
    if _hub is None:
        _hub = MarketHub(settings.REDIS_URL)
    return _hub
