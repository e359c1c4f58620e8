"""Websocket consumer: public market prices (watch) and subscriber channels (attach).

Market prices are queued latest-wins per market (a slow client gets the newest price of each
market, never a backlog). Channel frames carry the channel's sequence and are never conflated:
they are queued in order, and a client too slow for the bound gets an explicit resync image.
"""

from __future__ import annotations

import asyncio
import collections
import time
from typing import Any

import orjson
import redis.asyncio as aioredis
from asgiref.sync import sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings

from odds import events
from odds.hub import get_hub
from odds.services.streams import StreamError, channel_owned_by, stream_begin, stream_touch
from reducers import keys

HEARTBEAT_S = 15.0
CHANNEL_QUEUE_LIMIT = 2000
STATUS_PREFIX = '{"type":"market.status"'

_redis: aioredis.Redis | None = None


def _client() -> aioredis.Redis:
    global _redis
    if _redis is None:
        _redis = aioredis.Redis.from_url(settings.REDIS_URL)
    return _redis


def market_group(market_id: int) -> str:
    """Channel-layer group of a market, for the plain edge path (``ODDS_EDGE=channel_layer``)."""
    return f"mkt.{market_id}"


def _frame_seq(frame: str) -> int:
    """The channel sequence of a stamped frame (it always starts ``{"seq":N,``)."""
    return int(frame[7 : frame.index(",")])


