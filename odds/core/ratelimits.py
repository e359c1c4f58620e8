"""Every rate limit of the site, through one library (``limits``), counted in Redis. (A
websocket's own frame and image budgets are part of its protocol state, ``odds.streaming.session``.)

A limit is declared once in ``LIMITS`` (its amount and window read from the settings at each
use, so a deployment or a test can change them) and counted by a fixed window that starts with
the caller's first hit, in Redis (``store.limits``): one counter per limit, caller and
window, with its expiry. ``rate_hit`` (sync) and ``rate_hit_async`` (asyncio, on a client of the
calling event loop) count one attempt atomically and say whether it is within the limit and, if
not, how long until the window ends. A Redis that refuses or cannot be reached raises
``redis.RedisError``: callers answer 503, never let the attempt through uncounted.
"""

from __future__ import annotations

import math
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass

import redis
import redis.asyncio as aioredis
from django.conf import settings
from limits import RateLimitItem, RateLimitItemPerSecond
from limits.aio.strategies import FixedWindowRateLimiter as AsyncFixedWindowRateLimiter
from limits.strategies import FixedWindowRateLimiter

from odds.core.connections import redis_shared
from store.limits import limit_storage, limit_storage_async


@dataclass(frozen=True)
class Limit:
    """``amount`` hits per ``window_s`` seconds for one caller; ``name`` is its part of the key."""

    name: str
    amount: Callable[[], int]
    window_s: Callable[[], int]

    def item(self) -> RateLimitItem:
        return RateLimitItemPerSecond(self.amount(), self.window_s(), namespace=self.name)


# Bet placement attempts per punter: far above what a person clicks, low enough that a script
# hammering the wallet lock is turned away before it reaches the database.
BETS = Limit("bets", lambda: settings.BET_PLACE_LIMIT, lambda: settings.BET_PLACE_WINDOW_S)
# Stream begin (resync included) and change requests per punter.
STREAM_CONTROL = Limit(
    "stream_control", lambda: settings.STREAM_CONTROL_LIMIT, lambda: settings.STREAM_CONTROL_WINDOW_S
)
# Stream subscriptions per punter.
SUBSCRIBE = Limit("subscribe", lambda: settings.STREAM_SUBSCRIBE_LIMIT, lambda: settings.STREAM_SUBSCRIBE_WINDOW_S)
# Login attempts for one (normalised) username from one address: a stranger elsewhere cannot
# lock the account's owner out.
LOGIN_ACCOUNT = Limit(
    "login_account", lambda: settings.LOGIN_FAILURES_PER_USERNAME, lambda: settings.LOGIN_FAILURE_WINDOW_S
)
# Failed logins from one address, whatever the usernames.
LOGIN_ADDRESS = Limit("login_address", lambda: settings.LOGIN_FAILURES_PER_IP, lambda: settings.LOGIN_FAILURE_WINDOW_S)

# Sign-ups and password-reset requests, per client address and per (normalised) email address:
# a script cannot open accounts in bulk nor flood one mailbox with resets (odds.accounts.limits).
SIGNUP_ADDRESS = Limit("signup_address", lambda: settings.SIGNUP_PER_IP, lambda: settings.ACCOUNT_LIMIT_WINDOW_S)
SIGNUP_EMAIL = Limit("signup_email", lambda: settings.SIGNUP_PER_EMAIL, lambda: settings.ACCOUNT_LIMIT_WINDOW_S)
RESET_ADDRESS = Limit("reset_address", lambda: settings.PASSWORD_RESET_PER_IP, lambda: settings.ACCOUNT_LIMIT_WINDOW_S)
RESET_EMAIL = Limit("reset_email", lambda: settings.PASSWORD_RESET_PER_EMAIL, lambda: settings.ACCOUNT_LIMIT_WINDOW_S)

LIMITS = (
    BETS,
    STREAM_CONTROL,
    SUBSCRIBE,
    LOGIN_ACCOUNT,
    LOGIN_ADDRESS,
    SIGNUP_ADDRESS,
    SIGNUP_EMAIL,
    RESET_ADDRESS,
    RESET_EMAIL,
)


@dataclass(frozen=True)
class RateDecision:
    """Whether a hit is within its limit; when not, ``retry_after_s`` until its window ends."""

    allowed: bool
    retry_after_s: int = 0
    limit: Limit | None = None


def _retry_after(reset_at: float, now: float) -> int:
    return max(1, math.ceil(reset_at - now))


_limiters: weakref.WeakKeyDictionary[redis.Redis, FixedWindowRateLimiter] = weakref.WeakKeyDictionary()


def _sync_limiter() -> FixedWindowRateLimiter:
    """The limiter on the process's shared Redis pool (a new pool, a new limiter)."""
    client = redis_shared()
    limiter = _limiters.get(client)
    if limiter is None:
        limiter = _limiters[client] = FixedWindowRateLimiter(limit_storage(client))
    return limiter


def rate_hit(*, limit: Limit, subject: str, cost: int = 1) -> RateDecision:
    """Count ``cost`` hits of ``subject`` against ``limit``, atomically; raises ``redis.RedisError``."""
    limiter = _sync_limiter()
    item = limit.item()
    if limiter.hit(item, subject, cost=cost):
        return RateDecision(allowed=True, limit=limit)
    stats = limiter.get_window_stats(item, subject)
    return RateDecision(allowed=False, retry_after_s=_retry_after(stats.reset_time, time.time()), limit=limit)


def rate_refund(*, limit: Limit, subject: str) -> None:
    """Take back one hit of ``subject`` (an attempt that turned out not to count, such as a
    successful login against the failures of its address)."""
    _sync_limiter().hit(limit.item(), subject, cost=-1)


def rate_clear(*, limit: Limit, subject: str) -> None:
    """Forget every hit of ``subject`` in its current window."""
    _sync_limiter().clear(limit.item(), subject)


_async_limiters: weakref.WeakKeyDictionary[aioredis.Redis, AsyncFixedWindowRateLimiter] = weakref.WeakKeyDictionary()


def _async_limiter(client: aioredis.Redis) -> AsyncFixedWindowRateLimiter:
    limiter = _async_limiters.get(client)
    if limiter is None:
        limiter = _async_limiters[client] = AsyncFixedWindowRateLimiter(limit_storage_async(client))
    return limiter


async def rate_hit_async(*, limit: Limit, subject: str, client: aioredis.Redis) -> RateDecision:
    """``rate_hit`` on the event loop, through ``client`` (a client of the running loop)."""
    limiter = _async_limiter(client)
    item = limit.item()
    if await limiter.hit(item, subject):
        return RateDecision(allowed=True, limit=limit)
    stats = await limiter.get_window_stats(item, subject)
    return RateDecision(allowed=False, retry_after_s=_retry_after(stats.reset_time, time.time()), limit=limit)


# What a caller catches: Redis refused the count (at its memory limit) or could not be reached.
RateStoreError = redis.RedisError
