"""The websocket edge: one Redis subscription per process, fanned out in-process.

Each ASGI worker process holds a single Redis pub-sub connection. A channel (a market's price
channel or a subscriber's view channel) is subscribed once per process however many websockets
want it, and every message received is handed, already encoded, to each local listener of that
channel. This replaces one channel-layer message per client per update (the plain Channels path)
with one Redis message per process per update.

Websockets that asked for batched market frames are served by the hub's tick instead: the newest
state of each market that moved in a tick (``EDGE_TICK_MS``) is kept once for the process, and at
the end of the tick each distinct set of markets wanted by some sockets is encoded into one frame,
handed as the same string to every one of them. Status messages are never part of a tick: they go
to each listener in order, like channel frames.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Protocol

import redis.asyncio as aioredis
from django.conf import settings
from redis.commands.core import AsyncScript

from odds.core.events import markets_batch
from reducers import frames
from reducers.latency import STAGE_FRAME, frame_age_s
from store.channels import (
    channels_touch,
    connections_admit,
    connections_admit_script,
    connections_keep,
    connections_release,
)
from store.clients import async_redis_client
from store.markets import price_channel_prefix
from store.subscription import Subscription

log = logging.getLogger(__name__)
REPORT_INTERVAL_S = 5.0
# At most one market frame in this interval has its age (source event -> frame) observed.
FRAME_SAMPLE_S = 0.05
# A connection's entry under the connection caps lapses after this many keep-alive intervals
# without a refresh (its process died without closing it).
CONNECTION_ENTRY_INTERVALS = 3
# The keep-alive refreshes this many connections' places a pipeline, the event loop free between
# pipelines: queuing and packing the refreshes of 5,000 connections under two caps in one
# pipeline took about 280 ms of one process's CPU, a stall every socket of that process waited behind
# (docs/performance.md, socket scale). Each pipeline refreshes a cap key's connections in one command.
KEEP_ALIVE_CONNECTIONS_PER_PIPELINE = 250


class Listener(Protocol):
    def deliver(self, channel: bytes, payload: str) -> None: ...

    def resync(self) -> None:
        """The hub's subscription was re-established (Redis restarted or failed over): what was
        published meanwhile never reached this process, so the listener brings its client up to
        date from the stored state."""
        ...

    def deliver_tick(self, frame: str, channels: tuple[bytes, ...], moved: dict[bytes, str], replaced: int) -> None:
        """One tick's frame for this listener: ``channels`` (the markets in it, whose newest
        states are in ``moved``) and how many older updates of them the tick replaced."""
        ...


def tick_frames(
    moved: dict[bytes, str], batched: dict[bytes, set[Listener]]
) -> list[tuple[str, tuple[bytes, ...], list[Listener]]]:
    """The frames of one tick: for each distinct set of moved channels some listeners watch,
    the frame (the market's own message for one, a ``markets`` batch for several) and those
    listeners. Each frame is built once, however many listeners get it."""
    wanted: dict[Listener, list[bytes]] = defaultdict(list)
    for channel in moved:
        for listener in batched.get(channel, ()):
            wanted[listener].append(channel)
    groups: dict[tuple[bytes, ...], list[Listener]] = defaultdict(list)
    for listener, wants in wanted.items():
        groups[tuple(wants)].append(listener)
    frames = []
    for group, listeners in groups.items():
        frame = moved[group[0]] if len(group) == 1 else markets_batch(items=[moved[c] for c in group])
        frames.append((frame, group, listeners))
    return frames


class Hub:
    def __init__(self, redis_url: str) -> None:
        self._redis_url = redis_url
        self._listeners: dict[bytes, set[Listener]] = defaultdict(set)
        # Listeners served by the tick, by channel; the tick's newest message per channel, and
        # how many older ones it replaced.
        self._batched: dict[bytes, set[Listener]] = defaultdict(set)
        self._moved: dict[bytes, str] = {}
        self._replaced: Counter[bytes] = Counter()
        self._tick: asyncio.TimerHandle | None = None
        self._subscription: Subscription | None = None
        self.reconnects = 0
        self._reader: asyncio.Task[None] | None = None
        self._reporter: asyncio.Task[None] | None = None
        self._keeper: asyncio.Task[None] | None = None
        self._redis: aioredis.Redis | None = None
        self._admit: AsyncScript | None = None
        # Subscriber channels with a websocket attached in this process (how many), and the
        # connection-cap entries of this process's websockets: both are refreshed on a fixed
        # interval, whatever the traffic.
        self._attached: Counter[str] = Counter()
        self._connections: dict[str, tuple[str, ...]] = {}
        self.sockets = 0
        # Websockets closed since the last report, by cause; the sampled ages of market frames.
        self.closes: Counter[str] = Counter()
        from odds.core.metrics import LatencySamples

        self.frame_ages = LatencySamples(STAGE_FRAME, interval_s=REPORT_INTERVAL_S)
        self._frame_sample_due = 0.0
        self._market_prefix = price_channel_prefix()

    def _subscribed(self) -> Subscription:
        """The process's pub-sub connection, kept up by the reader task from the first add on."""
        if self._subscription is None:
            self._subscription = Subscription(
                self._redis_url,
                on_message=self._deliver,
                on_reconnect=self._reconnected,
                ping_s=settings.EDGE_PUBSUB_PING_S,
            )
        if self._reader is None or self._reader.done():
            self._reader = asyncio.create_task(self._subscription.run(), name="hub-reader")
        return self._subscription

    def _reconnected(self) -> None:
        # Messages published while the connection was down are lost to this process. Listeners
        # are told now, before any message of the new connection is handed out, so each can
        # hold its frames back while it reads what it missed from the store.
        self.reconnects += 1
        listeners = self._all_listeners()
        log.warning("hub reconnected to Redis; resyncing %d listeners", len(listeners))
        for listener in listeners:
            listener.resync()

    def _all_listeners(self) -> set[Listener]:
        listeners: set[Listener] = set()
        for table in (self._listeners, self._batched):
            for watchers in table.values():
                listeners.update(watchers)
        return listeners

    async def add(self, listener: Listener, channels: Iterable[str], *, batched: bool = False) -> None:
        """Start delivering the channels' messages to the listener (``batched``: market states
        by the tick, see the module's docstring); no channels is a no-op."""
        names = list(channels)
        if not names:
            return
        new = []
        for name in names:
            key = name.encode()
            if not self._listeners[key] and not self._batched[key]:
                new.append(key)
            (self._batched if batched else self._listeners)[key].add(listener)
        self._subscribed().subscribe(new)

    async def remove(self, listener: Listener, channels: Iterable[str]) -> None:
        gone = []
        for name in channels:
            key = name.encode()
            for table in (self._listeners, self._batched):
                watchers = table.get(key)
                if watchers is not None:
                    watchers.discard(listener)
                    if not watchers:
                        del table[key]
            if key not in self._listeners and key not in self._batched:
                gone.append(key)
        if gone and self._subscription is not None:
            self._subscription.unsubscribe(gone)

    def client(self) -> aioredis.Redis:
        """The process's Redis connection pool for commands (the pub-sub has its own). A command
        waits for a free connection rather than failing: a burst of reconnecting punters (every
        socket's admission runs a script) must queue, not be refused by the pool."""
        if self._redis is None:
            self._redis = async_redis_client(
                self._redis_url,
                max_connections=settings.EDGE_REDIS_MAX_CONNECTIONS,
                pool_timeout=settings.EDGE_REDIS_POOL_TIMEOUT_S,
            )
        return self._redis

    def _keep_alive_started(self) -> None:
        if self._keeper is None or self._keeper.done():
            self._keeper = asyncio.create_task(self._keep_alive(), name="hub-keep-alive")

    def channel_attached(self, channel_id: str) -> None:
        """A websocket of this process follows the channel: it lives as long as one does."""
        self._attached[channel_id] += 1
        self._keep_alive_started()

    def channel_detached(self, channel_id: str) -> None:
        self._attached[channel_id] -= 1
        if self._attached[channel_id] <= 0:
            del self._attached[channel_id]

    async def connection_admit(self, *, connection_id: str, caps: list[tuple[str, int]]) -> str | None:
        """Take a place for the connection under each (key, cap), across every process; returns
        the key of the first cap that is full (nothing taken then), or None when admitted."""
        if not caps:
            return None
        if self._admit is None:
            self._admit = connections_admit_script(self.client())
        now = int(time.time() * 1000)
        lapses = now + int(CONNECTION_ENTRY_INTERVALS * settings.STREAM_KEEPALIVE_S * 1000)
        full = await connections_admit(
            self._admit, connection_id=connection_id, caps=caps, now_ms=now, lapses_ms=lapses
        )
        if full:
            return caps[full - 1][0]
        self._connections[connection_id] = tuple(key for key, _ in caps)
        self._keep_alive_started()
        return None

    async def connection_release(self, *, connection_id: str) -> None:
        held = self._connections.pop(connection_id, ())
        if held:
            await connections_release(self.client(), connection_id=connection_id, held=held)

    async def keep_alive_once(self) -> None:
        """Refresh the sign of life of every channel attached in this process and the cap
        entries of its connections, ``KEEP_ALIVE_CONNECTIONS_PER_PIPELINE`` connections a
        pipeline. Only entries still present are refreshed: an ended channel, or a place given
        back while the refresh runs, is not brought back."""
        channels = list(self._attached)
        connections = list(self._connections.items())
        if not channels and not connections:
            return
        now = int(time.time() * 1000)
        lapses = now + int(CONNECTION_ENTRY_INTERVALS * settings.STREAM_KEEPALIVE_S * 1000)
        step = KEEP_ALIVE_CONNECTIONS_PER_PIPELINE
        for first in range(0, max(1, len(connections)), step):
            pipe = self.client().pipeline(transaction=False)
            if channels and not first:
                channels_touch(pipe, channels, now_ms=now)
            connections_keep(pipe, connections=connections[first : first + step], lapses_ms=lapses)
            await pipe.execute()

    async def _keep_alive(self) -> None:
        while True:
            try:
                await self.keep_alive_once()
            except Exception as exc:  # Redis away: the next round tries again, well before expiry
                log.warning("channel keep-alive not written: %s", exc)
            await asyncio.sleep(settings.STREAM_KEEPALIVE_S)

    def channel_count(self) -> int:
        return len(self._listeners.keys() | self._batched.keys())

    def socket_opened(self) -> None:
        """Count a websocket of this process, for the operators' per-worker figures."""
        self.sockets += 1
        if self._reporter is None or self._reporter.done():
            self._reporter = asyncio.create_task(self._report(), name="hub-reporter")

    def socket_closed(self, *, cause: str | None = None) -> None:
        """Count a websocket gone, and its close's cause (``events.close_cause``) when it had one."""
        self.sockets = max(0, self.sockets - 1)
        if cause is not None:
            self.closes[cause] += 1

    def socket_refused(self, *, cause: str) -> None:
        """Count a websocket closed at connect, before it was counted as open."""
        self.closes[cause] += 1

    async def _report(self) -> None:
        from odds.core.metrics import websockets_report

        while True:
            closes, self.closes = self.closes, Counter()
            try:
                await asyncio.to_thread(websockets_report, count=self.sockets, closes=closes)
            except Exception as exc:  # the figure is advisory; the edge must keep running
                log.warning("websocket count not reported: %s", exc)
                self.closes.update(closes)
            await asyncio.to_thread(self.frame_ages.flush)
            await asyncio.sleep(REPORT_INTERVAL_S)

    def _deliver(self, channel: bytes, data: bytes) -> None:
        """Hand a published message to the channel's listeners, or keep it for the tick; called
        by the subscription's protocol as the message arrives."""
        text = data.decode()  # decoded once, shared by every local websocket
        if channel.startswith(self._market_prefix) and time.monotonic() >= self._frame_sample_due:
            self._frame_sample_due = time.monotonic() + FRAME_SAMPLE_S
            age = frame_age_s(text, now_ms=int(time.time() * 1000))
            if age is not None:
                self.frame_ages.observe(age, flush=False)
        listeners = self._listeners.get(channel)
        batched = self._batched.get(channel)
        if batched:
            # Routed by its type (decoded once: the websockets reading it get the same head).
            if frames.kind(text) == "market.status":
                for listener in tuple(batched):
                    listener.deliver(channel, text)
            else:
                if channel in self._moved:
                    self._replaced[channel] += 1
                self._moved[channel] = text
                if self._tick is None:
                    self._tick = asyncio.get_running_loop().call_later(settings.EDGE_TICK_MS / 1000, self._send_tick)
        if listeners:
            for listener in tuple(listeners):
                listener.deliver(channel, text)

    def _send_tick(self) -> None:
        moved, replaced = self._moved, self._replaced
        self._moved, self._replaced, self._tick = {}, Counter(), None
        for frame, channels, listeners in tick_frames(moved, self._batched):
            merged = sum(replaced[c] for c in channels)
            for listener in listeners:
                listener.deliver_tick(frame, channels, moved, merged)


_hub: Hub | None = None


def get_hub() -> Hub:
    """The process's hub, created on first use inside the running event loop."""
    global _hub
    if _hub is None:
        _hub = Hub(settings.REDIS_URL)
    return _hub