class OddsConsumer(AsyncWebsocketConsumer):
    async def connect(self) -> None:
        self.watched: set[int] = set()
        self.pending: dict[bytes, str] = {}
        self.channel_frames: collections.deque[str] = collections.deque()
        self.batch_frames = False
        self.attached: dict[bytes, str] = {}
        self.merged = 0
        self.background: set[asyncio.Task[None]] = set()
        self.wake = asyncio.Event()
        self.send_lock = asyncio.Lock()
        self.writer = asyncio.create_task(self._write_loop())
        await self.accept()
        get_hub().socket_opened()
        user = self.scope.get("user")
        await self.send(text_data=events.hello(user=user.get_username() if user and user.is_authenticated else None))

    async def disconnect(self, code: int) -> None:
        self.writer.cancel()
        get_hub().socket_closed()
        if settings.ODDS_EDGE == "channel_layer":
            for market_id in self.watched:
                await self.channel_layer.group_discard(market_group(market_id), self.channel_name)
        await get_hub().remove(self, [keys.market_channel(m) for m in self.watched])
        await get_hub().remove(self, [name.decode() for name in self.attached])
        self.watched.clear()

    # --- delivery (called by the hub for every message on a channel this socket wants) ---

    def deliver(self, channel: bytes, payload: str) -> None:
        if channel in self.attached:
            if len(self.channel_frames) >= CHANNEL_QUEUE_LIMIT:
                # Too slow for the bound: drop the queue and send a fresh image instead, flagged
                # as a resync, so the client knows frames were skipped rather than lost.
                self.channel_frames.clear()
                task = asyncio.create_task(self._resync(self.attached[channel]))
                self.background.add(task)
                task.add_done_callback(self.background.discard)
            else:
                self.channel_frames.append(payload)
        elif payload.startswith(STATUS_PREFIX):
            # Suspensions and reopenings are never conflated away; they precede the market's state.
            self.channel_frames.append(payload)
        else:
            if channel in self.pending:
                self.merged += 1
            self.pending[channel] = payload
        self.wake.set()

    async def _write_loop(self) -> None:
        while True:
            try:
                await asyncio.wait_for(self.wake.wait(), timeout=HEARTBEAT_S)
            except TimeoutError:
                await self._heartbeat()
                continue
            if self.batch_frames and settings.EDGE_TICK_MS:
                # Let one tick's updates gather so they leave in a single frame.
                await asyncio.sleep(settings.EDGE_TICK_MS / 1000)
            self.wake.clear()
            async with self.send_lock:
                while self.channel_frames:
                    await self.send(text_data=self.channel_frames.popleft())
                batch, self.pending = self.pending, {}
                if self.batch_frames and len(batch) > 1:
                    await self.send(text_data=events.markets_batch(items=batch.values()))
                else:
                    for payload in batch.values():
                        await self.send(text_data=payload)
                if self.merged:
                    # Older prices replaced before they were sent: say how many, never drop silently.
                    await self.send(text_data=events.conflated(merged=self.merged))
                    self.merged = 0

    async def _heartbeat(self) -> None:
        await self.send(text_data=events.heartbeat(ts=int(time.time() * 1000)))
        for channel_id in self.attached.values():
            await sync_to_async(stream_touch)(channel_id=channel_id)

    async def odds_update(self, event: dict[str, Any]) -> None:
        """The plain Channels path: one channel-layer message per client per update."""
        await self.send(text_data=event["text"])

    # --- client messages ---

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        raw = text_data if text_data is not None else bytes_data
        if raw is None or len(raw) > settings.WS_MAX_FRAME_BYTES:
            await self._error("frame_too_large", "frame exceeds the size limit")
            return
        try:
            message: Any = orjson.loads(raw)
        except orjson.JSONDecodeError:
            await self._error("bad_json", "frame is not valid JSON")
            return
        if not isinstance(message, dict) or not isinstance(message.get("type"), str):
            await self._error("bad_message", "frame must be an object with a type")
            return
        kind = message["type"]
        if kind == events.WATCH:
            if message.get("batch") is True:
                self.batch_frames = True
            await self._watch(message.get("markets"))
        elif kind == events.UNWATCH:
            ids = self._market_ids(message.get("markets"))
            if ids is None:
                await self._error("bad_markets", "markets must be a list of market ids")
                return
            await get_hub().remove(self, [keys.market_channel(m) for m in ids])
            self.watched.difference_update(ids)
        elif kind == events.ATTACH:
            await self._attach(message.get("channel"), message.get("last_seq"))
        elif kind == events.PING:
            await self.send(text_data=events.pong(ts=int(time.time() * 1000)))
        else:
            await self._error("unknown_type", f"unknown message type {kind[:40]!r}")

    async def _error(self, code: str, message: str) -> None:
        await self.send(text_data=events.error(code=code, message=message))

    @staticmethod
    def _market_ids(raw: Any) -> list[int] | None:
        if not isinstance(raw, list) or not all(isinstance(m, int) and not isinstance(m, bool) and m > 0 for m in raw):
            return None
        return list(dict.fromkeys(raw))

    async def _watch(self, raw: Any) -> None:
        ids = self._market_ids(raw)
        if ids is None:
            await self._error("bad_markets", "markets must be a list of market ids")
            return
        if len(self.watched | set(ids)) > settings.WS_MAX_MARKETS:
            await self._error("too_many_markets", f"at most {settings.WS_MAX_MARKETS} markets")
            return
        async with self.send_lock:
            # Subscribe before reading the image: an update landing in between is queued and
            # sent after the image, and the client keeps the higher sequence of the two.
            if settings.ODDS_EDGE == "channel_layer":
                for market_id in ids:
                    await self.channel_layer.group_add(market_group(market_id), self.channel_name)
            elif ids:
                # Never "add nothing": the hub's reader would start on a pub-sub that has no
                # connection yet and die with a RuntimeError (found by the property tests).
                await get_hub().add(self, [keys.market_channel(m) for m in ids])
            self.watched.update(ids)
            pipe = _client().pipeline(transaction=False)
            for market_id in ids:
                pipe.hget(keys.market_state(market_id), "state")
            states = [s.decode() for s in await pipe.execute() if s is not None]
            await self.send(text_data=events.image(markets=states))

    async def _attach(self, channel_id: Any, last_seq: Any) -> None:
        user = self.scope.get("user")
        session = self.scope.get("session")
        if not isinstance(channel_id, str) or not 16 <= len(channel_id) <= 64:
            await self._error("bad_channel", "channel must be a channel id from the control API")
            return
        if last_seq is not None and (isinstance(last_seq, bool) or not isinstance(last_seq, int) or last_seq < 0):
            await self._error("bad_last_seq", "last_seq must be a non-negative integer")
            return
        owned = bool(user and user.is_authenticated) and await sync_to_async(channel_owned_by)(
            channel_id=channel_id, user_id=user.pk, session_key=session.session_key if session else None
        )
        if not owned:
            await self._error("not_your_channel", "no such channel for this session")
            return
        name = keys.subscriber_channel(channel_id)
        async with self.send_lock:
            await get_hub().add(self, [name])
            self.attached[name.encode()] = channel_id
            await self.send(text_data=events.attached(channel=channel_id))
            if last_seq is not None:
                await self._resume(channel_id, last_seq)
        await sync_to_async(stream_touch)(channel_id=channel_id)

    async def _resume(self, channel_id: str, last_seq: int) -> None:
        """Send the frames after ``last_seq`` from the channel's log, or ask for a resync image."""
        logged = [bytes(f).decode() for f in await _client().lrange(keys.channel_log(channel_id), 0, -1)]
        frames = sorted(logged, key=_frame_seq)
        missed = [f for f in frames if _frame_seq(f) > last_seq]
        newest = _frame_seq(frames[-1]) if frames else 0
        complete = bool(frames) and _frame_seq(frames[0]) <= last_seq + 1 and newest >= last_seq
        if complete:
            await self.send(
                text_data=events.resumed(channel=channel_id, after=last_seq, count=len(missed), resync=False)
            )
            for frame in missed:
                await self.send(text_data=frame)
        else:
            await self.send(text_data=events.resumed(channel=channel_id, after=last_seq, count=0, resync=True))
            await self._resync(channel_id)

    async def _resync(self, channel_id: str) -> None:
        user = self.scope["user"]
        session = self.scope.get("session")
        try:
            await sync_to_async(stream_begin)(
                channel_id=channel_id,
                user_id=user.pk,
                session_key=session.session_key if session else None,
                resync=True,
            )
        except StreamError as exc:
            await self._error(exc.code, exc.message)
