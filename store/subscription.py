"""One Redis pub-sub connection, read on an asyncio protocol.

A process's websocket hub reads every published message of its channels on one connection. Read
through redis-py's pub-sub, each message woke a reader task and went through the client's
retry wrapper and reply dispatch: 68 µs of CPU a message published one at a time, against 34 µs
when the bytes are parsed where they arrive, in the protocol's ``data_received``, and handed on
from there (bench/PROFILES.md, "The hub's Redis read").

redis-py still makes the connection: its URL, TLS, unix sockets, AUTH, database and the
Sentinel's master lookup are its own. Once the connection is up, its transport's protocol is
replaced by ``_Reader``, which parses with hiredis and calls ``on_message(channel, data)`` for
each published message. The connection's end, its flow control and its EOF still reach
redis-py's stream, so closing it goes through redis-py as always.

The channels subscribed are kept here, and subscribed again on every new connection. A connection
lost (closed, failed, or silent past two pings) is made again every ``retry_s`` until one is up;
``on_reconnect`` is called before the new connection's first subscribe, so whatever the process
missed while it was down can be read from the store before the next message arrives.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from typing import Any

import hiredis
import redis.asyncio as aioredis

from store.clients import async_redis_client

log = logging.getLogger(__name__)

MESSAGE = b"message"


def _command(*parts: bytes) -> bytes:
    """A command in Redis's protocol."""
    out = [b"*%d\r\n" % len(parts)]
    for part in parts:
        out.append(b"$%d\r\n%s\r\n" % (len(part), part))
    return b"".join(out)


class _Reader(asyncio.Protocol):
    """Parses what the server sends and hands each published message on as it arrives; all
    else but the data (the end, flow control, EOF) goes to the protocol it replaced."""

    def __init__(
        self,
        transport: asyncio.Transport,
        on_message: Callable[[bytes, bytes], None],
        lost: asyncio.Future[None],
    ) -> None:
        self._transport = transport
        self._replaced: Any = transport.get_protocol()
        self._on_message = on_message
        self._lost = lost
        self._parser = hiredis.Reader()
        self.heard = False  # anything received since the last look

    def data_received(self, data: bytes) -> None:
        self.heard = True
        self._parser.feed(data)
        while True:
            try:
                reply = self._parser.gets()
            except hiredis.ProtocolError as exc:  # the stream cannot be read past this
                log.warning("pub-sub connection sent what is not Redis's protocol: %s", exc)
                self._transport.close()  # its end is reported by connection_lost
                return
            if reply is False:
                return
            # A published message is [b"message", channel, data]; confirmations of subscribe
            # and unsubscribe and the answers to pings need nothing.
            if isinstance(reply, list) and len(reply) == 3 and reply[0] == MESSAGE:
                try:
                    self._on_message(reply[1], reply[2])
                except Exception:  # one listener's fault must not end the connection
                    log.exception("a published message on %r was not handed on", reply[1])
            elif isinstance(reply, hiredis.ReplyError):
                log.warning("pub-sub connection answered an error: %s", reply)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self._lost.done():
            self._lost.set_result(None)
        self._replaced.connection_lost(exc)

    def eof_received(self) -> bool | None:
        self._replaced.eof_received()
        return False  # closed: nothing more is sent on a connection the server ended

    def pause_writing(self) -> None:
        self._replaced.pause_writing()

    def resume_writing(self) -> None:
        self._replaced.resume_writing()


class Subscription:
    """The process's pub-sub connection: ``subscribe``/``unsubscribe`` take effect at once when
    connected and on every later connection; ``run`` keeps a connection up until cancelled."""

    def __init__(
        self,
        redis_url: str,
        *,
        on_message: Callable[[bytes, bytes], None],
        on_reconnect: Callable[[], None],
        retry_s: float = 0.5,
        ping_s: float = 5.0,
    ) -> None:
        self._client: aioredis.Redis = async_redis_client(redis_url)
        self._on_message = on_message
        self._on_reconnect = on_reconnect
        self._retry_s = retry_s
        self._ping_s = ping_s
        self._channels: set[bytes] = set()
        self._transport: asyncio.Transport | None = None
        self.connections = 0  # connections made, the first included

    @property
    def channels(self) -> frozenset[bytes]:
        return frozenset(self._channels)

    @property
    def address(self) -> tuple[str, int] | None:
        """The connection's local address (host, port) while connected over TCP."""
        if self._transport is None:
            return None
        name = self._transport.get_extra_info("sockname")
        return (name[0], name[1]) if isinstance(name, tuple) else None

    def subscribe(self, channels: Iterable[bytes]) -> None:
        new = [c for c in channels if c not in self._channels]
        self._channels.update(new)
        if new and self._transport is not None:
            self._transport.write(_command(b"SUBSCRIBE", *new))

    def unsubscribe(self, channels: Iterable[bytes]) -> None:
        gone = [c for c in channels if c in self._channels]
        self._channels.difference_update(gone)
        if gone and self._transport is not None:
            self._transport.write(_command(b"UNSUBSCRIBE", *gone))

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            connection = self._client.connection_pool.make_connection()
            try:
                await connection.connect()
            except (OSError, aioredis.RedisError) as exc:  # down, refused, wrong password, no master
                log.warning("pub-sub connection not made (%s); trying again in %.1f s", exc, self._retry_s)
                await asyncio.sleep(self._retry_s)
                continue
            lost: asyncio.Future[None] = loop.create_future()
            # redis-py keeps the stream's writer private; its transport is asyncio's own.
            transport = connection._writer.transport
            reader = _Reader(transport, self._on_message, lost)
            transport.set_protocol(reader)
            self.connections += 1
            try:
                if self.connections > 1:
                    # Before the first subscribe: no message of this connection is handed on
                    # until the process has been told it missed some.
                    try:
                        self._on_reconnect()
                    except Exception:  # the connection is still wanted
                        log.exception("pub-sub reconnect not handled")
                self._transport = transport
                if self._channels:
                    transport.write(_command(b"SUBSCRIBE", *self._channels))
                await self._watch(transport, reader, lost)
                log.warning("hub's pub-sub connection to Redis lost; connecting again")
            finally:
                self._transport = None
                transport.close()
                try:
                    await connection.disconnect()
                except Exception as exc:  # already gone: nothing to give back
                    log.debug("pub-sub connection's close: %s", exc)

    async def _watch(self, transport: asyncio.Transport, reader: _Reader, lost: asyncio.Future[None]) -> None:
        """Return when the connection ends, or when a ping finds it silent: a connection the
        network dropped without a word would otherwise be read from for ever."""
        silent = 0
        while True:
            done, _ = await asyncio.wait((lost,), timeout=self._ping_s)
            if done:
                return
            if reader.heard:
                reader.heard, silent = False, 0
            else:
                silent += 1
                if silent > 2:
                    log.warning("pub-sub connection silent past two pings; closing it")
                    return
            transport.write(_command(b"PING"))
