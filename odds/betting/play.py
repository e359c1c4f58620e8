"""Play sessions: the pure rules of the session time limit and the reality checks.

A play session starts at a punter's login. It may carry a time limit (from the punter's
preferences) and a reality-check interval. These functions decide, from a session's state and an
explicit clock, how long is left, when the next reality check is due, whether a bet is refused and
what a changed preference does to the session already running; they read nothing and write
nothing (the services and the placement carry out what they decide).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal

# What the punter chooses from, in minutes; None (no limit, no checks) is always offered too.
SESSION_LIMIT_CHOICES_MIN: tuple[int, ...] = (30, 60, 120, 240, 480)
REALITY_CHECK_CHOICES_MIN: tuple[int, ...] = (15, 30, 60)

SESSION_LIMIT = "session_limit"
REALITY_CHECK = "reality_check"


@dataclass(frozen=True)
class PlayState:
    """A play session as the rules see it."""

    started_at: datetime
    time_limit: timedelta | None
    reality_check: timedelta | None
    acknowledged_at: datetime | None = None


@dataclass(frozen=True)
class PlayRefusal:
    code: str  # SESSION_LIMIT or REALITY_CHECK
    message: str


def duration_text(length: timedelta) -> str:
    """``1 hour 30 minutes``, ``45 minutes``, ``2 hours``: a length as the punter reads it."""
    minutes = max(0, int(length.total_seconds()) // 60)
    hours, minutes = divmod(minutes, 60)
    parts = []
    if hours:
        parts.append(f"{hours} hour{'s' if hours != 1 else ''}")
    if minutes or not hours:
        parts.append(f"{minutes} minute{'s' if minutes != 1 else ''}")
    return " ".join(parts)


def session_ends_at(*, state: PlayState) -> datetime | None:
    """When the session's time limit is reached, or None without a limit."""
    return None if state.time_limit is None else state.started_at + state.time_limit


def time_played(*, state: PlayState, now: datetime) -> timedelta:
    return max(timedelta(0), now - state.started_at)


def time_left(*, state: PlayState, now: datetime) -> timedelta | None:
    """What is left of the time limit (zero once reached), or None without a limit."""
    ends = session_ends_at(state=state)
    return None if ends is None else max(timedelta(0), ends - now)


def limit_reached(*, state: PlayState, now: datetime) -> bool:
    ends = session_ends_at(state=state)
    return ends is not None and now >= ends


def check_due_at(*, state: PlayState) -> datetime | None:
    """When the next reality check is due: an interval after the last one was acknowledged (after
    the login for the first), or None without checks."""
    if state.reality_check is None:
        return None
    return (state.acknowledged_at or state.started_at) + state.reality_check


def check_pending(*, state: PlayState, now: datetime) -> bool:
    """Whether a reality check is due and not acknowledged yet."""
    due = check_due_at(state=state)
    return due is not None and now >= due


def net_result(*, bets: Iterable[tuple[Decimal, Decimal]]) -> Decimal:
    """Returns minus stakes over ``(stake, returned)`` of the session's bets: a bet still open has
    returned nothing yet, a void bet returned its stake."""
    total = Decimal("0.00")
    for stake, returned in bets:
        total += returned - stake
    return total


def play_refusal(*, state: PlayState | None, now: datetime) -> PlayRefusal | None:
    """Why a bet is refused now for the punter's play session, or None when it may go ahead."""
    if state is None:
        return None
    ends = session_ends_at(state=state)
    if ends is not None and now >= ends:
        assert state.time_limit is not None
        return PlayRefusal(
            code=SESSION_LIMIT,
            message=f"Your session time limit of {duration_text(state.time_limit)} was reached at"
            f" {ends.astimezone(UTC):%H:%M} UTC: betting is closed for this session. Log in again to start a new one.",
        )
    if check_pending(state=state, now=now):
        return PlayRefusal(
            code=REALITY_CHECK,
            message="A reality check is waiting: see how long you have played and your result, then choose"
            " Continue to bet again.",
        )
    return None


def limit_for_running_session(*, running: timedelta | None, chosen: timedelta | None) -> timedelta | None:
    """The limit a running session keeps when the punter chooses ``chosen``: a new or shorter limit
    applies at once; a longer one, or none, waits for the next login (a limit is not lifted in the
    session it was meant to end)."""
    if chosen is None:
        return running
    if running is None or chosen < running:
        return chosen
    return running
