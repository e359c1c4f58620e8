"""Staff codes: one typed in the last second of its period is still taken on arrival; two periods
old it is not."""

from __future__ import annotations

import pyotp
import pytest
from allauth.mfa.totp.internal import auth


@pytest.fixture
def secret() -> str:
    return auth.generate_totp_secret()


def _code_at(secret: str, at: float) -> str:
    return pyotp.TOTP(secret).at(int(at))


def test_a_code_from_the_period_just_ended_is_accepted(secret, monkeypatch):
    now = 1_800_000_000.5  # half a second into a period
    monkeypatch.setattr(auth.time, "time", lambda: now)
    assert auth.validate_totp_code(secret, _code_at(secret, now - 1))


def test_a_code_two_periods_old_is_refused(secret, monkeypatch):
    now = 1_800_000_000.5
    monkeypatch.setattr(auth.time, "time", lambda: now)
    assert not auth.validate_totp_code(secret, _code_at(secret, now - 61))
