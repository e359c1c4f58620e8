"""Window partials of small batches kept and sent together (``spark.sinks.windows.BufferedWindows``):
nothing is sent before ``flush``, what is kept is merged per (window, market) as the movers merge
it, and a flush that fails keeps every partial for the next."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

import pytest

from reducers.movers import WindowPartial, merge_all
from spark.sinks.windows import BufferedWindows
from tests.fakes import FakeWindows


def _partial(market_id: int, seq: int, price: str, *, window_start: int = 60_000) -> WindowPartial:
    prices = ((1, Decimal(price)),)
    return WindowPartial(window_start, market_id, seq, prices, seq, prices, window_start + seq, 1)


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_partials_are_kept_until_a_flush_and_sent_merged_as_the_movers_merge_them():
    sink, clock = FakeWindows(), _Clock()
    buffered = BufferedWindows(sink, every_s=0.5, clock=clock)
    first = [_partial(7, 1, "2.00"), _partial(8, 1, "3.00")]
    second = [_partial(7, 2, "2.10"), _partial(7, 3, "2.20", window_start=120_000)]
    buffered.send(first)
    buffered.send(second)
    assert sink.sent == []

    buffered.flush()

    assert sorted(sink.sent, key=lambda p: (p.window_start, p.market_id)) == merge_all(first, second)
    # Market 7's first window: the first snapshot of seq 1, the last of seq 2, two updates.
    [seven] = [p for p in sink.sent if (p.window_start, p.market_id) == (60_000, 7)]
    assert (seven.first_seq, seven.last_seq, seven.updates) == (1, 2, 2)
    sink.sent.clear()
    buffered.flush()
    assert sink.sent == []


def test_a_flush_is_due_once_the_oldest_partial_kept_has_waited_its_time():
    clock = _Clock()
    buffered = BufferedWindows(FakeWindows(), every_s=0.5, clock=clock)
    assert not buffered.due()
    buffered.send([])
    clock.now += 1
    assert not buffered.due()  # nothing kept, nothing due
    buffered.send([_partial(7, 1, "2.00")])
    clock.now += 0.3
    buffered.send([_partial(7, 2, "2.10")])
    assert not buffered.due()
    clock.now += 0.2
    assert buffered.due()
    buffered.flush()
    assert not buffered.due()


def test_it_holds_partials_only_between_a_send_of_some_and_the_flush():
    buffered = BufferedWindows(FakeWindows(), every_s=0.5, clock=_Clock())
    assert not buffered.holding()
    buffered.send([])
    assert not buffered.holding()
    buffered.send([_partial(7, 1, "2.00")])
    assert buffered.holding()
    buffered.flush()
    assert not buffered.holding()


class _Failing:
    def __init__(self) -> None:
        self.fail = True
        self.sent: list[WindowPartial] = []

    def send(self, partials: Sequence[WindowPartial]) -> None:
        if self.fail:
            raise RuntimeError("2 window partials not acknowledged within 30s")
        self.sent.extend(partials)


def test_a_flush_that_fails_keeps_every_partial_for_the_next():
    sink = _Failing()
    buffered = BufferedWindows(sink, every_s=0.5, clock=_Clock())
    buffered.send([_partial(7, 1, "2.00"), _partial(8, 1, "3.00")])
    with pytest.raises(RuntimeError, match="not acknowledged"):
        buffered.flush()
    sink.fail = False
    buffered.flush()
    assert [p.market_id for p in sink.sent] == [7, 8]
