"""A punter's session and user read on the event loop, for the two paths a peak is made of: a bet
(``odds.api.placement``) and a websocket's handshake (``webapp.wsauth``).

Django reads the session through its cache in a thread and the user through the ORM in the one
thread Channels gives database calls; at a storm of handshakes that was the largest share of a web
process's time. Here the session is one Redis read (``SESSION_ENGINE`` is ``cached_db``), and the
user's row (session hash, active, name, staff) one query on an asyncio pool, kept per process for
``BET_AUTH_CACHE_S`` so a password change or a deactivation takes effect within that.

The rules are Django's (``django.contrib.auth.get_user``): the session names a user and one of
``AUTHENTICATION_BACKENDS``, the user is active (both backends refuse an inactive one) and the
session's hash matches the user's. Anything else — no session in Redis, a hash that only a
fallback secret matches, a user gone — is ``SessionUnknown``: the caller hands the request to
Django's own path, which decides (and flushes a session that does not verify).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any

import psycopg
from allauth.account.authentication import AUTHENTICATION_METHODS_SESSION_KEY
from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.auth.models import User
from django.contrib.sessions.backends.cached_db import KEY_PREFIX as SESSION_CACHE_PREFIX
from django.core.cache import caches
from django.core.cache.backends.redis import RedisSerializer
from django.utils.crypto import constant_time_compare

from odds.streaming.hub import get_hub

# A process keeps at most this many users and sessions; past it, it starts again empty.
KNOWN_MAX = 100_000
USER_SQL = "SELECT password, is_active, username, is_staff FROM auth_user WHERE id = %s"

Connection = Callable[[], AbstractAsyncContextManager[psycopg.AsyncConnection[Any]]]


def second_factor_used(session: Any) -> bool:
    """Whether a session's authentication records (allauth) hold a second factor used in it."""
    records = session.get(AUTHENTICATION_METHODS_SESSION_KEY) or []
    return any(isinstance(r, dict) and r.get("method") == "mfa" for r in records)


class SessionUnknown(Exception):
    """Django's own path reads this session (see the module's docstring for when)."""


@dataclass(frozen=True)
class SessionRead:
    """What a session in Redis says: whose it is, and whether a second factor was used in it."""

    user_id: int
    session_hash: str
    second_factor: bool


@dataclass(frozen=True)
class KnownUser:
    """A user's row as the checks need it."""

    user_id: int
    username: str
    is_staff: bool
    active: bool
    session_hash: str

    def model(self) -> User:
        """A ``User`` carrying the row's fields, made without a query (for ``scope["user"]``)."""
        return User(id=self.user_id, username=self.username, is_staff=self.is_staff, is_active=self.active)


class SessionUsers:
    """Per process: users (by id) and sessions (by key) read lately, each for ``BET_AUTH_CACHE_S``.
    ``connection`` gives a connection of the process's asyncio pool."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.users: dict[int, tuple[float, KnownUser]] = {}
        self.sessions: dict[str, tuple[float, int, str]] = {}
        self.serializer = RedisSerializer()
        self.session_cache = caches[settings.SESSION_CACHE_ALIAS]

    def session_cache_key(self, session_key: str) -> str:
        """The Redis key Django's cache keeps the session under."""
        return self.session_cache.make_key(SESSION_CACHE_PREFIX + session_key)

    def known_user(self, session_key: str) -> int | None:
        """The user of a session verified lately whose user is known and still matches it, or None.
        The session itself may have ended since: the caller confirms it still exists."""
        found = self.sessions.get(session_key) if session_key else None
        if found is None or found[0] < time.monotonic():
            return None
        _, user_id, session_hash = found
        user = self._cached(user_id)
        if user is None or not user.active or not constant_time_compare(session_hash, user.session_hash):
            return None
        return user_id

    async def session_read(self, session_key: str | None) -> SessionRead:
        """The session as Redis holds it (no database work), or ``SessionUnknown``."""
        if not session_key:
            raise SessionUnknown
        raw = await get_hub().client().get(self.session_cache_key(session_key))
        if raw is None:
            raise SessionUnknown
        session = self.serializer.loads(raw)
        try:
            user_id = int(session[SESSION_KEY])
            session_hash = str(session[HASH_SESSION_KEY])
            backend = session[BACKEND_SESSION_KEY]
        except (KeyError, TypeError, ValueError) as exc:
            raise SessionUnknown from exc
        if backend not in settings.AUTHENTICATION_BACKENDS:
            raise SessionUnknown
        return SessionRead(user_id=user_id, session_hash=session_hash, second_factor=second_factor_used(session))

    async def session_verify(self, session_key: str, session: SessionRead) -> KnownUser:
        """The session's user, active and with this session hash (read from PostgreSQL at most
        every ``BET_AUTH_CACHE_S``), or ``SessionUnknown``."""
        user = self._cached(session.user_id)
        if user is None:
            async with self.connection() as conn:
                row = await (await conn.execute(USER_SQL, [session.user_id])).fetchone()
            if row is None:
                raise SessionUnknown
            user = self._learn_user(session.user_id, row)
        if not user.active or not constant_time_compare(session.session_hash, user.session_hash):
            raise SessionUnknown
        if len(self.sessions) > KNOWN_MAX:
            self.sessions.clear()
        self.sessions[session_key] = (time.monotonic() + settings.BET_AUTH_CACHE_S, user.user_id, session.session_hash)
        return user

    def _cached(self, user_id: int) -> KnownUser | None:
        found = self.users.get(user_id)
        if found is None or found[0] < time.monotonic():
            return None
        return found[1]

    def _learn_user(self, user_id: int, row: tuple[Any, ...]) -> KnownUser:
        password, active, username, is_staff = row
        if len(self.users) > KNOWN_MAX:
            self.users.clear()
        user = KnownUser(
            user_id=user_id,
            username=str(username),
            is_staff=bool(is_staff),
            active=bool(active),
            session_hash=User(password=password).get_session_auth_hash(),
        )
        self.users[user_id] = (time.monotonic() + settings.BET_AUTH_CACHE_S, user)
        return user
