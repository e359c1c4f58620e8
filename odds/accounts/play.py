"""A play session per login (odds/betting/models/play.py): started when a punter logs in, ended
when they log out, and, once its time limit is reached, the punter signed out on their next
request (``PlaySessionMiddleware`` in webapp/middleware.py) with the reason on the login page."""

from __future__ import annotations

import logging
from typing import Any, cast

from django.conf import settings
from django.contrib.auth import logout
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.db import DatabaseError
from django.http import HttpRequest
from django.utils import timezone

from odds.betting.models import PlaySession
from odds.betting.services.play import play_session_end, play_session_over, play_session_start

log = logging.getLogger(__name__)

# Where the login's play session id is kept in the Django session.
PLAY_SESSION_KEY = "sb_play_session"
# The login page's query parameter saying why the punter was signed out.
ENDED_PARAM = "ended"
ENDED_SESSION_LIMIT = "session_limit"
# Public documents, the same for everyone and shared by caches (view snapshots, health, metrics,
# the API's description): never personal, so never made to vary by cookie by a session read here.
PUBLIC_PATHS = ("/api/views/", "/api/openapi.json", "/healthz", "/metrics", "/live/events", "/ops/alerts/webhook")
SESSION_LIMIT_SIGNED_OUT = (
    "Your session time limit was reached, so you were logged out. Log in again to start a new session."
)


def logged_in(*, request: HttpRequest | None, user: AbstractBaseUser, **kwargs: Any) -> None:
    """``user_logged_in``: the login starts a play session, named in its Django session."""
    if request is None or not hasattr(request, "session"):
        return
    # The signal names the user model in general; the site's is Django's User.
    session = play_session_start(user=cast(User, user), now=timezone.now())
    request.session[PLAY_SESSION_KEY] = session.id


def logged_out(*, request: HttpRequest | None, user: AbstractBaseUser | AnonymousUser | None, **kwargs: Any) -> None:
    """``user_logged_out``: the login's play session ends (a time limit reached first stays the
    reason)."""
    if request is None or not hasattr(request, "session"):
        return
    session_id = request.session.get(PLAY_SESSION_KEY)
    if isinstance(session_id, int):
        play_session_end(session_id=session_id, reason=PlaySession.End.LOGOUT, now=timezone.now())


def signed_out_for_time_limit(request: HttpRequest) -> bool:
    """Whether ``request``'s login reached its session time limit: the punter is then signed out
    here (and the caller answers with the reason). A request without a session cookie, or for a
    public document, is not looked at, so that neither varies by cookie."""
    if settings.SESSION_COOKIE_NAME not in request.COOKIES or request.path_info.startswith(PUBLIC_PATHS):
        return False
    session_id = request.session.get(PLAY_SESSION_KEY)
    if not isinstance(session_id, int):
        return False
    try:
        over = play_session_over(session_id=session_id, now=timezone.now())
    except DatabaseError:
        # The view answers a database that cannot be reached in its own way (a JSON API: 503);
        # bets stay refused past the limit all the same, by the placement, which needs it too.
        log.warning("play session %s not checked: the database is unavailable", session_id, exc_info=True)
        return False
    if not over:
        return False
    logout(request)
    return True
