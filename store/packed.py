"""Redis commands packed by the caller, for writes of many thousand arguments at once.

redis-py checks and encodes every argument of every command, one call each; for a goal's
settlement (100,000 punters' states, their points on two leaderboards, the lookup of their game
channels: some 700,000 arguments) that was half the time of the writes. Here the caller's
arguments are already bytes or whole numbers, and a command is packed in one pass
(``command``); ``execute`` sends a list of packed commands on one connection of the client's
pool and reads their replies, as a pipeline without a transaction does, retried as the client's
commands are (the commands given here must be safe to send twice: new values, never increments).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import redis

# One argument: its length, then itself.
_BULK = b"$%d\r\n%b\r\n"
_PAIR = b"$%d\r\n%b\r\n$%d\r\n%b\r\n"


def _head(name: bytes, count: int) -> bytes:
    return b"*%d\r\n$%d\r\n%b\r\n" % (count + 1, len(name), name)


def command(name: bytes, *args: bytes) -> bytes:
    """A command of a few arguments, packed."""
    return _head(name, len(args)) + b"".join([_BULK % (len(a), a) for a in args])


def mset(pairs: Sequence[tuple[bytes, bytes]]) -> bytes:
    """``MSET key value ...`` of ``(key, value)`` pairs."""
    return _head(b"MSET", 2 * len(pairs)) + b"".join([_PAIR % (len(k), k, len(v), v) for k, v in pairs])


def zadd(key: bytes, scored: Sequence[tuple[bytes, int]]) -> bytes:
    """``ZADD key score member ...`` of ``(member, score)`` pairs, scores whole numbers."""
    scores = [b"%d" % score for _, score in scored]
    return (
        _head(b"ZADD", 1 + 2 * len(scored))
        + _BULK % (len(key), key)
        + b"".join([_PAIR % (len(s), s, len(m), m) for (m, _), s in zip(scored, scores, strict=True)])
    )


def hmget(key: bytes, fields: Sequence[bytes]) -> bytes:
    """``HMGET key field ...``."""
    return _head(b"HMGET", 1 + len(fields)) + _BULK % (len(key), key) + b"".join([_BULK % (len(f), f) for f in fields])


def execute(client: redis.Redis, commands: Iterable[bytes]) -> list[Any]:
    """Send the packed commands on one connection and return their replies in order. A reply
    that is an error raises it once every reply is read (the connection stays usable); a lost
    connection is retried by the client's retry policy, all the commands sent again."""
    packed = list(commands)
    if not packed:
        return []
    pool = client.connection_pool
    connection = pool.get_connection()
    try:
        replies = connection.retry.call_with_retry(
            lambda: _round_trip(connection, packed), lambda _error: connection.disconnect()
        )
    except BaseException:
        connection.disconnect()
        raise
    finally:
        pool.release(connection)
    for reply in replies:
        if isinstance(reply, redis.ResponseError):
            raise reply
    return replies


def _round_trip(connection: Any, packed: list[bytes]) -> list[Any]:
    connection.send_packed_command(packed)
    replies = []
    for _ in packed:
        try:
            replies.append(connection.read_response())
        except redis.ResponseError as error:
            replies.append(error)
    return replies
