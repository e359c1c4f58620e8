"""Websocket consumer: public market prices (watch), match states (watch with events), the
predictor games' public frames (watch with games), subscriber channels (attach), shared query
channels (query) and, for staff, the trading desk's channels (desk).

The consumer does the I/O; the socket's protocol state and its decisions (latest-wins per market,
channel frames in order with a resync past the bound, recovery holds, frame and image budgets)
are its ``Session`` (odds/streaming/session.py).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Callable
from typing import Any

import orjson
from asgiref.sync import sync_to_async
from channels.consumer import get_handler_name
from channels.exceptions import StopConsumer
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
    channel_renumber,
    stream_begin,
    stream_share,
    stream_touch,
)
from odds.streaming.session import (
    Action,
    Detach,
    EndSession,
    Limits,
    Recover,
    Reimage,
    Resync,
    Session,
    session_digest,
)
from reducers import frames
from reducers.prices import state_is_held
from reducers.schemas import InvalidRecord
from reducers.subscriptions import LOST, is_shared_channel, query_from_json
from store.channels import (
    channel_log_read,
    connections_counted,
    punter_channel_name,
    queue_recovery,
    recovery,
    shared_image,
    subscriber_channel_name,
)
from store.game import game_channels, game_state_texts, queue_games
from store.liability import desk_channels
from store.markets import price_channels, queue_states, raw_states
from store.matches import match_channels, queue_matches, raw_matches

log = logging.getLogger(__name__)

HEARTBEAT_S = 15.0
# After the hub's subscription is re-established, channels and markets are read back from Redis
# this long later (the subscriptions sent again on connect are in place by then).
RECOVER_DELAY_S = 0.2
# How long a read-back keeps trying while Redis refuses it (a failover's promotion takes seconds,
# and Sentinel drops the clients of the promoted replica once more), waiting up to
# READ_BACK_MAX_WAIT_S between attempts. Past it the socket is closed, so its client connects
# again and starts from a fresh image rather than hold prices it can no longer see move.
READ_BACK_PATIENCE_S = 30.0
READ_BACK_MAX_WAIT_S = 1.0


def _refusal(exc: ValidationError, raw: str | bytes) -> tuple[str, str]:
    """The ``error`` frame's code and message for a client message its definition refuses
    (``reducers.frames.ClientMessage``): the first problem, as docs/protocol.md lists them. The
    parser reads ``NaN`` and ``Infinity`` as numbers; strict JSON (RFC 8259) has neither, so a
    refused frame that strict JSON refuses too is ``bad_json``."""
    problem = exc.errors(include_url=False)[0]
    kind, where = problem["type"], problem["loc"]
    if kind != "json_invalid":
        try:
            orjson.loads(raw)
        except orjson.JSONDecodeError:
            kind = "json_invalid"
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


class Wake:
    """The writer's wake-up: ``asyncio.Event``'s ``set``, ``clear`` and ``wait`` for one waiter,
    without the Event's deque of waiters (an empty deque holds a block of 64 slots: 0.7 KiB on
    every socket). Only the socket's writer waits on it."""

    __slots__ = ("_set", "_waiter")

    def __init__(self) -> None:
        self._set = False
        self._waiter: asyncio.Future[None] | None = None

    def is_set(self) -> bool:
        return self._set

    def set(self) -> None:
        if not self._set:
            self._set = True
            if self._waiter is not None and not self._waiter.done():
                self._waiter.set_result(None)

    def clear(self) -> None:
        self._set = False

    async def wait(self) -> None:
        if self._set:
            return
        self._waiter = asyncio.get_running_loop().create_future()
        try:
            await self._waiter
        finally:
            self._waiter = None


def _session_digest(scope: Any) -> str | None:
    session = scope.get("session")
    key = session.session_key if session is not None else None
    return session_digest(key) if key else None


