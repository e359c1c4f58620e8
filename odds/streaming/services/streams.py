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

from odds.core.kafka import producer_shared
from odds.core.ratelimits import STREAM_CONTROL, SUBSCRIBE, rate_hit
from reducers import topics
from reducers.subscriptions import (
    QuerySpec,
    StreamCommand,
    SubscriptionSpec,
    is_shared_channel,
    shared_channel_id,
)
from store.channels import (
    channel_admit,
    channel_ended_reason,
    channel_forget,
    channel_held,
    channel_owned,
    channel_owner_release,
    channel_seen,
    channel_seq_floor,
    channel_user,
    channels_idle,
    channels_touch,
)
from store.clients import redis_client

OWNER_TTL_S = 24 * 3600


class StreamError(Exception):
    def __init__(self, status: int, code: str, message: str, *, retry_after_s: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.retry_after_s = retry_after_s


@dataclass(frozen=True)
class Channel:
    channel_id: str
    user_id: int


def _redis() -> redis.Redis:
    return redis_client(settings.REDIS_URL)


def _send(command: StreamCommand) -> None:
    """Produce the command and wait for the broker's acknowledgement (acks=all)."""
    producer = producer_shared(linger_ms=0)
    errors: list[str] = []

    def delivered(err: object, msg: object) -> None:
        if err is not None:
            errors.append(str(err))

    producer.produce(topics.commands(), key=command.key(), value=command.encode(), on_delivery=delivered)
    if producer.flush(10) or errors:
        raise StreamError(503, "command_not_sent", "the stream service is unavailable; try again")


def _now_ms() -> int:
    return int(time.time() * 1000)


def channel_owned_by(*, channel_id: str, user_id: int, session_key: str | None) -> bool:
    """Whether the channel was created by this user in this session."""
    if not session_key:
        return False
    return channel_owned(_redis(), channel_id, user_id=user_id, session_key=session_key)


def _control_rate_limit(*, user_id: int) -> None:
    """Begin (resync included) and change requests per punter in a fixed window: each one makes
    the reducers write a full image into the channel's log."""
    decision = rate_hit(limit=STREAM_CONTROL, subject=str(user_id))
    if not decision.allowed:
        raise StreamError(
            429,
            "rate_limited",
            f"at most {settings.STREAM_CONTROL_LIMIT} begin, resync or change requests every"
            f" {settings.STREAM_CONTROL_WINDOW_S} seconds",
            retry_after_s=decision.retry_after_s,
        )


def _channel_admit(*, client: redis.Redis, user_id: int, session_key: str, channel_id: str, now: int) -> None:
    """Bind the new channel to its owner and count it under both caps, or raise ``StreamError``
    (409 ``too_many_channels``) with nothing written."""
    full = channel_admit(
        client,
        channel_id=channel_id,
        user_id=user_id,
        session_key=session_key,
        now_ms=now,
        session_cap=settings.STREAM_MAX_CHANNELS_PER_SESSION,
        user_cap=settings.STREAM_MAX_CHANNELS_PER_USER,
        keep_s=OWNER_TTL_S,
    )
    if full:
        cap, whose = (
            (settings.STREAM_MAX_CHANNELS_PER_SESSION, "browser session")
            if full == 1
            else (settings.STREAM_MAX_CHANNELS_PER_USER, "punter")
        )
        raise StreamError(409, "too_many_channels", f"at most {cap} live channels per {whose}; end one (DELETE) first")


def stream_share(*, query: QuerySpec, user_id: int | None) -> str:
    """The id of the query's shared channel, asked of the reducers (a ``share`` command) when it
    does not exist yet; anyone may ask, a visitor (``user_id`` None) included. The reducers resolve
    a query once, however many clients hold its channel."""
    channel_id = shared_channel_id(query)
    if not channel_held(_redis(), channel_id):
        spec = SubscriptionSpec(view="markets", query=query)
        _send(StreamCommand(type="share", channel_id=channel_id, user_id=user_id, spec=spec, ts=_now_ms()))
    return channel_id


def stream_subscribe(*, user_id: int, session_key: str, spec: SubscriptionSpec) -> Channel:
    decision = rate_hit(limit=SUBSCRIBE, subject=str(user_id))
    if not decision.allowed:
        raise StreamError(
            429,
            "rate_limited",
            f"at most {settings.STREAM_SUBSCRIBE_LIMIT} subscriptions"
            f" every {settings.STREAM_SUBSCRIBE_WINDOW_S} seconds",
            retry_after_s=decision.retry_after_s,
        )
    channel_id = secrets.token_urlsafe(24)
    now = _now_ms()
    _channel_admit(client=_redis(), user_id=user_id, session_key=session_key, channel_id=channel_id, now=now)
    _send(StreamCommand(type="subscribe", channel_id=channel_id, user_id=user_id, spec=spec, ts=now))
    return Channel(channel_id=channel_id, user_id=user_id)


def _require_owner(*, channel_id: str, user_id: int, session_key: str | None) -> None:
    if not channel_owned_by(channel_id=channel_id, user_id=user_id, session_key=session_key):
        # The same answer for "no such channel" and "not yours": ids are not to be probed.
        raise StreamError(404, "no_such_channel", "no such channel")


def stream_begin(
    *,
    channel_id: str,
    user_id: int,
    session_key: str | None,
    resync: bool = False,
    since: dict[int, tuple[int, str]] | None = None,
) -> None:
    """Ask for the channel's image. ``since``: what the client already holds (market id →
    sequence, status); the image then carries only the markets that moved since."""
    _require_owner(channel_id=channel_id, user_id=user_id, session_key=session_key)
    _control_rate_limit(user_id=user_id)
    command = StreamCommand(
        type="begin",
        channel_id=channel_id,
        user_id=user_id,
        spec=None,
        ts=_now_ms(),
        resync=resync,
        since=since or None,
    )
    _send(command)


def channel_renumber(*, channel_id: str, at_least: int) -> bool:
    """The channel's sequence raised to at least ``at_least``, so that its next frame (the resync
    image asked for next) is numbered past the frames a Redis failover lost (docs/reliability.md)."""
    return channel_seq_floor(_redis(), channel_id, at_least=at_least)


def stream_change(*, channel_id: str, user_id: int, session_key: str | None, spec: SubscriptionSpec) -> None:
    _require_owner(channel_id=channel_id, user_id=user_id, session_key=session_key)
    _control_rate_limit(user_id=user_id)
    _send(StreamCommand(type="change", channel_id=channel_id, user_id=user_id, spec=spec, ts=_now_ms()))


def stream_unsubscribe(*, channel_id: str, user_id: int, session_key: str | None) -> None:
    _require_owner(channel_id=channel_id, user_id=user_id, session_key=session_key)
    _send(
        StreamCommand(
            type="unsubscribe", channel_id=channel_id, user_id=user_id, spec=None, ts=_now_ms(), reason="unsubscribed"
        )
    )
    channel_owner_release(_redis(), channel_id, reason="unsubscribed")


def channel_end_reason(*, channel_id: str, user_id: int, session_key: str | None) -> str | None:
    """Why the channel this user's session created has ended; None if it has not (or is not theirs)."""
    if not session_key:
        return None
    return channel_ended_reason(_redis(), channel_id, user_id=user_id, session_key=session_key)


def stream_touch(*, channel_id: str) -> None:
    """Record a sign of life of the channel's websocket (idle channels expire). Only a channel
    still in the index is touched: an ended channel is not brought back."""
    channels_touch(_redis(), [channel_id], now_ms=_now_ms())


def stream_end(*, channel_id: str, reason: str = "ended_by_staff", user_id: int | None = None) -> bool:
    """End any channel through the command topic, whoever owns it (expiry, staff), or one of
    ``user_id``'s (their session ended), even before the reducers have taken its subscription.

    Returns False when no such channel is live; ending twice is harmless.
    """
    client = _redis()
    owner: int | None = user_id
    if owner is None:
        user = channel_user(client, channel_id)
        if user is None:
            channel_forget(client, channel_id)
            return False
        # A shared query channel is nobody's: the sweeper's command carries no user.
        owner = None if is_shared_channel(channel_id) else user
    _send(
        StreamCommand(type="unsubscribe", channel_id=channel_id, user_id=owner, spec=None, ts=_now_ms(), reason=reason)
    )
    channel_owner_release(client, channel_id, reason=reason)
    return True


def streams_expire(*, idle_ms: int) -> list[str]:
    """End channels with no sign of life for ``idle_ms`` through the command topic.

    Each candidate's score is read again just before it is ended: a websocket attached (or a
    keep-alive) since the scan keeps the channel.
    """
    client = _redis()
    cutoff = _now_ms() - idle_ms
    ended = []
    for channel_id in channels_idle(client, cutoff_ms=cutoff):
        score = channel_seen(client, channel_id)
        if score is not None and score <= cutoff and stream_end(channel_id=channel_id, reason="expired"):
            ended.append(channel_id)
    return ended
