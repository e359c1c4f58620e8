"""Websocket consumer: public market prices (watch) and subscriber channels (attach).

Market prices are queued latest-wins per market (a slow client gets the newest price of each
market, never a backlog). Channel frames carry the channel's sequence and are never conflated:
they are queued in order, and a client too slow for the bound gets an explicit resync image.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import secrets
import time
from collections.abc import Callable
from typing import Any

from asgiref.sync import sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings
from pydantic import ValidationError
from redis.exceptions import ConnectionError as RedisConnectionError

from odds.core import events
from odds.core.eager import run_eagerly
from odds.streaming.hub import get_hub
from odds.streaming.services.streams import (
    StreamError,
    channel_end_reason,
    channel_owned_by,
    stream_begin,
    stream_touch,
)
from reducers import frames, keys
from reducers.prices import state_is_held
from reducers.store import queue_states, raw_states
from reducers.subscriptions import LOST

log = logging.getLogger(__name__)

HEARTBEAT_S = 15.0
CHANNEL_QUEUE_LIMIT = 2000
IMAGE_WINDOW_S = 60.0
# After the hub's subscription is re-established, channels and markets are read back from Redis
# this long later (the subscriptions sent again on connect are in place by then).
RECOVER_DELAY_S = 0.2
# How long a read-back keeps trying while Redis refuses it (a failover's promotion takes seconds,
# and Sentinel drops the clients of the promoted replica once more), waiting up to
# READ_BACK_MAX_WAIT_S between attempts. Past it the socket is closed, so its client connects
# again and starts from a fresh image rather than hold prices it can no longer see move.
READ_BACK_PATIENCE_S = 30.0
READ_BACK_MAX_WAIT_S = 1.0


def _log_frames(raw: list[Any]) -> list[str]:
    """A channel's log (``keys.channel_log``, newest first) as frames in sequence order."""
    return sorted((bytes(f).decode() for f in raw), key=frames.frame_seq)


def _refusal(exc: ValidationError) -> tuple[str, str]:
    """The ``error`` frame's code and message for a client message its definition refuses
    (``reducers.frames.ClientMessage``): the first problem, as docs/protocol.md lists them."""
    problem = exc.errors(include_url=False)[0]
    kind, where = problem["type"], problem["loc"]
    if kind == "json_invalid":
        return "bad_json", "frame is not valid JSON"
    if not where:
        message_type = problem["input"].get("type") if isinstance(problem["input"], dict) else None
        if kind == "union_tag_invalid" and isinstance(message_type, str):
            return "unknown_type", f"unknown message type {message_type[:40]!r}"
        return "bad_message", "frame must be an object with a type"
    field = where[1] if len(where) > 1 else ""
    if field == "since":
        return "bad_since", 'since must map market ids to [seq, status], e.g. {"42": [17, "open"]}'
    if field == "channel":
        return "bad_channel", "channel must be a channel id from the control API"
    if field == "last_seq":
        return "bad_last_seq", "last_seq must be a non-negative integer"
    return "bad_markets", "markets must be a list of market ids"


async def _read_back(queue: Callable[[Any], object], *, patience_s: float | None = None) -> list[Any]:
    """Run the commands ``queue`` puts on a pipeline, retried while Redis refuses them for up to
    ``patience_s`` (``READ_BACK_PATIENCE_S``): right after the hub reconnected, pooled connections
    opened before Redis went away fail once each, and during a failover Redis is away for seconds
    more."""
    give_up_at = time.monotonic() + (READ_BACK_PATIENCE_S if patience_s is None else patience_s)
    attempt = 0
    while True:
        pipe = get_hub().client().pipeline(transaction=False)
        queue(pipe)
        try:
            return list(await pipe.execute())
        except (ConnectionError, RedisConnectionError):
            attempt += 1
            wait = min(RECOVER_DELAY_S * attempt, READ_BACK_MAX_WAIT_S)
            if time.monotonic() + wait > give_up_at:
                raise
            await asyncio.sleep(wait)


