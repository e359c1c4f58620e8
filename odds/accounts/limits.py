"""Sign-ups and password-reset requests counted per client address and per email address
(``odds.core.ratelimits``: SIGNUP_ADDRESS, SIGNUP_EMAIL, RESET_ADDRESS, RESET_EMAIL), before
the form does anything else. The refusal is the same whether or not an account has the email,
so a reset's answer still says nothing about who has an account."""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass

from odds.core.ratelimits import (
    RESET_ADDRESS,
    RESET_EMAIL,
    SIGNUP_ADDRESS,
    SIGNUP_EMAIL,
    Limit,
    RateStoreError,
    rate_hit,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class AccountThrottled:
    """Refused for ``retry_after_s`` more seconds."""

    retry_after_s: int

    @property
    def message(self) -> str:
        minutes = -(-self.retry_after_s // 60)
        plural = "s" if minutes != 1 else ""
        return f"Too many requests from here or for this email. Try again in {minutes} minute{plural}."


def _email_subject(email: str) -> str:
    # Hashed: an email is text the client chose, not a key segment.
    return hashlib.sha256(email.strip().casefold().encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _attempt(*, per_address: Limit, per_email: Limit, ip: str, email: str) -> AccountThrottled | None:
    try:
        for limit, subject in ((per_address, ip[:64] or "unknown"), (per_email, _email_subject(email))):
            decision = rate_hit(limit=limit, subject=subject)
            if not decision.allowed:
                return AccountThrottled(retry_after_s=decision.retry_after_s)
    except RateStoreError:
        # Uncounted attempts are refused rather than let through (as logins are).
        log.warning("account request refused: it cannot be counted (Redis)", exc_info=True)
        return AccountThrottled(retry_after_s=5)
    return None


def signup_attempt(*, ip: str, email: str) -> AccountThrottled | None:
    """Count one sign-up from ``ip`` for ``email``; the refusal when either is over its limit."""
    return _attempt(per_address=SIGNUP_ADDRESS, per_email=SIGNUP_EMAIL, ip=ip, email=email)


def reset_attempt(*, ip: str, email: str) -> AccountThrottled | None:
    """Count one password-reset request from ``ip`` for ``email``; the refusal when either is
    over its limit."""
    return _attempt(per_address=RESET_ADDRESS, per_email=RESET_EMAIL, ip=ip, email=email)
