"""The end-to-end stage's rounds: the floor and the reducers in each mode are measured turn about,
one path running while the others are paused, and the figures are the medians of the windows."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from typing import Any

import pytest

from bench import e2e, edge
from bench.harness import Process
from bench.reducers import Reducers
from reducers.schemas import decode_price_update


def test_every_round_measures_the_floor_first_then_the_modes_asked_for():
    assert e2e.e2e_order(["microbatch", "realtime"]) == ["floor", "microbatch", "realtime"]
    assert e2e.e2e_order(["realtime"]) == ["floor", "realtime"]


def _window(path: str, round_: int, p50: float, p99: float, **extra: Any) -> dict[str, Any]:
    return {
        "round": round_,
        "path": path,
        "p50_ms": p50,
        "p99_ms": p99,
        "max_ms": p99 + 10,
        "deliveries_per_s": 1000 + round_,
        "stages": {"kafka_to_reducer_p50_ms": round_},
        **extra,
    }


def test_a_paths_figures_are_the_medians_of_its_windows_and_its_stages_those_of_the_median_window():
    windows = [
        _window("floor", 1, 50, 300),
        _window("realtime", 1, 90, 310),
        _window("floor", 2, 40, 100),
        _window("realtime", 2, 80, 200),
        _window("floor", 3, 45, 120),
        _window("realtime", 3, 85, 150),
    ]
    figures = e2e.e2e_figures("floor", windows)
    assert figures["e2e_floor_p50_ms"] == 45
    assert figures["e2e_floor_p99_ms"] == 120
    assert figures["e2e_floor_max_ms"] == 310
    assert figures["e2e_floor_stages"] == {"kafka_to_reducer_p50_ms": 3}
    assert e2e.e2e_figures("microbatch", windows) == {}
    ratios = e2e.e2e_ratios(windows)
    # 200 / 120, not the ratio of any one round, nor that of the means.
    assert ratios["e2e_realtime_p99_vs_floor"] == pytest.approx(1.67)
    assert ratios["e2e_realtime_p99_vs_floor_by_round"] == [pytest.approx(1.03), 2.0, pytest.approx(1.25)]


class _Process(Process):
    """A reducer process, never started, that notes when it is let go on and paused."""

    def __init__(self, name: str, journal: list[str]) -> None:
        super().__init__(name, [])
        self.journal = journal
        self.paused = False

    def pause(self) -> None:
        self.paused = True
        self.journal.append(f"pause {self.name}")

    def resume(self) -> None:
        self.paused = False
        self.journal.append(f"resume {self.name}")

    def pids(self) -> list[int]:
        return []

    def rss_mib(self) -> float:
        return 100.0


def _stage(
    monkeypatch: pytest.MonkeyPatch, p99s: list[float], delivered: int = 1000
) -> tuple[list[str], dict[str, _Process]]:
    """The end-to-end stage with its processes and the edge replaced: each window's p99 is the
    next of ``p99s``. Returns the journal of pauses, resumptions and windows, and the processes."""
    journal: list[str] = []
    processes: dict[str, _Process] = {}
    answers = iter(p99s)

    def reducers(name: str) -> Reducers:
        processes[name] = _Process(name, journal)
        return Reducers(f"ns-{name}", {}, processes[name], None, None)

    @contextlib.contextmanager
    def reducers_running(mode: str, **_: Any) -> Iterator[Reducers]:
        yield reducers(mode)

    @contextlib.contextmanager
    def floor_running() -> Iterator[Reducers]:
        yield reducers("floor")

    def edge_run(args: Any) -> dict[str, Any]:
        running = [name for name, process in processes.items() if not process.paused]
        namespace = os.environ["SPORTSBOOK_NAMESPACE"]
        journal.append(f"measure {','.join(running)} in {namespace}")
        p99 = next(answers)
        return {
            "p50_ms": p99 / 2,
            "p99_ms": p99,
            "max_ms": p99 + 1,
            "deliveries_per_s": delivered,
            "server_rss_mib": 90,
        }

    monkeypatch.setattr(e2e, "reducers_running", reducers_running)
    monkeypatch.setattr(e2e, "floor_running", floor_running)
    monkeypatch.setattr(e2e, "warm_up_e2e", lambda running, rate: {"seconds": 180, "compiler_cores": [0.05]})
    monkeypatch.setattr(edge, "run", edge_run)
    monkeypatch.setattr(e2e, "service_rss_mib", lambda: {"kafka": 1.0})
    monkeypatch.setattr(e2e, "log", lambda message: None)
    return journal, processes


def test_each_window_runs_its_path_alone_in_its_namespace_and_every_round_measures_every_path(
    monkeypatch: pytest.MonkeyPatch,
):
    journal, processes = _stage(monkeypatch, [300, 250, 200, 100, 240, 210, 120, 260, 150])

    out = e2e.bench_e2e(clients=1, rate=1000, duration=1, rounds=3)

    measured = [line for line in journal if line.startswith("measure")]
    assert (
        measured
        == [
            "measure floor in ns-floor",
            "measure microbatch in ns-microbatch",
            "measure realtime in ns-realtime",
        ]
        * 3
    )
    # Every path is paused once its window is over, and all are paused when the stage ends.
    assert all(process.paused for process in processes.values())
    assert out["e2e_floor_p99_ms"] == 120
    assert out["e2e_microbatch_p99_ms"] == 250
    assert out["e2e_realtime_p99_ms"] == 200
    assert out["e2e_realtime_p99_vs_floor"] == pytest.approx(1.67)
    assert [w["path"] for w in out["e2e_windows"]] == ["floor", "microbatch", "realtime"] * 3
    assert out["e2e_microbatch_warmup_s"] == 180
    assert out["footprint_realtime_mib"] == {"reducers": 100, "web": 90, "kafka": 1.0}


def test_a_window_in_which_no_price_reached_a_client_fails_the_stage(monkeypatch: pytest.MonkeyPatch):
    _stage(monkeypatch, [100.0] * 3, delivered=0)
    with pytest.raises(RuntimeError, match="round 1, floor: no price reached a client"):
        e2e.bench_e2e(clients=1, rate=1000, duration=1, rounds=1)


def test_a_later_feed_of_the_same_markets_starts_above_every_sequence_of_an_earlier_one(
    monkeypatch: pytest.MonkeyPatch,
):
    """The same reducers are fed once a round: a feed starting again from 1 would be refused as
    old and measure nothing."""
    sent: list[Any] = []

    class _Producer:
        def produce(self, topic: str, *, key: bytes, value: bytes) -> None:
            sent.append(value)

        def poll(self, timeout: float) -> None:
            pass

        def flush(self, timeout: float) -> None:
            pass

    class _Out:
        def put(self, value: Any) -> None:
            pass

    monkeypatch.setattr("store.clients.kafka_producer", lambda *args, **kwargs: _Producer())
    monkeypatch.setenv("SPORTSBOOK_NAMESPACE", "sb")

    def feed() -> dict[int, list[int]]:
        sent.clear()
        edge.kafka_feed_process("sb", 5, 2000, 0.05, _Out())
        seqs: dict[int, list[int]] = {}
        for value in sent:
            record = decode_price_update(value)
            seqs.setdefault(record.market_id, []).append(record.seq)
        return seqs

    first = feed()
    time.sleep(0.01)
    second = feed()
    assert first
    assert second
    assert min(min(s) for s in second.values()) > max(max(s) for s in first.values())
    # Within a feed, a market's sequences still go up by one.
    assert all(s == list(range(s[0], s[0] + len(s))) for s in second.values())
