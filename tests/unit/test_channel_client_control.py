"""The fault tests' channel client asks the control API as the page does: a 503 is asked again
after the page's delay and recorded as a refusal, never as a dropped connection; anything else
unexpected raises."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.integration.reliability import clients
from tests.integration.reliability.clients import ChannelClient, Session

UNAVAILABLE = {"v": 1, "error": {"code": "state_unavailable", "message": "try again"}}


class ScriptedSession(Session):
    """A session whose control calls are answered from a script, and recorded."""

    def __init__(self, answers: list[tuple[int, dict[str, Any]]]) -> None:
        super().__init__(base="http://127.0.0.1:1", sessionid="scripted")
        self.answers = answers
        self.calls: list[tuple[str, str]] = []

    def call(self, method: str, path: str, body: object | None = None) -> tuple[int, dict[str, Any]]:
        self.calls.append((method, path))
        return self.answers.pop(0)


class Socket:
    def __init__(self) -> None:
        self.sent: list[str] = []

    async def send(self, text: str) -> None:
        self.sent.append(text)


@pytest.fixture(autouse=True)
def no_wait(monkeypatch):
    monkeypatch.setattr(clients, "CONTROL_RETRY_S", 0.0)


def test_a_subscribe_answered_503_is_asked_again_and_the_channel_is_attached():
    session = ScriptedSession([(503, UNAVAILABLE), (503, UNAVAILABLE), (201, {"channel": "c1"})])
    client = ChannelClient(session, [1, 2])
    socket = Socket()

    asyncio.run(client.on_open(socket))

    assert client.channel == "c1"
    assert client.refusals == ["subscribe: state_unavailable", "subscribe: state_unavailable"]
    assert session.calls == [("POST", "/api/streams")] * 3
    assert socket.sent == ['{"type": "attach", "channel": "c1"}']
    assert client.drops == 0


def test_a_subscribe_refused_every_time_raises_after_the_last_attempt():
    session = ScriptedSession([(503, UNAVAILABLE)] * clients.CONTROL_ATTEMPTS)
    client = ChannelClient(session, [1])

    with pytest.raises(OSError, match="subscribe answered 503"):
        asyncio.run(client.on_open(Socket()))
    assert len(client.refusals) == clients.CONTROL_ATTEMPTS
    assert client.channel is None


def test_an_answer_other_than_503_is_not_asked_again():
    session = ScriptedSession([(409, {"v": 1, "error": {"code": "too_many_channels"}})])
    client = ChannelClient(session, [1])

    with pytest.raises(OSError, match="subscribe answered 409"):
        asyncio.run(client.on_open(Socket()))
    assert client.refusals == []
    assert len(session.calls) == 1


def test_a_begin_answered_503_is_asked_again():
    session = ScriptedSession([(503, UNAVAILABLE), (202, {"channel": "c1", "status": "begin requested"})])
    client = ChannelClient(session, [1])
    client.channel = "c1"

    asyncio.run(client.on_frame(Socket(), {"type": "attached", "channel": "c1"}))

    assert session.calls == [("POST", "/api/streams/c1/begin")] * 2
    assert client.refusals == ["begin: state_unavailable"]
