"""The login throttle of every login form (the site's and the admin's; ``LOGIN_THROTTLED_URLS``).

An attempt is counted before its password is checked, atomically (``odds.core.ratelimits``), so
concurrent attempts cannot all slip under the limit: at most ``LOGIN_FAILURES_PER_USERNAME`` for
one username from one address, and ``LOGIN_FAILURES_PER_IP`` failures from one address, within
``LOGIN_FAILURE_WINDOW_S`` of the first. Above either, the form answers 429 with ``Retry-After``
without checking a password. The username is counted as Django reads it (NFKC, then case-folded),
so another spelling of the same name is the same count. A stranger's failures count against
their own address: they cannot lock the account's owner out from elsewhere. A successful login
clears the username's count from its address and takes its own attempt back from the address's
failures. Redis refusing the count (at its memory limit) or unreachable refuses the login
(``LoginThrottleUnavailable``) rather than letting attempts through uncounted.
"""

from __future__ import annotations

import hashlib
import logging
import unicodedata
from dataclasses import dataclass

from odds.core.ratelimits import LOGIN_ACCOUNT, LOGIN_ADDRESS, RateStoreError, rate_clear, rate_hit, rate_refund

log = logging.getLogger(__name__)

# The URL names of every login form; each POST to one is throttled (webapp.middleware).
LOGIN_THROTTLED_URLS = ("login", "admin:login")


@dataclass(frozen=True)
class LoginThrottled:
    """Logins refused for ``retry_after_s`` more seconds; ``scope`` is "username" or "ip"."""

    scope: str
    retry_after_s: int


class LoginThrottleUnavailable(Exception):
    """The attempt could not be counted (Redis refused or is unreachable): no password is checked."""


def username_normalised(username: str) -> str:
    """The username as the login form reads it (NFKC), case-folded: one count per account."""
    return unicodedata.normalize("NFKC", username).casefold()


def _account(username: str, ip: str) -> str:
    # Hashed: a username is any text the client sends (slashes, very long), not a key segment.
    text = f"{username_normalised(username)}\0{_address(ip)}"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _address(ip: str) -> str:
    return ip[:64] or "unknown"


def login_attempt(*, username: str, ip: str) -> LoginThrottled | None:
    """Count one login attempt before its password is checked; the refusal (and for how long)
    when the username from this address or the address is over its limit, else None.

    Raises ``LoginThrottleUnavailable`` when the attempt cannot be counted."""
    try:
        address = rate_hit(limit=LOGIN_ADDRESS, subject=_address(ip))
        if not address.allowed:
            return LoginThrottled(scope="ip", retry_after_s=address.retry_after_s)
        account = rate_hit(limit=LOGIN_ACCOUNT, subject=_account(username, ip))
    except RateStoreError as exc:
        log.warning("login refused: its attempt cannot be counted (Redis)", exc_info=True)
        raise LoginThrottleUnavailable from exc
    if not account.allowed:
        return LoginThrottled(scope="username", retry_after_s=account.retry_after_s)
    return None


def login_success(*, username: str, ip: str) -> None:
    """A successful login clears the username's attempts from its address and takes its own
    attempt back from the address's failures."""
    try:
        rate_clear(limit=LOGIN_ACCOUNT, subject=_account(username, ip))
        rate_refund(limit=LOGIN_ADDRESS, subject=_address(ip))
    except RateStoreError:
        log.warning("login attempts not cleared: Redis unavailable", exc_info=True)
