"""Play-time endpoints (``/api/play``): the punter's session time limit and reality checks.
Each declares its URL, body and answers (``odds/api/schemas/play.py``) and calls one service or
selector."""

from __future__ import annotations

from typing import cast

from django.contrib.auth.models import User
from django.http import HttpRequest
from django.utils import timezone
from ninja import Router

from odds.api.http import Session, answers
from odds.api.schemas import play as s
from odds.api.schemas.common import ApiError
from odds.betting.selectors.play import play_preferences_get, play_session_latest, play_summary
from odds.betting.services.play import PlayChoiceInvalid, play_preferences_set, reality_check_acknowledge

router = Router(auth=Session(), tags=["play"])


def _user(request: HttpRequest) -> User:
    # Session() lets only logged-in users through.
    return cast(User, request.user)


def _play(user: User) -> s.PlayOut:
    now = timezone.now()
    session = play_session_latest(user=user)
    summary = None if session is None else play_summary(session=session, now=now)
    now_ms = int(now.timestamp() * 1000)
    return s.PlayOut(
        settings=s.PlaySettings.of(play_preferences_get(user=user)),
        session=None if summary is None else s.PlaySessionOut.of(summary, now_ms=now_ms),
    )


@router.get(
    "play",
    summary="The punter's play-time settings and current play session (time played, net result, next reality check)",
    url_name="play",
    **answers({200: (s.PlayOut, "The settings and the session.")}),
)
def play_get(request: HttpRequest) -> s.PlayOut:
    return _play(_user(request))


@router.put(
    "play/settings",
    summary="Choose a session time limit and a reality-check interval (stricter at once, laxer from the next login)",
    url_name="play-settings",
    **answers(
        {200: (s.PlayOut, "The settings, and the current session with what of them applies to it already.")},
        {400: (s.PlaySettingsError, "A choice is not one of those offered; nothing changed.")},
        access="write",
        body=True,
        examples={"limit and checks": {"v": 1, "session_limit_min": 60, "reality_check_min": 30}},
    ),
)
def play_settings(request: HttpRequest, body: s.PlaySettingsRequest) -> s.PlayOut:
    user = _user(request)
    try:
        play_preferences_set(
            user=user,
            session_limit_min=body.session_limit_min,
            reality_check_min=body.reality_check_min,
            now=timezone.now(),
        )
    except PlayChoiceInvalid as exc:
        raise ApiError(400, "invalid", exc.message, field=exc.field) from exc
    return _play(user)


@router.post(
    "play/reality-check",
    summary="Acknowledge the waiting reality check (Continue): bets are taken again",
    url_name="play-reality-check",
    **answers(
        {200: (s.PlayOut, "The session, with the next reality check an interval from now.")},
        access="write",
        body=False,
    ),
)
def play_reality_check(request: HttpRequest) -> s.PlayOut:
    user = _user(request)
    reality_check_acknowledge(user=user, now=timezone.now())
    return _play(user)
