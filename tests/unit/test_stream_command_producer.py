"""The stream control API's commands go through one producer per process, made once even when the
first requests arrive together (Django runs concurrent requests' views in threads of their own):
every command a request was told was sent is in the producer it flushed."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from odds.core import kafka
from odds.streaming.services import streams
from reducers.subscriptions import StreamCommand


class SlowToMakeProducer:
    """A producer that takes a moment to make and to take a record, and delivers only what it is
    flushed: a record left in a producer that no request flushes is lost with it."""

    made: list[SlowToMakeProducer] = []

    def __init__(self, **_: Any) -> None:
        time.sleep(0.05)
        self.pending: list[tuple[bytes, Any]] = []
        self.delivered: list[bytes] = []
        SlowToMakeProducer.made.append(self)

    def produce(self, topic: str, *, key: bytes, value: bytes, on_delivery: Any) -> None:
        self.pending.append((value, on_delivery))
        time.sleep(0.02)

    def flush(self, timeout: float) -> int:
        while self.pending:
            value, on_delivery = self.pending.pop(0)
            self.delivered.append(value)
            on_delivery(None, value)
        return 0


def test_concurrent_first_commands_all_reach_the_one_producer(monkeypatch: pytest.MonkeyPatch):
    SlowToMakeProducer.made = []
    monkeypatch.setattr(kafka, "producer_create", SlowToMakeProducer)
    kafka._shared.cache_clear()
    commands = [
        StreamCommand(type="begin", channel_id=f"channel-{n:02d}-0123456789", user_id=3, spec=None, ts=1)
        for n in range(8)
    ]
    start = threading.Barrier(len(commands))
    failures: list[BaseException] = []

    def send(command: StreamCommand) -> None:
        start.wait()
        try:
            streams._send(command)
        except BaseException as exc:  # reported below
            failures.append(exc)

    threads = [threading.Thread(target=send, args=(command,)) for command in commands]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    kafka._shared.cache_clear()  # the fake is no producer for the tests after this one

    assert failures == []
    assert [p.pending for p in SlowToMakeProducer.made if p.pending] == []
    assert len(SlowToMakeProducer.made) == 1
    [producer] = SlowToMakeProducer.made
    assert sorted(producer.delivered) == sorted(command.encode() for command in commands)
