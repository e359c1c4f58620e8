"""The stream control API's services: create a subscriber channel, begin, change, end it.

Each operation becomes a command on the command topic; the reducers own the channel's state.
The channel id is unguessable and bound to the user and the browser session that created it:
only that session's websocket may attach to it.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass

import redis
from django.conf import settings

from odds.services.kafka import producer_create
from reducers import keys, topics
from reducers.subscriptions import StreamCommand, SubscriptionSpec

OWNER_TTL_S = 24 * 3600
SUBSCRIBE_LIMIT_PER_MINUTE = 30

_producer = None


class StreamError(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Channel:
    channel_id: str
    user_id: int


def _redis() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL)


def _send(command: StreamCommand) -> None:
    """Produce the command and wait for the broker's acknowledgement (acks=all)."""
    global _producer
    if _producer is None:
        _producer = producer_create(**{"linger.ms": 0})
    errors: list[str] = []

    def delivered(err: object, msg: object) -> None:
        if err is not None:
            errors.append(str(err))

    _producer.produce(topics.commands(), key=command.key(), value=command.encode(), on_delivery=delivered)
    if _producer.flush(10) or errors:
        raise StreamError(503, "command_not_sent", "the stream service is unavailable; try again")


def _now_ms() -> int:
    return int(time.time() * 1000)


def owner_token(*, user_id: int, session_key: str) -> str:
    return f"{user_id}:{session_key}"


def channel_owned_by(*, channel_id: str, user_id: int, session_key: str | None) -> bool:
    """Whether the channel was created by this user in this session."""
    if not session_key:
        return False
    raw = _redis().get(keys.channel_owner(channel_id))
    return raw is not None and secrets.compare_digest(
        raw.decode(), owner_token(user_id=user_id, session_key=session_key)
    )


def _rate_limited(*, user_id: int) -> bool:
    window = int(time.time() // 60)
    key = keys.rate_limit("subscribe", str(user_id), window)
    pipe = _redis().pipeline(transaction=False)
    pipe.incr(key)
    pipe.expire(key, 120)
    count = int(pipe.execute()[0])
    return count > SUBSCRIBE_LIMIT_PER_MINUTE


def stream_subscribe(*, user_id: int, session_key: str, spec: SubscriptionSpec) -> Channel:
    if _rate_limited(user_id=user_id):
        raise StreamError(429, "rate_limited", f"at most {SUBSCRIBE_LIMIT_PER_MINUTE} subscriptions a minute")
    channel_id = secrets.token_urlsafe(24)
    _redis().set(keys.channel_owner(channel_id), owner_token(user_id=user_id, session_key=session_key), ex=OWNER_TTL_S)
    _send(StreamCommand(type="subscribe", channel_id=channel_id, user_id=user_id, spec=spec, ts=_now_ms()))
    return Channel(channel_id=channel_id, user_id=user_id)


def _require_owner(*, channel_id: str, user_id: int, session_key: str | None) -> None:
    if not channel_owned_by(channel_id=channel_id, user_id=user_id, session_key=session_key):
        # The same answer for "no such channel" and "not yours": ids are not to be probed.
        raise StreamError(404, "no_such_channel", "no such channel")


def stream_begin(*, channel_id: str, user_id: int, session_key: str | None, resync: bool = False) -> None:
    _require_owner(channel_id=channel_id, user_id=user_id, session_key=session_key)
    _send(StreamCommand(type="begin", channel_id=channel_id, user_id=user_id, spec=None, ts=_now_ms(), resync=resync))


def stream_change(*, channel_id: str, user_id: int, session_key: str | None, spec: SubscriptionSpec) -> None:
    _require_owner(channel_id=channel_id, user_id=user_id, session_key=session_key)
    _send(StreamCommand(type="change", channel_id=channel_id, user_id=user_id, spec=spec, ts=_now_ms()))


def stream_unsubscribe(*, channel_id: str, user_id: int, session_key: str | None) -> None:
    _require_owner(channel_id=channel_id, user_id=user_id, session_key=session_key)
    _send(StreamCommand(type="unsubscribe", channel_id=channel_id, user_id=user_id, spec=None, ts=_now_ms()))
    _redis().delete(keys.channel_owner(channel_id))


def stream_touch(*, channel_id: str) -> None:
    """Record a sign of life of the channel's websocket (idle channels expire)."""
    _redis().zadd(keys.channels_index(), {channel_id: _now_ms()}, xx=True)


def stream_end(*, channel_id: str) -> bool:
    """End any channel through the command topic, whoever owns it (expiry, staff).

    Returns False when no such channel is live; ending twice is harmless.
    """
    client = _redis()
    user = client.hget(keys.channel_meta(channel_id), "user")
    if user is None:
        client.zrem(keys.channels_index(), channel_id)
        return False
    _send(StreamCommand(type="unsubscribe", channel_id=channel_id, user_id=int(user), spec=None, ts=_now_ms()))
    client.delete(keys.channel_owner(channel_id))
    return True


def streams_expire(*, idle_ms: int) -> list[str]:
    """End channels with no sign of life for ``idle_ms`` through the command topic."""
    cutoff = _now_ms() - idle_ms
    stale = [raw.decode() for raw in _redis().zrangebyscore(keys.channels_index(), 0, cutoff)]
    return [channel_id for channel_id in stale if stream_end(channel_id=channel_id)]
