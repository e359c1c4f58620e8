"""The websocket handshake checks the Origin; frames above the size limit are refused in band."""

from __future__ import annotations

import pytest
from channels.testing import WebsocketCommunicator
from django.conf import settings

from webapp.asgi import application

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


async def _connect(headers: list[tuple[bytes, bytes]]) -> tuple[WebsocketCommunicator, bool]:
    communicator = WebsocketCommunicator(application, "/ws/odds/", headers=headers)
    connected, _ = await communicator.connect()
    return communicator, connected


@pytest.mark.parametrize(
    "origin",
    [b"https://evil.example", b"http://127.0.0.1.evil.example", b"null", b"http://localhost.evil:8000"],
)
async def test_handshake_from_a_foreign_origin_is_refused(services, origin):
    communicator, connected = await _connect([(b"origin", origin)])
    assert not connected
    await communicator.disconnect()


async def test_handshake_without_an_origin_is_refused(services):
    communicator, connected = await _connect([])
    assert not connected
    await communicator.disconnect()


async def test_handshake_from_an_allowed_host_is_accepted(services):
    communicator, connected = await _connect([(b"origin", b"http://127.0.0.1:8000")])
    assert connected
    assert (await communicator.receive_json_from())["type"] == "hello"
    await communicator.disconnect()


async def test_frame_above_the_limit_is_refused_and_the_connection_stays_usable(services):
    communicator, connected = await _connect([(b"origin", b"http://127.0.0.1:8000")])
    assert connected
    await communicator.receive_json_from()
    big = '{"type": "ping", "pad": "' + "x" * settings.WS_MAX_FRAME_BYTES + '"}'
    await communicator.send_to(text_data=big)
    refusal = await communicator.receive_json_from()
    assert (refusal["type"], refusal["code"]) == ("error", "frame_too_large")
    await communicator.send_json_to({"type": "ping"})
    assert (await communicator.receive_json_from())["type"] == "pong"
    await communicator.disconnect()


async def test_an_open_socket_holds_no_handshake_place(services, monkeypatch):
    """The consumer gives its handshake's place back once its ``hello`` is sent
    (webapp/admission.py): with one place, a second socket opens while the first stays open."""
    admission = application.application_mapping["websocket"]
    monkeypatch.setattr(admission, "at_once", 1)
    monkeypatch.setattr(admission, "slots", None)
    monkeypatch.setattr(admission, "wait_s", 5)
    first, connected = await _connect([(b"origin", b"http://127.0.0.1:8000")])
    assert connected
    assert (await first.receive_json_from())["type"] == "hello"
    second, connected = await _connect([(b"origin", b"http://127.0.0.1:8000")])
    assert connected, "the first socket's handshake place was given back at its hello"
    assert (await second.receive_json_from())["type"] == "hello"
    await first.disconnect()
    await second.disconnect()


async def test_a_refused_origin_gives_its_handshake_place_back(services, monkeypatch):
    admission = application.application_mapping["websocket"]
    monkeypatch.setattr(admission, "at_once", 1)
    monkeypatch.setattr(admission, "slots", None)
    monkeypatch.setattr(admission, "wait_s", 5)
    refused, connected = await _connect([(b"origin", b"https://evil.example")])
    assert not connected
    await refused.disconnect()
    accepted, connected = await _connect([(b"origin", b"http://127.0.0.1:8000")])
    assert connected
    await accepted.disconnect()
