"""Websocket handshakes admitted a few at a time, first come first served (webapp/admission.py)."""

from __future__ import annotations

import asyncio

import pytest

from webapp.admission import TRY_AGAIN_LATER, HandshakeAdmission


class Inner:
    """An application whose handshakes finish when the test says so."""

    def __init__(self) -> None:
        self.inside: list[int] = []
        self.entered: list[int] = []
        self.peak = 0
        self.finish: dict[int, asyncio.Event] = {}

    async def __call__(self, scope, receive, send) -> None:
        n = scope["n"]
        self.inside.append(n)
        self.entered.append(n)
        self.peak = max(self.peak, len(self.inside))
        await self.finish.setdefault(n, asyncio.Event()).wait()
        self.inside.remove(n)
        scope["handshake_done"]()
        # The socket stays open after its handshake: it holds no place.
        await asyncio.sleep(3600)


async def _sent(messages: list[dict]) -> None:
    return None


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_at_most_so_many_handshakes_run_at_once_and_the_rest_go_in_the_order_they_came():
    inner = Inner()
    admission = HandshakeAdmission(inner, at_once=2, wait_s=30)
    tasks = [asyncio.create_task(admission({"type": "websocket", "n": n}, None, _sent)) for n in range(5)]
    try:
        await _settle()
        assert inner.entered == [0, 1]
        inner.finish.setdefault(1, asyncio.Event()).set()
        await _settle()
        assert inner.entered == [0, 1, 2], "a done handshake lets the first waiting one in"
        for n in range(5):
            inner.finish.setdefault(n, asyncio.Event()).set()
            await _settle()
        assert inner.entered == [0, 1, 2, 3, 4]
        assert inner.peak == 2
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def test_a_handshake_that_waited_too_long_is_refused_with_try_again_later_and_never_enters():
    inner = Inner()
    admission = HandshakeAdmission(inner, at_once=1, wait_s=0.05)
    sent: list[dict] = []

    async def send(message: dict) -> None:
        sent.append(message)

    first = asyncio.create_task(admission({"type": "websocket", "n": 0}, None, _sent))
    await _settle()
    await admission({"type": "websocket", "n": 1}, None, send)
    assert sent == [{"type": "websocket.close", "code": TRY_AGAIN_LATER}]
    assert inner.entered == [0]
    first.cancel()
    await asyncio.gather(first, return_exceptions=True)


async def test_an_application_that_ends_without_saying_done_gives_its_place_back():
    entered: list[int] = []

    async def ends(scope, receive, send) -> None:
        entered.append(scope["n"])
        if scope["n"] == 0:
            raise RuntimeError("the consumer failed at connect")

    admission = HandshakeAdmission(ends, at_once=1, wait_s=1)
    with pytest.raises(RuntimeError):
        await admission({"type": "websocket", "n": 0}, None, _sent)
    await asyncio.wait_for(admission({"type": "websocket", "n": 1}, None, _sent), timeout=1)
    assert entered == [0, 1]


async def test_http_and_an_unlimited_admission_pass_straight_through():
    seen: list[dict] = []

    async def app(scope, receive, send) -> None:
        seen.append(scope)

    await HandshakeAdmission(app, at_once=1, wait_s=1)({"type": "http"}, None, _sent)
    await HandshakeAdmission(app, at_once=0, wait_s=1)({"type": "websocket"}, None, _sent)
    assert seen == [{"type": "http"}, {"type": "websocket"}], "nothing added to either scope"
