"""The hub's tick: one frame per distinct set of markets, and a socket that is behind folds
ticks into latest-wins per market (the consumer's side)."""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace

from odds.streaming.consumers import OddsConsumer
from odds.streaming.hub import Listener, tick_frames
from odds.streaming.session import Limits, Session


class Inbox:
    def deliver(self, channel: bytes, payload: str) -> None:
        raise AssertionError("market states of a batched socket go through the tick")

    def deliver_tick(self, frame: str, channels: tuple[bytes, ...], moved: dict[bytes, str], replaced: int) -> None:
        raise AssertionError("tick_frames only computes")

    def resync(self) -> None:
        raise AssertionError("tick_frames only computes")


def state(market: int, seq: int) -> str:
    return json.dumps({"type": "market", "market_id": market, "seq": seq})


def test_listeners_with_the_same_moved_markets_share_one_frame_object():
    a, b, c, quiet = Inbox(), Inbox(), Inbox(), Inbox()
    moved = {b"px:1": state(1, 7), b"px:2": state(2, 3)}
    batched: dict[bytes, set[Listener]] = {b"px:1": {a, b, c}, b"px:2": {a, b}, b"px:3": {quiet}}
    frames = tick_frames(moved, batched)
    by_listener = {id(listener): (frame, channels) for frame, channels, listeners in frames for listener in listeners}
    assert id(quiet) not in by_listener, "a socket whose markets did not move gets nothing"
    assert by_listener[id(a)][0] is by_listener[id(b)][0]
    batch = json.loads(by_listener[id(a)][0])
    assert batch["type"] == "markets"
    assert [i["market_id"] for i in batch["items"]] == [1, 2]
    assert by_listener[id(c)] == (moved[b"px:1"], (b"px:1",)), "one market: its own message, unwrapped"
    assert len(frames) == 2


def socket(*, idle: bool) -> SimpleNamespace:
    """The consumer's I/O that deliver_tick works on, around a real session; ``idle``: nothing
    queued or being written."""
    written: list[str] = []

    async def base_send(message: dict) -> None:
        written.append(message["text"])

    limits = Limits(frames_per_s=20, image_markets_per_min=2000, markets=500, events=500)
    return SimpleNamespace(
        session=Session(limits=limits, batched=True),
        wake=asyncio.Event(),
        inflight=None,
        last_write=0.0,
        written=written,
        base_send=base_send,
        _idle=lambda: idle,
        _inflight_done=lambda task: None,
    )


async def test_a_tick_for_an_idle_socket_is_written_at_once_without_waking_its_writer():
    idle = socket(idle=True)
    moved = {b"px:1": state(1, 1)}
    OddsConsumer.deliver_tick(idle, moved[b"px:1"], (b"px:1",), moved, 0)  # type: ignore[arg-type]
    assert idle.written == [moved[b"px:1"]]
    assert idle.inflight is None, "the write completed: no task"
    assert not idle.wake.is_set()
    assert not idle.session.owes()


def test_a_tick_with_replaced_updates_goes_through_the_writer_to_say_so():
    idle = socket(idle=True)
    moved = {b"px:1": state(1, 3)}
    OddsConsumer.deliver_tick(idle, moved[b"px:1"], (b"px:1",), moved, 2)  # type: ignore[arg-type]
    assert idle.written == []
    assert idle.wake.is_set()
    assert idle.session.take(now_ms=1) == [moved[b"px:1"], '{"type":"conflated","merged":2}']


def test_ticks_reaching_a_socket_that_is_behind_fold_into_latest_wins_per_market():
    busy = socket(idle=False)
    first = {b"px:1": state(1, 1), b"px:2": state(2, 1)}
    OddsConsumer.deliver_tick(busy, "frame-1", (b"px:1", b"px:2"), first, 0)  # type: ignore[arg-type]
    second = {b"px:1": state(1, 2)}
    OddsConsumer.deliver_tick(busy, second[b"px:1"], (b"px:1",), second, 0)  # type: ignore[arg-type]
    assert busy.session.ready is None
    assert busy.session.latest == {b"px:1": state(1, 2), b"px:2": state(2, 1)}
    assert busy.session.merged == 1, "the replaced state of market 1 is counted, not dropped silently"
    assert busy.written == []
