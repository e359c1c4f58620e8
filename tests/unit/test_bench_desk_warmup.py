"""The desk stage's warm-up (``bench.desk.warm_up``): it measures nothing until the reducers'
JVM has settled as the end-to-end stage's has, and the ticker keeps up. No Kafka: a stand-in
producer hands each bet's ticker frame back after a set delay."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from bench import desk
from bench.harness import JIT_SETTLED_CORES
from reducers.schemas import decode_bet_event

BUSY, QUIET = JIT_SETTLED_CORES * 5, JIT_SETTLED_CORES / 2


class _Desk:
    """Produces to nothing; each bet's ticker frame is seen ``delays[round]`` ms after its
    acceptance, where a round ends at the producer's flush."""

    def __init__(self, delays_ms: Iterator[float]) -> None:
        self.seen: dict[str, list[Any]] = {"ticker": [], "liability": []}
        self.rounds = 0
        self._delays = delays_ms
        self._delay = next(delays_ms)

    def produce(self, topic: str, *, key: bytes, value: bytes) -> None:
        event = decode_bet_event(value)
        self.seen["ticker"].append((event.ts + self._delay, event.bet_id))

    def poll(self, timeout: float) -> int:
        return 0

    def flush(self, timeout: float) -> int:
        self.rounds += 1
        self._delay = next(self._delays, self._delay)
        return 0


@pytest.fixture(autouse=True)
def short_rounds(monkeypatch):
    monkeypatch.setattr(desk, "WARMUP_ROUND_S", 0.05)
    monkeypatch.setattr(desk, "WARMUP_LEAST_S", 0.0)
    monkeypatch.setattr(desk, "WARMUP_MAX_S", 5.0)


def _warm_up(producer: _Desk, compilers: list[float]) -> tuple[float, float, list[float]]:
    readings = iter(compilers)
    return desk.warm_up(
        producer, producer.seen, rate=200, run=1, quick=False, compilers=lambda: next(readings, compilers[-1])
    )


def test_the_warm_up_goes_on_while_the_jvm_compiles_though_the_ticker_keeps_up():
    producer = _Desk(iter([50.0]))
    _, p99, readings = _warm_up(producer, [BUSY, BUSY, QUIET])
    assert producer.rounds == 3
    assert readings == [BUSY, BUSY, QUIET]
    assert p99 == 50.0


def test_a_round_past_the_steady_p99_is_not_the_end_even_with_the_compilers_quiet():
    producer = _Desk(iter([desk.STEADY_P99_MS + 1_000.0, 40.0]))
    _, p99, readings = _warm_up(producer, [QUIET])
    assert producer.rounds == 2
    assert readings == [QUIET, QUIET]
    assert p99 == 40.0


def test_the_warm_up_lasts_its_least_seconds_when_settled_at_once(monkeypatch):
    monkeypatch.setattr(desk, "WARMUP_LEAST_S", 0.3)
    producer = _Desk(iter([30.0]))
    started = time.monotonic()
    seconds, _, readings = _warm_up(producer, [QUIET])
    assert time.monotonic() - started >= 0.3
    assert seconds >= 0.3
    assert producer.rounds == len(readings) >= 0.3 / 0.05


def test_a_jvm_that_never_settles_ends_the_warm_up_at_its_longest(monkeypatch):
    monkeypatch.setattr(desk, "WARMUP_MAX_S", 0.3)
    producer = _Desk(iter([30.0]))
    seconds, _, readings = _warm_up(producer, [BUSY])
    assert 0.3 <= seconds < 0.3 + 0.5
    assert readings
    assert all(r == BUSY for r in readings)


def test_the_quick_warm_up_asks_no_compilers():
    producer = _Desk(iter([30.0]))
    _, _, readings = desk.warm_up(producer, producer.seen, rate=200, run=1, quick=True, compilers=None)
    assert readings == []
    assert producer.rounds == 1
