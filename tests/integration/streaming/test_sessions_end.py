"""Sessions that end: a logout, a password change, a deactivated account and a self-exclusion
close the punter's sockets (a ``session.ended`` frame saying why, then close code 4401) and end
their subscriber channels. Real Redis pub-sub between the services and the sockets, the real
command topic for the channels."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import Client

from odds.core.events import CLOSE_SESSION_ENDED
from odds.streaming.services.streams import channel_end_reason, channel_owned_by
from tests.factories import user_create
from webapp.asgi import application

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

ORIGIN = (b"origin", b"http://127.0.0.1:8000")
PASSWORD = "pw-for-tests-only"


def browser(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


async def socket(client: Client) -> WebsocketCommunicator:
    cookie = f"sessionid={client.cookies['sessionid'].value}".encode()
    communicator = WebsocketCommunicator(application, "/ws/odds/", headers=[ORIGIN, (b"cookie", cookie)])
    connected, _ = await communicator.connect()
    assert connected
    assert (await communicator.receive_json_from())["type"] == "hello"
    return communicator


async def session_end_of(communicator: WebsocketCommunicator) -> tuple[str, int]:
    """The reason the socket was told and the code it was closed with."""
    while True:
        message = await communicator.receive_output(timeout=10)
        if message["type"] == "websocket.close":
            pytest.fail("closed without saying why")
        frame = json.loads(message["text"])
        if frame["type"] == "session.ended":
            closed = await communicator.receive_output(timeout=10)
            assert closed["type"] == "websocket.close"
            return frame["reason"], closed["code"]


async def still_open(communicator: WebsocketCommunicator) -> bool:
    await communicator.send_json_to({"type": "ping"})
    while True:
        message = await communicator.receive_output(timeout=10)
        if message["type"] == "websocket.close":
            return False
        if json.loads(message["text"])["type"] == "pong":
            return True


def subscribed(client: Client) -> str:
    response = client.post("/api/streams", {"view": "markets", "markets": [1]}, content_type="application/json")
    assert response.status_code == 201, response.content
    return response.json()["channel"]


async def test_logout_closes_that_sessions_sockets_and_ends_its_channels(services, kafka_topics):
    punter = await sync_to_async(user_create)()
    laptop, phone = await sync_to_async(browser)(punter), await sync_to_async(browser)(punter)
    channel = await sync_to_async(subscribed)(laptop)
    session = laptop.session.session_key
    on_laptop, on_phone = await socket(laptop), await socket(phone)
    try:
        await sync_to_async(laptop.logout)()
        assert await session_end_of(on_laptop) == ("logged_out", CLOSE_SESSION_ENDED)
        # The punter's other browser is not logged out.
        assert await still_open(on_phone)
    finally:
        await on_laptop.disconnect()
        await on_phone.disconnect()
    assert not await sync_to_async(channel_owned_by)(channel_id=channel, user_id=punter.pk, session_key=session)
    reason = await sync_to_async(channel_end_reason)(channel_id=channel, user_id=punter.pk, session_key=session)
    assert reason == "logged_out"


async def test_a_password_change_closes_every_socket_of_the_punter(services, kafka_topics):
    punter = await sync_to_async(user_create)()
    first, second = await sync_to_async(browser)(punter), await sync_to_async(browser)(punter)
    sockets = [await socket(first), await socket(second)]
    try:

        def change_password() -> None:
            punter.set_password("another password for tests")
            punter.save()

        await sync_to_async(change_password)()
        assert [await session_end_of(s) for s in sockets] == [("password_changed", CLOSE_SESSION_ENDED)] * 2
    finally:
        for s in sockets:
            await s.disconnect()


async def test_a_deactivated_account_loses_its_sockets_and_channels(services, kafka_topics):
    punter = await sync_to_async(user_create)()
    client = await sync_to_async(browser)(punter)
    channel = await sync_to_async(subscribed)(client)
    session = client.session.session_key
    communicator = await socket(client)
    try:

        def deactivate() -> None:
            punter.is_active = False
            punter.save(update_fields=["is_active"])

        await sync_to_async(deactivate)()
        assert await session_end_of(communicator) == ("deactivated", CLOSE_SESSION_ENDED)
    finally:
        await communicator.disconnect()
    reason = await sync_to_async(channel_end_reason)(channel_id=channel, user_id=punter.pk, session_key=session)
    assert reason == "deactivated"


async def test_a_self_exclusion_closes_the_punters_sockets(services, kafka_topics):
    punter = await sync_to_async(user_create)()
    client = await sync_to_async(browser)(punter)
    communicator = await socket(client)
    try:
        response = await sync_to_async(client.post)(
            "/api/wallet/break", {"v": 1, "length": "exclude_6m"}, content_type="application/json"
        )
        assert response.status_code == 200, response.content
        assert await session_end_of(communicator) == ("self_excluded", CLOSE_SESSION_ENDED)
    finally:
        await communicator.disconnect()


async def test_another_punters_logout_closes_nothing_of_mine(services, kafka_topics):
    mine, theirs = await sync_to_async(user_create)(), await sync_to_async(user_create)()
    my_client, their_client = await sync_to_async(browser)(mine), await sync_to_async(browser)(theirs)
    communicator = await socket(my_client)
    try:
        await sync_to_async(their_client.logout)()
        assert await still_open(communicator)
    finally:
        await communicator.disconnect()
