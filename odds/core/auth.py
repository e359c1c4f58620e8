"""Failed-login throttling: per username and per client address, counted in Redis.

After ``LOGIN_FAILURES_PER_USERNAME`` failures for one username, or ``LOGIN_FAILURES_PER_IP``
from one address, within ``LOGIN_FAILURE_WINDOW_S`` of the first, logins for it are refused
without checking a password until the window has passed. A successful login clears the
username's counter (not the address's: one address trying many usernames stays limited).
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass

import redis
from django.conf import settings

from odds.core.connections import redis_shared
from reducers import keys

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LoginThrottled:
    """Logins refused for ``retry_after_s`` more seconds; ``scope`` is "username" or "ip"."""

    scope: str
    retry_after_s: int


def _username_key(username: str) -> str:
    # Hashed: a username is any text the client sends (colons, very long), not a key segment.
    digest = hashlib.sha256(username.casefold().encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return keys.login_failures("user", digest)


def _ip_key(ip: str) -> str:
    return keys.login_failures("ip", ip[:64] or "unknown")


def login_throttle_check(*, username: str, ip: str) -> LoginThrottled | None:
    """Whether a login for ``username`` from ``ip`` is refused now, and for how long.

    Redis unreachable: logins are not throttled (logged), rather than all refused."""
    checks = (
        (_username_key(username), settings.LOGIN_FAILURES_PER_USERNAME, "username"),
        (_ip_key(ip), settings.LOGIN_FAILURES_PER_IP, "ip"),
    )
    try:
        pipe = redis_shared().pipeline(transaction=False)
        for key, _, _ in checks:
            pipe.get(key)
            pipe.ttl(key)
        replies = pipe.execute()
    except redis.RedisError:
        log.warning("login throttling skipped: Redis unavailable", exc_info=True)
        return None
    for index, (_, limit, scope) in enumerate(checks):
        count, ttl = replies[2 * index], replies[2 * index + 1]
        if count is not None and int(count) >= limit:
            return LoginThrottled(scope=scope, retry_after_s=max(1, int(ttl)))
    return None


def login_failure_record(*, username: str, ip: str) -> None:
    """Count one failed login against the username and the address; the window starts with the
    first failure (the counter's expiry is set when it has none, never extended: Redis 7)."""
    window = settings.LOGIN_FAILURE_WINDOW_S
    try:
        pipe = redis_shared().pipeline(transaction=False)
        for key in (_username_key(username), _ip_key(ip)):
            pipe.incr(key)
            pipe.expire(key, window, nx=True)
        pipe.execute()
    except redis.RedisError:
        log.warning("failed login not counted: Redis unavailable", exc_info=True)


def login_success_record(*, username: str) -> None:
    """A successful login clears the username's failures."""
    try:
        redis_shared().delete(_username_key(username))
    except redis.RedisError:
        log.warning("login failures not cleared: Redis unavailable", exc_info=True)
