"""The play router's bodies (``odds/api/play.py``): the punter's session time limit and
reality-check interval, their current play session and its reality check."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal, TypeAlias

from pydantic import Field

from odds.api.schemas.common import BODY_ERRORS, Answer, Body, DecimalOut, Model, Timestamp, refusal, timestamp
from odds.betting.models import PlayPreferences
from odds.betting.play import REALITY_CHECK_CHOICES_MIN, SESSION_LIMIT_CHOICES_MIN
from odds.betting.selectors.play import PlaySummary

# Literal types made at run time are ints to the type checker.
if TYPE_CHECKING:
    SessionLimitMin: TypeAlias = int
    RealityCheckMin: TypeAlias = int
else:
    SessionLimitMin = Literal[SESSION_LIMIT_CHOICES_MIN]
    RealityCheckMin = Literal[REALITY_CHECK_CHOICES_MIN]

Seconds = Annotated[int, Field(ge=0)]


def _minutes(seconds: int | None) -> int | None:
    return None if seconds is None else seconds // 60


class PlaySettingsRequest(Body):
    """``PUT /api/play/settings``: the session time limit and the reality-check interval in
    minutes, each one of the offered choices or null for none."""

    session_limit_min: SessionLimitMin | None = None
    reality_check_min: RealityCheckMin | None = None


class PlaySettings(Model):
    session_limit_min: int | None = Field(description="null: no limit")
    reality_check_min: int | None = Field(description="null: no reality checks")
    session_limit_choices_min: list[int]
    reality_check_choices_min: list[int]

    @classmethod
    def of(cls, preferences: PlayPreferences) -> PlaySettings:
        return cls(
            session_limit_min=_minutes(preferences.session_limit_s),
            reality_check_min=_minutes(preferences.reality_check_s),
            session_limit_choices_min=list(SESSION_LIMIT_CHOICES_MIN),
            reality_check_choices_min=list(REALITY_CHECK_CHOICES_MIN),
        )


class PlaySessionOut(Model):
    """The login's play session: seconds are as the server counts them, so a page's timer needs
    no clock of its own beyond counting down."""

    started_at: Timestamp
    played_s: Seconds
    time_limit_s: Seconds | None = Field(description="null: no limit in this session")
    ends_at: Timestamp | None
    time_left_s: Seconds | None
    reality_check_s: Seconds | None = Field(description="null: no reality checks in this session")
    check_due_at: Timestamp | None
    check_due_in_s: Seconds | None = Field(description="0 while a reality check waits")
    check_pending: bool = Field(description="a reality check waits: bets are refused until it is acknowledged")
    currency: str
    staked: DecimalOut
    returned: DecimalOut
    net_result: DecimalOut = Field(description="returns minus stakes of the bets placed in this session")

    @classmethod
    def of(cls, summary: PlaySummary, *, now_ms: int) -> PlaySessionOut:
        session = summary.session
        due = timestamp(summary.check_due_at)
        started = timestamp(session.started_at)
        assert started is not None
        return cls(
            started_at=started,
            played_s=int(summary.played.total_seconds()),
            time_limit_s=session.time_limit_s,
            ends_at=timestamp(summary.ends_at),
            time_left_s=None if summary.time_left is None else int(summary.time_left.total_seconds()),
            reality_check_s=session.reality_check_s,
            check_due_at=due,
            check_due_in_s=None if due is None else max(0, (due - now_ms + 999) // 1000),
            check_pending=summary.check_pending,
            currency=summary.currency,
            staked=summary.staked,
            returned=summary.returned,
            net_result=summary.net,
        )


class PlayOut(Answer):
    settings: PlaySettings
    session: PlaySessionOut | None = Field(description="null: no play session (signed in before they existed)")


PlaySettingsError = refusal("PlaySettingsError", *BODY_ERRORS)
