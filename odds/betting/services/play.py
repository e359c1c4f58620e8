"""Play-session writes: a session per login, the punter's preferences, reality checks
acknowledged, sessions ended at logout or at their time limit. The rules are ``odds.betting.play``."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.contrib.auth.models import User
from django.db import transaction

from odds.betting.models import PlayPreferences, PlaySession
from odds.betting.play import (
    REALITY_CHECK_CHOICES_MIN,
    SESSION_LIMIT_CHOICES_MIN,
    check_pending,
    limit_for_running_session,
    limit_reached,
)
from odds.betting.selectors.play import play_preferences_get, play_session_latest, play_session_state


class PlayChoiceInvalid(Exception):
    """A session limit or reality-check interval that is not one of the choices."""

    def __init__(self, *, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def _seconds(minutes: int | None, *, choices: tuple[int, ...], field: str) -> int | None:
    if minutes is None:
        return None
    if minutes not in choices:
        raise PlayChoiceInvalid(
            field=field, message=f"Choose one of {', '.join(str(m) for m in choices)} minutes, or none."
        )
    return minutes * 60


def play_session_start(*, user: User, now: datetime) -> PlaySession:
    """A login: a new play session with the punter's current limit and reality-check interval."""
    preferences = play_preferences_get(user=user)
    return PlaySession.objects.create(
        user=user,
        started_at=now,
        time_limit_s=preferences.session_limit_s,
        reality_check_s=preferences.reality_check_s,
    )


def play_session_end(*, session_id: int, reason: str, now: datetime) -> None:
    """End the session (idempotent: a session already ended keeps its first reason)."""
    PlaySession.objects.filter(id=session_id, ended_at__isnull=True).update(ended_at=now, end_reason=reason)


def play_session_over(*, session_id: int, now: datetime) -> bool:
    """Whether the login's session has reached its time limit (it is then ended, its reason
    ``time_limit``) or was ended otherwise: the punter is to be signed out."""
    session = PlaySession.objects.filter(id=session_id).first()
    if session is None:
        return False
    if session.ended_at is not None:
        return session.end_reason == PlaySession.End.TIME_LIMIT
    if limit_reached(state=play_session_state(session=session), now=now):
        play_session_end(session_id=session_id, reason=PlaySession.End.TIME_LIMIT, now=now)
        return True
    return False


def play_preferences_set(
    *, user: User, session_limit_min: int | None, reality_check_min: int | None, now: datetime
) -> PlayPreferences:
    """Record the punter's choices (each one of the offered minutes, or None) for their next logins.

    The running session takes a new or shorter limit, and new or more frequent checks, at once;
    a longer limit, or none, and fewer or no checks, wait for the next login. Checks that apply at
    once count their interval from now, unless one is already waiting.
    """
    limit_s = _seconds(session_limit_min, choices=SESSION_LIMIT_CHOICES_MIN, field="session_limit_min")
    check_s = _seconds(reality_check_min, choices=REALITY_CHECK_CHOICES_MIN, field="reality_check_min")
    with transaction.atomic():
        preferences, _ = PlayPreferences.objects.select_for_update().get_or_create(user=user)
        preferences.session_limit_s = limit_s
        preferences.reality_check_s = check_s
        preferences.save()
        session = play_session_latest(user=user)
        if session is not None:
            _running_session_apply(session=session, limit_s=limit_s, check_s=check_s, now=now)
    return preferences


def _running_session_apply(*, session: PlaySession, limit_s: int | None, check_s: int | None, now: datetime) -> None:
    limit = limit_for_running_session(
        running=None if session.time_limit_s is None else timedelta(seconds=session.time_limit_s),
        chosen=None if limit_s is None else timedelta(seconds=limit_s),
    )
    session.time_limit_s = None if limit is None else int(limit.total_seconds())
    interval = limit_for_running_session(
        running=None if session.reality_check_s is None else timedelta(seconds=session.reality_check_s),
        chosen=None if check_s is None else timedelta(seconds=check_s),
    )
    new_check_s = None if interval is None else int(interval.total_seconds())
    if new_check_s != session.reality_check_s:
        if not check_pending(state=play_session_state(session=session), now=now):
            session.acknowledged_at = now
        session.reality_check_s = new_check_s
    session.save(update_fields=["time_limit_s", "reality_check_s", "acknowledged_at"])


def reality_check_acknowledge(*, user: User, now: datetime) -> PlaySession | None:
    """The punter chose Continue: the waiting reality check of their latest session is
    acknowledged and the next one falls an interval from now. Nothing changes when none waits."""
    with transaction.atomic():
        session = (
            PlaySession.objects.select_for_update().filter(user=user, ended_at__isnull=True).order_by("-id").first()
        )
        if session is not None and check_pending(state=play_session_state(session=session), now=now):
            session.acknowledged_at = now
            session.save(update_fields=["acknowledged_at"])
    return session
