"""Websocket consumer for live odds: image then deltas, latest-wins per market when slow."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import orjson
import redis.asyncio as aioredis
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings

from odds import events
from odds.hub import get_hub
from reducers import keys

_redis: aioredis.Redis | None = None


def _client() -> aioredis.Redis:
    global _redis
    if _redis is None:
        _redis = aioredis.Redis.from_url(settings.REDIS_URL)
    return _redis


class OddsConsumer(AsyncWebsocketConsumer):
    """One browser tab. Market updates are queued latest-wins per market and written by one task."""

    async def connect(self) -> None:
        self.watched: set[int] = set()
        self.pending: dict[int, bytes] = {}
        self.merged = 0
        self.wake = asyncio.Event()
        self.send_lock = asyncio.Lock()
        self.writer = asyncio.create_task(self._write_loop())
        await self.accept()
        user = self.scope.get("user")
        await self.send(text_data=events.hello(user=user.get_username() if user and user.is_authenticated else None))

    async def disconnect(self, code: int) -> None:
        self.writer.cancel()
        await get_hub().remove(self, self.watched)
        self.watched.clear()

    def deliver(self, market_id: int, payload: bytes) -> None:
        if market_id in self.pending:
            self.merged += 1
        self.pending[market_id] = payload
        self.wake.set()

    async def _write_loop(self) -> None:
        while True:
            await self.wake.wait()
            self.wake.clear()
            async with self.send_lock:
                batch, self.pending = self.pending, {}
                for payload in batch.values():
                    await self.send(text_data=payload.decode())

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        raw = text_data if text_data is not None else bytes_data
        if raw is None or len(raw) > settings.WS_MAX_FRAME_BYTES:
            await self.send(text_data=events.error(code="frame_too_large", message="frame exceeds the size limit"))
            return
        try:
            message: Any = orjson.loads(raw)
        except orjson.JSONDecodeError:
            await self.send(text_data=events.error(code="bad_json", message="frame is not valid JSON"))
            return
        if not isinstance(message, dict) or not isinstance(message.get("type"), str):
            await self.send(text_data=events.error(code="bad_message", message="frame must be an object with a type"))
            return
        kind = message["type"]
        if kind == events.WATCH:
            await self._watch(message.get("markets"))
        elif kind == events.UNWATCH:
            ids = self._market_ids(message.get("markets")) or []
            await get_hub().remove(self, ids)
            self.watched.difference_update(ids)
        elif kind == events.PING:
            await self.send(text_data=events.pong(ts=int(time.time() * 1000)))
        else:
            await self.send(text_data=events.error(code="unknown_type", message=f"unknown message type {kind[:40]!r}"))

    @staticmethod
    def _market_ids(raw: Any) -> list[int] | None:
        if not isinstance(raw, list) or not all(isinstance(m, int) and not isinstance(m, bool) and m > 0 for m in raw):
            return None
        return list(dict.fromkeys(raw))

    async def _watch(self, raw: Any) -> None:
        ids = self._market_ids(raw)
        if ids is None:
            await self.send(text_data=events.error(code="bad_markets", message="markets must be a list of market ids"))
            return
        if len(self.watched | set(ids)) > settings.WS_MAX_MARKETS:
            await self.send(
                text_data=events.error(code="too_many_markets", message=f"at most {settings.WS_MAX_MARKETS} markets")
            )
            return
        async with self.send_lock:
            # Subscribe before reading the image: an update landing in between is queued and
            # sent after the image, and the client keeps the higher sequence of the two.
            await get_hub().add(self, ids)
            self.watched.update(ids)
            pipe = _client().pipeline(transaction=False)
            for market_id in ids:
                pipe.hget(keys.market_state(market_id), "state")
            states = [s.decode() for s in await pipe.execute() if s is not None]
            await self.send(text_data=events.image(markets=states))
