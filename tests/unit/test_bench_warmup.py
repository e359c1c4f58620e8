"""The end-to-end stage: its warm-up goes on past its minimum until the reducers' JIT
compilers have settled, and never past its most; its real-time batches are the product's."""

from __future__ import annotations

import time
from typing import Any

import pytest

from bench import e2e
from bench.reducers import reducer_env


class _Producer:
    def __init__(self) -> None:
        self.sent = 0

    def produce(self, topic: str, *, key: bytes, value: bytes) -> None:
        self.sent += 1

    def poll(self, timeout: float) -> None:
        pass

    def flush(self, timeout: float) -> None:
        pass


class _Pipeline:
    def __init__(self) -> None:
        self.asked = 0

    def hget(self, key: str, field: str) -> None:
        self.asked += 1

    def execute(self) -> list[int]:
        return [10**9] * self.asked  # every market already at a newer sequence: warm


class _Client:
    def pipeline(self, transaction: bool = True) -> _Pipeline:
        return _Pipeline()


@pytest.fixture
def fast(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(e2e, "markets_define", lambda *args, **kwargs: None)
    # 100,000 prices a second: windows of 20 prices, and no real sleeping.
    monkeypatch.setattr(e2e, "WARMUP_WINDOW_S", 0.0002)
    monkeypatch.setattr(time, "sleep", lambda seconds: None)


def _warm_up(settled: Any, **kwargs: Any) -> tuple[float, int]:
    producer = _Producer()
    fed = e2e.warm_up_prices(producer, _Client(), rate=100_000, seconds=0.001, count=10, settled=settled, **kwargs)
    return fed, producer.sent


@pytest.mark.usefixtures("fast")
def test_without_a_settle_check_the_feed_stops_at_its_minimum():
    fed, sent = _warm_up(None)
    assert sent == 100
    assert fed == pytest.approx(0.001)


@pytest.mark.usefixtures("fast")
def test_the_feed_goes_on_until_a_window_is_quiet():
    answers = iter([False] * 7 + [True])
    asked: list[bool] = []

    def settled() -> bool:
        asked.append(next(answers))
        return asked[-1]

    fed, sent = _warm_up(settled, most_seconds=1)
    # Asked after every 20 prices; the eighth answer (after 160) was the first yes.
    assert len(asked) == 8
    assert sent == 160
    assert fed == pytest.approx(0.0016)


@pytest.mark.usefixtures("fast")
def test_a_quiet_window_before_the_minimum_does_not_end_it_early():
    fed, sent = _warm_up(lambda: True, most_seconds=1)
    assert sent == 100
    assert fed == pytest.approx(0.001)


@pytest.mark.usefixtures("fast")
def test_the_feed_never_goes_past_its_most():
    fed, sent = _warm_up(lambda: False, most_seconds=0.003)
    assert sent == 300
    assert fed == pytest.approx(0.003)


def test_the_end_to_end_stage_leaves_the_real_time_batch_to_the_product(monkeypatch: pytest.MonkeyPatch):
    assert "SPARK_REALTIME_BATCH" not in reducer_env("ns", "realtime", realtime_batch=None)
    assert reducer_env("ns", "realtime")["SPARK_REALTIME_BATCH"] == "30 seconds"
    asked: list[str | None] = []

    class _Started(Exception):
        pass

    def reducers_running(mode: str, *, log_name: str, realtime_batch: str | None = "30 seconds") -> Any:
        asked.append(realtime_batch)
        raise _Started

    monkeypatch.setattr(e2e, "reducers_running", reducers_running)
    monkeypatch.delenv("SPARK_REALTIME_BATCH", raising=False)
    with pytest.raises(_Started):
        e2e.bench_e2e(modes=["realtime"], clients=1, rate=1, duration=1)
    monkeypatch.setenv("SPARK_REALTIME_BATCH", "1 minute")
    with pytest.raises(_Started):
        e2e.bench_e2e(modes=["realtime"], clients=1, rate=1, duration=1)
    assert asked == [None, "1 minute"]