class OddsConsumer(AsyncWebsocketConsumer):
    async def connect(self) -> None:
        self.watched: set[int] = set()
        self.pending: dict[bytes, str] = {}
        # The hub's tick frame waiting to be written (batched sockets): the frame, its markets and
        # their states, so a socket that is behind can fold it into ``pending`` instead.
        self.ready: tuple[str, tuple[bytes, ...], dict[bytes, str]] | None = None
        # A write started by a tick that had to wait for the client (see deliver_tick).
        self.inflight: asyncio.Task[None] | None = None
        self.channel_frames: collections.deque[str] = collections.deque()
        self.batch_frames = False
        self.attached: dict[bytes, str] = {}
        # The newest sequence queued for each attached channel, and the frames held back while
        # a channel is recovered from its log after the hub's subscription was re-established.
        self.channel_seqs: dict[bytes, int] = {}
        self.holding: dict[bytes, list[str]] = {}
        self.merged = 0
        self.background: set[asyncio.Task[None]] = set()
        self.wake = asyncio.Event()
        self.send_lock = asyncio.Lock()
        self.connection_id = secrets.token_hex(8)
        self.frames_window = (0, 0)  # (second, client frames in it)
        self.images: collections.deque[tuple[float, int]] = collections.deque()  # (when, markets)
        self.writer: asyncio.Task[None] | None = None
        # The client hears from the server at least every HEARTBEAT_S: a timer per socket checks
        # when it last wrote (no timeout on the writer's every wait).
        self.last_write = time.monotonic()
        self.heartbeat_due = False
        self.idle_timer: asyncio.TimerHandle | None = None
        self.punter: bytes | None = None
        # The cause of a close the server made (the code the client then reports may differ).
        self.closed_by: str | None = None
        await self.accept()
        caps = self._connection_caps()
        full = await get_hub().connection_admit(connection_id=self.connection_id, caps=[(k, c) for k, c, _ in caps])
        if full is not None:
            # Accepted first so the refusal can say why; then closed with a code of its own.
            whose = next(w for k, _, w in caps if k == full)
            await self._error("too_many_connections", f"too many open connections for this {whose}")
            get_hub().socket_refused(cause=events.close_cause(events.CLOSE_TOO_MANY_CONNECTIONS))
            await self.close(code=events.CLOSE_TOO_MANY_CONNECTIONS)
            return
        self.writer = asyncio.create_task(self._write_loop())
        self._idle_check()
        get_hub().socket_opened()
        user = self.scope.get("user")
        if user and user.is_authenticated:
            # The punter's own news (a held bet decided), on every socket of theirs.
            self.punter = keys.punter_channel(user.pk).encode()
            await get_hub().add(self, [self.punter.decode()])
        await self.send(text_data=events.hello(user=user.get_username() if user and user.is_authenticated else None))

    def _connection_caps(self) -> list[tuple[str, int, str]]:
        """The connection caps this socket counts under: per user when logged in, and per client
        address (a separate, lower cap for anonymous sockets)."""
        caps = []
        user = self.scope.get("user")
        authenticated = bool(user and user.is_authenticated)
        if authenticated:
            caps.append(
                (keys.websocket_connections("user", str(user.pk)), settings.WS_MAX_CONNECTIONS_PER_USER, "user")
            )
        client = self.scope.get("client")
        address = client[0] if client else None
        if address and address not in settings.WS_CONNECTION_CAP_EXEMPT_IPS:
            if authenticated:
                caps.append((keys.websocket_connections("ip", address), settings.WS_MAX_CONNECTIONS_PER_IP, "address"))
            else:
                anonymous = keys.websocket_connections("anonymous", address)
                caps.append((anonymous, settings.WS_MAX_ANONYMOUS_CONNECTIONS_PER_IP, "address (anonymous)"))
        return caps

    async def disconnect(self, code: int) -> None:
        for task in tuple(self.background):
            task.cancel()
        await get_hub().connection_release(connection_id=self.connection_id)
        if self.writer is None:
            return  # refused at connect: nothing else was set up
        self.writer.cancel()
        if self.inflight is not None:
            self.inflight.cancel()
        if self.idle_timer is not None:
            self.idle_timer.cancel()
        get_hub().socket_closed(cause=self.closed_by or events.close_cause(code))
        await self.market_channels_remove(list(self.watched))
        await get_hub().remove(self, [name.decode() for name in self.attached])
        if self.punter is not None:
            await get_hub().remove(self, [self.punter.decode()])
        for channel_id in self.attached.values():
            get_hub().channel_detached(channel_id)
        self.attached.clear()
        self.watched.clear()

    # --- delivery (called by the hub for every message on a channel this socket wants) ---

    def deliver(self, channel: bytes, payload: str) -> None:
        if channel == self.punter:
            # In order and never conflated, like a channel's frames.
            self.channel_frames.append(payload)
        elif channel in self.holding:
            self.holding[channel].append(payload)
            return
        elif channel in self.attached:
            if frames.kind(payload) == "ended":
                # The channel is gone: forward the news after the frames before it, and stop
                # following it (a new channel is the client's to create).
                self.channel_frames.append(payload)
                self._background(self._detach(channel))
            elif len(self.channel_frames) >= CHANNEL_QUEUE_LIMIT:
                # Too slow for the bound: drop the queue and send a fresh image instead, flagged
                # as a resync, so the client knows frames were skipped rather than lost.
                self.channel_frames.clear()
                self._background(self._resync(self.attached[channel]))
            else:
                self.channel_frames.append(payload)
                self.channel_seqs[channel] = frames.frame_seq(payload)
        elif frames.kind(payload) == "market.status":
            # Suspensions and reopenings are never conflated away; they precede the market's state.
            self.channel_frames.append(payload)
        else:
            if channel in self.pending:
                self.merged += 1
            self.pending[channel] = payload
        self.wake.set()

    def deliver_tick(self, frame: str, channels: tuple[bytes, ...], moved: dict[bytes, str], replaced: int) -> None:
        self.merged += replaced
        if self._idle() and not self.merged:
            # Nothing queued and nothing being written: the frame goes out now, from the tick
            # itself, with no wake-up of the writer (odds/core/eager.py). A write that has to wait
            # for the client finishes in a task; frames after it queue until it is done.
            try:
                self.inflight = run_eagerly(self.base_send({"type": "websocket.send", "text": frame}))
            except Exception:  # the socket is closing: its disconnect cleans up
                return
            if self.inflight is not None:
                self.inflight.add_done_callback(self._inflight_done)
            self.last_write = time.monotonic()
            return
        if self.ready is None and not self.pending:
            self.ready = (frame, channels, moved)
        else:
            # Still writing an earlier tick: latest wins per market, as for unbatched sockets.
            if self.ready is not None:
                _, earlier, states = self.ready
                self.pending.update((c, states[c]) for c in earlier)
                self.ready = None
            for channel in channels:
                if channel in self.pending:
                    self.merged += 1
                self.pending[channel] = moved[channel]
        self.wake.set()

    def resync(self) -> None:
        """The hub missed messages (its Redis connection was re-established; called before any
        message of the new connection is handed out). Each attached channel's frames are held
        back while the ones missed are read from its log and queued first, so the client sees
        every sequence in order (or a resync image when the log no longer reaches back); the
        watched markets get an image of their stored states (the client keeps the higher
        sequence of what it holds)."""
        for name in self.attached:
            if name not in self.holding:
                self.holding[name] = []
                self._background(self._recover(name))
        if self.watched:
            self._background(self._reimage())

    async def _recover(self, name: bytes) -> None:
        # The subscription was sent again on connect; reading the log a moment later means a
        # frame published after the read is in the held frames, and one before it in the log.
        await asyncio.sleep(RECOVER_DELAY_S)
        channel_id = self.attached.get(name)
        last = self.channel_seqs.get(name)
        logged: list[str] = []
        complete = True
        ended: str | None = None
        if channel_id is not None:
            owner, why, log_key = (
                keys.channel_owner(channel_id),
                keys.channel_ended(channel_id),
                keys.channel_log(channel_id),
            )
            try:
                found, reason, raw = await _read_back(
                    lambda pipe: (pipe.exists(owner), pipe.hget(why, "reason"), pipe.lrange(log_key, 0, -1))
                )
            except Exception:  # Redis away again: a resync image, once the channel is begun again
                complete = False
            else:
                if not found:
                    # Ended while the news could not reach this process, or gone with the store.
                    ended = reason.decode() if reason else LOST
                logged = _log_frames(raw)
                # The log must reach back to the frame after the client's last one.
                complete = last is None or not logged or frames.frame_seq(logged[0]) <= last + 1
        held = self.holding.pop(name, [])
        if channel_id is None:
            return
        if ended is not None:
            # Nothing will come for the channel: the client is told why (``lost`` when Redis
            # came back without it) and subscribes again.
            self.deliver(name, events.ended(channel=channel_id, reason=ended))
            return
        if not complete:
            self._background(self._resync(channel_id))
            logged = []
        newest = last if last is not None else -1
        for frame in [*logged, *held]:
            if frames.kind(frame) == "ended":
                self.deliver(name, frame)
                continue
            seq = frames.frame_seq(frame)
            if seq > newest:
                self.channel_frames.append(frame)
                self.channel_seqs[name] = newest = seq
        self.wake.set()

    async def _reimage(self) -> None:
        await asyncio.sleep(RECOVER_DELAY_S)
        ids = sorted(self.watched)
        try:
            stored = raw_states(ids, await _read_back(lambda pipe: queue_states(pipe, ids)))
        except Exception:
            # Redis refused for longer than the read-back's patience: the client's markets would
            # stand still without a word. It connects again and starts from a fresh image.
            log.warning("markets not read back after the hub reconnected; closing the socket")
            self.closed_by = events.close_cause(events.CLOSE_TRY_AGAIN)
            await self.close(code=events.CLOSE_TRY_AGAIN)
            return
        self.channel_frames.append(events.image(markets=[state.decode() for state in stored.values()]))
        self.wake.set()

    def _idle(self) -> bool:
        return (
            self.inflight is None
            and self.ready is None
            and not self.pending
            and not self.channel_frames
            and not self.send_lock.locked()
            and self.writer is not None
        )

    def _inflight_done(self, task: asyncio.Task[None]) -> None:
        self.inflight = None
        if not task.cancelled() and task.exception() is not None:
            return  # the socket is closing: its disconnect cleans up
        if self.ready is not None or self.pending or self.channel_frames or self.merged:
            self.wake.set()

    def _background(self, work: Any) -> None:
        task = asyncio.create_task(work)
        self.background.add(task)
        task.add_done_callback(self.background.discard)

    async def _detach(self, name: bytes) -> None:
        channel_id = self.attached.pop(name, None)
        self.channel_seqs.pop(name, None)
        self.holding.pop(name, None)
        if channel_id is None:
            return
        get_hub().channel_detached(channel_id)
        await get_hub().remove(self, [name.decode()])

    def _idle_check(self) -> None:
        quiet = time.monotonic() - self.last_write
        if quiet >= HEARTBEAT_S:
            self.heartbeat_due = True
            self.wake.set()
            quiet = 0.0
        self.idle_timer = asyncio.get_running_loop().call_later(HEARTBEAT_S - quiet, self._idle_check)

    async def _write_loop(self) -> None:
        while True:
            await self.wake.wait()
            self.wake.clear()
            if self.inflight is not None:
                # A tick's write still waiting for the client: frames keep their order.
                await asyncio.wait([self.inflight])
            async with self.send_lock:
                # Frames go straight to the server (the consumer's own send adds nothing here).
                send = self.base_send
                while self.channel_frames:
                    await send({"type": "websocket.send", "text": self.channel_frames.popleft()})
                if self.ready is not None:
                    frame = self.ready[0]
                    self.ready = None
                    await send({"type": "websocket.send", "text": frame})
                batch, self.pending = self.pending, {}
                if self.batch_frames and len(batch) > 1:
                    await send({"type": "websocket.send", "text": events.markets_batch(items=batch.values())})
                else:
                    for payload in batch.values():
                        await send({"type": "websocket.send", "text": payload})
                if self.merged:
                    # Older prices replaced before they were sent: say how many, never drop silently.
                    await send({"type": "websocket.send", "text": events.conflated(merged=self.merged)})
                    self.merged = 0
                if self.heartbeat_due:
                    # Only for the client: the channels' sign of life is the hub's keep-alive,
                    # sent whatever the traffic.
                    self.heartbeat_due = False
                    await send({"type": "websocket.send", "text": events.heartbeat(ts=int(time.time() * 1000))})
                self.last_write = time.monotonic()

    # --- client messages ---

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        raw = text_data if text_data is not None else bytes_data
        if self._too_many_frames():
            await self._error(
                "rate_limited", f"at most {settings.WS_MAX_FRAMES_PER_S} frames a second; this one was ignored"
            )
            return
        if raw is None or len(raw) > settings.WS_MAX_FRAME_BYTES:
            await self._error("frame_too_large", "frame exceeds the size limit")
            return
        try:
            message = frames.CLIENT_MESSAGE.validate_json(raw)
        except ValidationError as exc:
            await self._error(*_refusal(exc))
            return
        if message["type"] == "watch":
            if message.get("batch"):
                self.batch_frames = True
            await self._watch(list(dict.fromkeys(message["markets"])), message.get("since", {}))
        elif message["type"] == "unwatch":
            ids = list(dict.fromkeys(message["markets"]))
            await self.market_channels_remove(ids)
            self.watched.difference_update(ids)
        elif message["type"] == "attach":
            await self._attach(message["channel"], message.get("last_seq"))
        else:
            await self.send(text_data=events.pong(ts=int(time.time() * 1000)))

    async def market_channels_add(self, market_ids: list[int]) -> None:
        """Follow the markets' price channels (through the process's hub)."""
        # Never "add nothing": the hub's reader would start on a pub-sub that has no
        # connection yet and die with a RuntimeError (found by the property tests).
        if market_ids:
            await get_hub().add(self, [keys.market_channel(m) for m in market_ids], batched=self.batch_frames)

    async def market_channels_remove(self, market_ids: list[int]) -> None:
        await get_hub().remove(self, [keys.market_channel(m) for m in market_ids])

    def _too_many_frames(self) -> bool:
        """Counts this client frame in the current second; True above the per-second limit."""
        second = int(time.monotonic())
        window, count = self.frames_window
        count = count + 1 if window == second else 1
        self.frames_window = (second, count)
        return count > settings.WS_MAX_FRAMES_PER_S

    def _image_budget_left(self, *, markets: int) -> bool:
        """Whether images of ``markets`` more markets fit the per-minute budget (and count them)."""
        now = time.monotonic()
        while self.images and self.images[0][0] <= now - IMAGE_WINDOW_S:
            self.images.popleft()
        if sum(n for _, n in self.images) + markets > settings.WS_MAX_IMAGE_MARKETS_PER_MIN:
            return False
        self.images.append((now, markets))
        return True

    async def _error(self, code: str, message: str) -> None:
        await self.send(text_data=events.error(code=code, message=message))

    async def _watch(self, ids: list[int], since: dict[int, tuple[int, str]]) -> None:
        if len(self.watched | set(ids)) > settings.WS_MAX_MARKETS:
            await self._error("too_many_markets", f"at most {settings.WS_MAX_MARKETS} markets")
            return
        if not self._image_budget_left(markets=len(ids)):
            limit = settings.WS_MAX_IMAGE_MARKETS_PER_MIN
            await self._error("image_budget_exceeded", f"images of at most {limit} markets a minute; watch later")
            return
        async with self.send_lock:
            # Subscribe before reading the image: an update landing in between is queued and
            # sent after the image, and the client keeps the higher sequence of the two.
            if ids:
                await self.market_channels_add(ids)
            self.watched.update(ids)
            pipe = get_hub().client().pipeline(transaction=False)
            queue_states(pipe, ids)
            stored = raw_states(ids, await pipe.execute())
            states = [
                state.decode()
                for market_id, state in stored.items()
                if market_id not in since or not state_is_held(since[market_id], frames.read_market(state))
            ]
            await self.send(text_data=events.image(markets=states))

    async def _attach(self, channel_id: str, last_seq: int | None) -> None:
        user = self.scope.get("user")
        session = self.scope.get("session")
        authenticated = bool(user and user.is_authenticated)
        session_key = session.session_key if session else None
        owned = authenticated and await sync_to_async(channel_owned_by)(
            channel_id=channel_id, user_id=user.pk, session_key=session_key
        )
        if not owned:
            reason = authenticated and await sync_to_async(channel_end_reason)(
                channel_id=channel_id, user_id=user.pk, session_key=session_key
            )
            if reason:
                await self.send(text_data=events.ended(channel=channel_id, reason=reason))
            else:
                await self._error("not_your_channel", "no such channel for this session")
            return
        name = keys.subscriber_channel(channel_id)
        async with self.send_lock:
            await get_hub().add(self, [name])
            if name.encode() not in self.attached:
                get_hub().channel_attached(channel_id)
            self.attached[name.encode()] = channel_id
            await self.send(text_data=events.attached(channel=channel_id))
            if last_seq is not None:
                await self._resume(channel_id, last_seq)
        await sync_to_async(stream_touch)(channel_id=channel_id)

    async def _resume(self, channel_id: str, last_seq: int) -> None:
        """Send the frames after ``last_seq`` from the channel's log, or ask for a resync image."""
        logged = _log_frames(await get_hub().client().lrange(keys.channel_log(channel_id), 0, -1))
        missed = [f for f in logged if frames.frame_seq(f) > last_seq]
        newest = frames.frame_seq(logged[-1]) if logged else 0
        complete = bool(logged) and frames.frame_seq(logged[0]) <= last_seq + 1 and newest >= last_seq
        if complete:
            await self.send(
                text_data=events.resumed(channel=channel_id, after=last_seq, count=len(missed), resync=False)
            )
            for frame in missed:
                await self.send(text_data=frame)
            if missed:
                self.channel_seqs[keys.subscriber_channel(channel_id).encode()] = frames.frame_seq(missed[-1])
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