class OddsConsumer(AsyncWebsocketConsumer):
    """The I/O of one websocket: the hub's subscriptions, Redis reads, writes to the client. What
    the socket follows, what it owes its client and what each event means is its ``Session``
    (``odds.streaming.session``), whose actions this carries out."""

    # Nothing reaches a socket through Channels' channel layer (the hub delivers), so a socket
    # takes no channel of it: no Redis subscription of its own and no second receive loop.
    channel_layer_alias = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """Channels' ``AsyncConsumer.__call__`` for a consumer with no channel layer: the client's
        messages dispatched one after another, awaited straight from ``receive``. Channels' loop
        (``await_many_dispatch``) wraps every ``receive`` in a task of its own and waits for it
        with ``asyncio.wait``: a task, its coroutine and a waiter held for the socket's life. A
        subclass that takes a channel layer (the benchmark's plain Channels edge) keeps Channels'."""
        if self.channel_layer_alias is not None:
            return await super().__call__(scope, receive, send)
        self.scope = scope
        self.channel_layer: Any = None
        self.base_send = send
        try:
            while True:
                await self.dispatch(await receive())
        except StopConsumer:
            pass

    async def dispatch(self, message: dict[str, Any]) -> None:
        """Channels' dispatch without its ``close_old_connections`` before every message: a hop
        to a thread per client message, for database connections this consumer never opens (its
        blocking calls are Redis and Kafka; the handshake's user is read on the asyncio pool)."""
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

    async def connect(self) -> None:
        user = self.scope.get("user")
        authenticated = bool(user and user.is_authenticated)
        self.session = Session(
            limits=Limits(
                frames_per_s=settings.WS_MAX_FRAMES_PER_S,
                image_markets_per_min=settings.WS_MAX_IMAGE_MARKETS_PER_MIN,
                markets=settings.WS_MAX_MARKETS,
                events=settings.WS_MAX_EVENTS,
            ),
            # The punter's own news (a held bet decided), on every socket of theirs.
            punter=punter_channel_name(user.pk).encode() if authenticated else None,
            # Which of the punter's sessions this socket is, for a session that ends.
            session_digest=_session_digest(self.scope),
        )
        # A write started by a tick that had to wait for the client (see deliver_tick).
        self.inflight: asyncio.Task[None] | None = None
        self.background: set[asyncio.Task[None]] = set()
        self.wake = Wake()
        self.send_lock = asyncio.Lock()
        self.connection_id = secrets.token_hex(8)
        self.writer: asyncio.Task[None] | None = None
        # The client hears from the server at least every HEARTBEAT_S: a timer per socket checks
        # when it last wrote (no timeout on the writer's every wait).
        self.last_write = time.monotonic()
        self.idle_timer: asyncio.TimerHandle | None = None
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
            self._handshake_done()
            return
        self.writer = asyncio.create_task(self._write_loop())
        self._idle_check()
        get_hub().socket_opened()
        if self.session.punter is not None:
            await get_hub().add(self, [self.session.punter.decode()])
        await self.send(text_data=events.hello(user=user.get_username() if authenticated else None))
        self._handshake_done()

    def _handshake_done(self) -> None:
        """The next waiting handshake may go on (``webapp.admission``: a few at a time)."""
        done = self.scope.get("handshake_done")
        if done is not None:
            done()

    def _connection_caps(self) -> list[tuple[str, int, str]]:
        """The connection caps this socket counts under: per user when logged in, and per client
        address (a separate, lower cap for anonymous sockets)."""
        caps = []
        user = self.scope.get("user")
        authenticated = bool(user and user.is_authenticated)
        if authenticated:
            caps.append((connections_counted("user", str(user.pk)), settings.WS_MAX_CONNECTIONS_PER_USER, "user"))
        client = self.scope.get("client")
        address = client[0] if client else None
        if address and address not in settings.WS_CONNECTION_CAP_EXEMPT_IPS:
            if authenticated:
                caps.append((connections_counted("ip", address), settings.WS_MAX_CONNECTIONS_PER_IP, "address"))
            else:
                anonymous = connections_counted("anonymous", address)
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
        session = self.session
        await self.market_channels_remove(list(session.watched))
        followed = [*session.attached, *session.followed, *session.games, *session.desk]
        if session.punter is not None:
            followed.append(session.punter)
        await get_hub().remove(self, [name.decode() for name in followed])
        for channel_id in session.attached.values():
            get_hub().channel_detached(channel_id)
        session.attached.clear()
        session.watched.clear()
        session.followed.clear()
        session.games.clear()
        session.desk.clear()

    # --- delivery (called by the hub for every message on a channel this socket wants) ---

    def deliver(self, channel: bytes, payload: str) -> None:
        self._carry_out(self.session.deliver(channel, payload))
        self.wake.set()

    def deliver_tick(self, frame: str, channels: tuple[bytes, ...], moved: dict[bytes, str], replaced: int) -> None:
        if not self.session.deliver_tick(frame, channels, moved, replaced, idle=self._idle()):
            self.wake.set()
            return
        # Nothing queued and nothing being written: the frame goes out now, from the tick itself,
        # with no wake-up of the writer (odds/core/eager.py). A write that has to wait for the
        # client finishes in a task; frames after it queue until it is done.
        try:
            self.inflight = run_eagerly(self.base_send({"type": "websocket.send", "text": frame}))
        except Exception:  # the socket is closing: its disconnect cleans up
            return
        if self.inflight is not None:
            self.inflight.add_done_callback(self._inflight_done)
        self.last_write = time.monotonic()

    def resync(self) -> None:
        """The hub missed messages (its Redis connection was re-established; called before any
        message of the new connection is handed out): each attached channel's frames are held
        back while the ones missed are read from its log and queued first, so the client sees
        every sequence in order (or a resync image when the log no longer reaches back); the
        watched markets and followed events get an image of their stored states (the client keeps
        the higher sequence of what it holds)."""
        self._carry_out(self.session.hub_reconnected())

    def _carry_out(self, actions: list[Action]) -> None:
        for action in actions:
            match action:
                case Detach(name=name, channel_id=channel_id):
                    self._background(self._detach(name, channel_id))
                case Resync(channel_id=channel_id, floor=floor):
                    self._background(self._resync(channel_id, floor=floor))
                case Recover():
                    self._background(self._recover(action))
                case Reimage():
                    self._background(self._reimage(action))
                case EndSession():
                    self._background(self._session_ended(action))

    async def _recover(self, action: Recover) -> None:
        # The subscription was sent again on connect; reading the log a moment later means a
        # frame published after the read is in the held frames, and one before it in the log.
        await asyncio.sleep(RECOVER_DELAY_S)
        logged: list[str] | None
        ended = None
        try:
            found = recovery(await _read_back(lambda pipe: queue_recovery(pipe, action.channel_id)))
        except Exception:  # Redis away again: a resync image, once the channel is begun again
            logged = None
        else:
            if not found.alive:
                # Ended while the news could not reach this process, or gone with the store.
                ended = found.ended or LOST
            logged = found.logged
        self._carry_out(self.session.recovered(action.name, logged=logged, ended=ended))
        self.wake.set()

    async def _reimage(self, action: Reimage) -> None:
        await asyncio.sleep(RECOVER_DELAY_S)
        ids, event_ids, game_ids = list(action.markets), list(action.events), list(action.games)

        def queue(pipe: Any) -> None:
            queue_states(pipe, ids)
            queue_matches(pipe, event_ids)
            queue_games(pipe, game_ids)

        try:
            replies = await _read_back(queue)
        except Exception:
            # Redis refused for longer than the read-back's patience: the client's markets would
            # stand still without a word. It connects again and starts from a fresh image.
            log.warning("markets not read back after the hub reconnected; closing the socket")
            self.closed_by = events.close_cause(events.CLOSE_TRY_AGAIN)
            await self.close(code=events.CLOSE_TRY_AGAIN)
            return
        if ids:
            stored = raw_states(ids, replies[: len(ids)])
            self.session.ordered.append(events.image(markets=[state.decode() for state in stored.values()]))
        if event_ids:
            found = raw_matches(event_ids, replies[len(ids) : len(ids) + len(event_ids)])
            self.session.ordered.append(events.matches(items=[state.decode() for state in found.values()]))
        self.session.ordered.extend(game_state_texts(game_ids, replies[len(ids) + len(event_ids) :]))
        self.wake.set()

    def _idle(self) -> bool:
        return (
            self.inflight is None
            and not self.session.owes()
            and not self.send_lock.locked()
            and self.writer is not None
        )

    def _inflight_done(self, task: asyncio.Task[None]) -> None:
        self.inflight = None
        if not task.cancelled() and task.exception() is not None:
            return  # the socket is closing: its disconnect cleans up
        if self.session.owes():
            self.wake.set()

    def _background(self, work: Any) -> None:
        task = asyncio.create_task(work)
        self.background.add(task)
        task.add_done_callback(self.background.discard)

    async def _detach(self, name: bytes, channel_id: str) -> None:
        get_hub().channel_detached(channel_id)
        await get_hub().remove(self, [name.decode()])

    def _idle_check(self) -> None:
        quiet = time.monotonic() - self.last_write
        if quiet >= HEARTBEAT_S:
            self.session.heartbeat_due = True
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
                for text in self.session.take(now_ms=int(time.time() * 1000)):
                    await self.base_send({"type": "websocket.send", "text": text})
                self.last_write = time.monotonic()

    # --- client messages ---

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        raw = text_data if text_data is not None else bytes_data
        if not self.session.frame_allowed(second=int(time.monotonic())):
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
            await self._error(*_refusal(exc, raw))
            return
        if message["type"] == "watch":
            if message.get("batch"):
                self.session.batched = True
            await self._watch(
                list(dict.fromkeys(message["markets"])),
                message.get("since", {}),
                list(dict.fromkeys(message.get("events", []))),
                list(dict.fromkeys(message.get("games", []))),
            )
        elif message["type"] == "unwatch":
            ids = list(dict.fromkeys(message["markets"]))
            await self.market_channels_remove(ids)
            self.session.unwatch(ids)
            await get_hub().remove(self, self.session.unfollow(match_channels(message.get("events", []))))
            await get_hub().remove(self, self.session.unfollow_games(game_channels(message.get("games", []))))
        elif message["type"] == "attach":
            if is_shared_channel(message["channel"]):
                await self._attach_shared(message["channel"], message.get("last_seq"))
            else:
                await self._attach(message["channel"], message.get("last_seq"))
        elif message["type"] == "query":
            await self._follow_query(message["query"], message.get("last_seq"))
        elif message["type"] == "desk":
            await self._follow_desk()
        else:
            await self.send(text_data=events.pong(ts=int(time.time() * 1000)))

    async def market_channels_add(self, market_ids: list[int]) -> None:
        """Follow the markets' price channels (through the process's hub)."""
        # Never "add nothing": the hub's reader would start on a pub-sub that has no
        # connection yet and die with a RuntimeError (found by the property tests).
        if market_ids:
            await get_hub().add(self, price_channels(market_ids), batched=self.session.batched)

    async def market_channels_remove(self, market_ids: list[int]) -> None:
        await get_hub().remove(self, price_channels(market_ids))

    async def _session_ended(self, action: EndSession) -> None:
        """The punter's session ended (``odds.streaming.services.sessions``): say why, then close."""
        self.closed_by = events.close_cause(events.CLOSE_SESSION_ENDED)
        await self.send(text_data=events.session_ended(reason=action.reason))
        await self.close(code=events.CLOSE_SESSION_ENDED)

    async def _error(self, code: str, message: str) -> None:
        await self.send(text_data=events.error(code=code, message=message))

    async def _watch(
        self, ids: list[int], since: dict[int, tuple[int, str]], event_ids: list[int], game_ids: list[int]
    ) -> None:
        names = match_channels(event_ids)
        games = game_channels(game_ids)
        refusal = self.session.watch_refusal(ids, names, games)
        if refusal is not None:
            await self._error(*refusal)
            return
        if not self.session.image_allowed(markets=len(ids) + len(event_ids) + len(game_ids), now=time.monotonic()):
            limit = settings.WS_MAX_IMAGE_MARKETS_PER_MIN
            await self._error("image_budget_exceeded", f"images of at most {limit} markets a minute; watch later")
            return
        async with self.send_lock:
            # Subscribe before reading the image: an update landing in between is queued and
            # sent after the image, and the client keeps the higher sequence of the two.
            if ids:
                await self.market_channels_add(ids)
            if event_ids:
                await get_hub().add(self, names)
                self.session.follow(names, event_ids)
            if game_ids:
                await get_hub().add(self, games)
                self.session.follow_games(games, game_ids)
            self.session.watch(ids)
            pipe = get_hub().client().pipeline(transaction=False)
            queue_states(pipe, ids)
            queue_matches(pipe, event_ids)
            queue_games(pipe, game_ids)
            replies = await pipe.execute()
            stored = raw_states(ids, replies[: len(ids)])
            states = [
                state.decode()
                for market_id, state in stored.items()
                if market_id not in since or not state_is_held(since[market_id], frames.read_market(state))
            ]
            if ids or not (event_ids or game_ids):
                await self.send(text_data=events.image(markets=states))
            if event_ids:
                found = raw_matches(event_ids, replies[len(ids) : len(ids) + len(event_ids)])
                await self.send(text_data=events.matches(items=[state.decode() for state in found.values()]))
            for text in game_state_texts(game_ids, replies[len(ids) + len(event_ids) :]):
                await self.send(text_data=text)

    async def _follow_desk(self) -> None:
        """Follow the trading desk's ticker, liability and movers channels: staff only, checked here
        (the server's side of the socket), whatever page opened it."""
        user = self.scope.get("user")
        if not (user and user.is_authenticated and user.is_staff):
            await self._error("staff_only", "the trading desk's channels are for staff only")
            return
        if not self.scope.get("second_factor"):
            # As for staff pages (odds.accounts.gate): a password alone does not open the desk.
            await self._error(
                "second_factor_required", "the trading desk's channels need a second factor: sign in with your code"
            )
            return
        names = desk_channels()
        await get_hub().add(self, names)
        self.session.follow_desk(names)
        await self.send(text_data=events.desk_followed(channels=["ticker", "liability", "movers"]))

    def _follow(self, channel_id: str) -> bytes:
        name = subscriber_channel_name(channel_id).encode()
        if self.session.attach(name, channel_id):
            get_hub().channel_attached(channel_id)
        return name

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
        async with self.send_lock:
            await get_hub().add(self, [subscriber_channel_name(channel_id)])
            self._follow(channel_id)
            await self.send(text_data=events.attached(channel=channel_id))
            if last_seq is not None:
                await self._resume(channel_id, last_seq)
        await sync_to_async(stream_touch)(channel_id=channel_id)

    async def _follow_query(self, raw: dict[str, Any], last_seq: int | None) -> None:
        """Follow the query's shared channel, asking the reducers for it when there is none yet
        (anyone may: the lists a visitor sees are queries too)."""
        try:
            query = query_from_json(raw)
        except InvalidRecord as exc:
            await self._error("bad_query", exc.detail or "query is not a query")
            return
        assert query is not None  # the message's query is an object
        user = self.scope.get("user")
        try:
            channel_id = await sync_to_async(stream_share)(
                query=query, user_id=user.pk if user and user.is_authenticated else None
            )
        except StreamError as exc:
            await self._error(exc.code, exc.message)
            return
        await self._attach_shared(channel_id, last_seq, query=query.to_json())

    async def _attach_shared(
        self, channel_id: str, last_seq: int | None, *, query: dict[str, Any] | None = None
    ) -> None:
        """Follow a shared query channel: no owner to check. Without ``last_seq`` the socket gets
        the channel's image now (every market it holds, at its current sequence); a channel the
        reducers are still making publishes its first image itself."""
        async with self.send_lock:
            await get_hub().add(self, [subscriber_channel_name(channel_id)])
            self._follow(channel_id)
            await self.send(text_data=events.attached(channel=channel_id, query=query))
            if last_seq is not None:
                await self._resume(channel_id, last_seq)
            else:
                image = await self._shared_image_frame(channel_id)
                if image is not None:
                    await self.send(text_data=image)
        await sync_to_async(stream_touch)(channel_id=channel_id)

    async def _shared_image_frame(self, channel_id: str) -> str | None:
        """A shared channel's image at its current sequence, read in one transaction (every
        frame after it has a higher sequence); None while the reducers are still making it."""
        return await shared_image(get_hub().client(), channel_id)

    async def _resume(self, channel_id: str, last_seq: int) -> None:
        """Send the frames after ``last_seq`` from the channel's log, or ask for a resync image."""
        logged = await channel_log_read(get_hub().client(), channel_id)
        missed = [f for f in logged if frames.frame_seq(f) > last_seq]
        newest = frames.frame_seq(logged[-1]) if logged else 0
        complete = bool(logged) and frames.frame_seq(logged[0]) <= last_seq + 1 and newest >= last_seq
        if complete:
            await self.send(
                text_data=events.resumed(channel=channel_id, after=last_seq, count=len(missed), resync=False)
            )
            for frame in missed:
                await self.send(text_data=frame)
            self.session.resumed(subscriber_channel_name(channel_id).encode(), missed, logged=logged)
        else:
            await self.send(text_data=events.resumed(channel=channel_id, after=last_seq, count=0, resync=True))
            # A log ending below the client's newest frame: the numbering went back (a Redis
            # failover); the image is numbered past what the client holds, or it would drop it.
            await self._resync(channel_id, floor=last_seq + 1 if logged and newest < last_seq else None)

    async def _resync(self, channel_id: str, *, floor: int | None = None) -> None:
        if floor is not None:
            # The channel's numbering went back: the image is numbered past what the client has.
            try:
                await sync_to_async(channel_renumber)(channel_id=channel_id, at_least=floor)
            except Exception:  # Redis away again: the image comes, numbered as Redis has it
                log.warning("channel %s not renumbered past %s", channel_id, floor)
        if is_shared_channel(channel_id):
            # A shared channel's image is read here, not asked of the reducers.
            image = await self._shared_image_frame(channel_id)
            if image is not None:
                self.session.ordered.append(image)
                self.wake.set()
            return
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
