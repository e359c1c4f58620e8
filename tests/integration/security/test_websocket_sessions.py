"""A websocket's handshake reads its session from Redis and its user on the web process's asyncio
pool (webapp/wsauth.py), with the rules of Django's ``get_user``; what that path leaves to Django
(a session only in PostgreSQL, a hash that does not match) goes through Channels' own path."""

from __future__ import annotations

import asyncio
from importlib import import_module

import channels.auth
import pytest
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.contrib.auth.models import User
from django.contrib.sessions.backends.cached_db import KEY_PREFIX
from django.contrib.sessions.models import Session
from django.core.cache import caches

from bench.common import session_create
from tests.factories import user_create
from webapp.asgi import application

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

ORIGIN = (b"origin", b"http://127.0.0.1:8000")


def _session(user, *, second_factor: bool = False) -> str:
    """A session as a login leaves it, in Redis and in PostgreSQL (``cached_db``)."""
    return session_create(user=user, second_factor=second_factor)


def _only_in_the_database(session_key: str) -> None:
    caches[settings.SESSION_CACHE_ALIAS].delete(KEY_PREFIX + session_key)


async def _hello(session_key: str) -> tuple[WebsocketCommunicator, dict]:
    cookie = (b"cookie", f"{settings.SESSION_COOKIE_NAME}={session_key}".encode())
    communicator = WebsocketCommunicator(application, "/ws/odds/", headers=[ORIGIN, cookie])
    connected, _ = await communicator.connect()
    assert connected
    hello = await communicator.receive_json_from()
    assert hello["type"] == "hello"
    return communicator, hello


@pytest.fixture
def channels_path_counted(monkeypatch) -> list[int]:
    """Every user Channels' own path reads, counted (by the user id it found, 0 for none)."""
    seen: list[int] = []
    real = channels.auth.get_user

    async def counted(scope):
        user = await real(scope)
        seen.append(user.pk or 0)
        return user

    monkeypatch.setattr(channels.auth, "get_user", counted)
    return seen


async def test_a_logged_in_handshake_names_its_user_without_channels_path(services, channels_path_counted):
    punter = await asyncio.to_thread(user_create, balance="0")
    session_key = await asyncio.to_thread(_session, punter)
    ws, hello = await _hello(session_key)
    assert hello["user"] == punter.username
    await ws.disconnect()
    # The second socket of the session: the user's row is the process's for a while.
    ws, hello = await _hello(session_key)
    assert hello["user"] == punter.username
    await ws.disconnect()
    assert channels_path_counted == [], "the session and the user were read on the event loop"


async def test_a_session_only_in_the_database_is_read_by_djangos_path(services, channels_path_counted):
    punter = await asyncio.to_thread(user_create, balance="0")
    session_key = await asyncio.to_thread(_session, punter)
    await asyncio.to_thread(_only_in_the_database, session_key)
    ws, hello = await _hello(session_key)
    assert hello["user"] == punter.username
    assert channels_path_counted == [punter.pk]
    await ws.disconnect()


async def test_a_session_whose_hash_no_longer_matches_is_anonymous_and_flushed(services, channels_path_counted):
    punter = await asyncio.to_thread(user_create, balance="0")
    session_key = await asyncio.to_thread(_session, punter)

    def password_changed() -> None:
        punter.set_password("another-password-entirely")
        punter.save()

    await asyncio.to_thread(password_changed)
    ws, hello = await _hello(session_key)
    assert hello["user"] is None
    assert channels_path_counted == [0], "Django's path decided, as for a page"
    assert not await asyncio.to_thread(lambda: Session.objects.filter(session_key=session_key).exists())
    await ws.disconnect()


async def test_an_inactive_users_session_is_anonymous(services):
    punter = await asyncio.to_thread(user_create, balance="0")
    await asyncio.to_thread(lambda: User.objects.filter(pk=punter.pk).update(is_active=False))
    session_key = await asyncio.to_thread(_session, punter)
    ws, hello = await _hello(session_key)
    assert hello["user"] is None
    await ws.disconnect()


async def test_a_deactivation_holds_for_new_sockets_once_the_process_reads_the_user_again(services, settings):
    settings.BET_AUTH_CACHE_S = 0
    punter = await asyncio.to_thread(user_create, balance="0")
    session_key = await asyncio.to_thread(_session, punter)
    ws, hello = await _hello(session_key)
    assert hello["user"] == punter.username
    await ws.disconnect()
    await asyncio.to_thread(lambda: User.objects.filter(pk=punter.pk).update(is_active=False))
    ws, hello = await _hello(session_key)
    assert hello["user"] is None
    await ws.disconnect()


async def test_a_logged_out_session_is_anonymous_at_once_though_its_user_is_known(services):
    punter = await asyncio.to_thread(user_create, balance="0")
    session_key = await asyncio.to_thread(_session, punter)
    ws, hello = await _hello(session_key)
    assert hello["user"] == punter.username
    await ws.disconnect()
    await asyncio.to_thread(lambda: import_module(settings.SESSION_ENGINE).SessionStore(session_key).delete())
    ws, hello = await _hello(session_key)
    assert hello["user"] is None
    await ws.disconnect()


@pytest.mark.parametrize("in_redis", [True, False], ids=["read on the event loop", "read by Django's path"])
@pytest.mark.parametrize("second_factor", [True, False], ids=["with a second factor", "password alone"])
async def test_the_desk_follows_a_staff_session_only_with_its_second_factor(services, in_redis, second_factor):
    trader = await asyncio.to_thread(user_create, balance="0", staff=True)
    session_key = await asyncio.to_thread(_session, trader, second_factor=second_factor)
    if not in_redis:
        await asyncio.to_thread(_only_in_the_database, session_key)
    ws, hello = await _hello(session_key)
    assert hello["user"] == trader.username
    await ws.send_json_to({"type": "desk"})
    answer = await ws.receive_json_from()
    if second_factor:
        assert answer["type"] == "desk.followed"
    else:
        assert (answer["type"], answer["code"]) == ("error", "second_factor_required")
    await ws.disconnect()
