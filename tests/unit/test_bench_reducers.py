"""The micro-batch reducers stage's rounds: consumers alternate, figures are the medians of their
runs, and the ratios are taken between the medians."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from bench import reducers
from bench.common import median_run


def test_every_other_round_runs_the_consumers_in_reverse():
    assert reducers.round_order(0) == ["reducers", "ceiling", "plain"]
    assert reducers.round_order(1) == ["plain", "ceiling", "reducers"]
    assert reducers.round_order(2) == reducers.round_order(0)


def test_the_median_run_is_whole_and_the_lower_of_an_even_count():
    runs = [{"rate": 40, "drain": 1}, {"rate": 20, "drain": 2}, {"rate": 30, "drain": 3}]
    assert median_run(runs, "rate") == {"rate": 30, "drain": 3}
    assert median_run(runs[:2], "rate") == {"rate": 20, "drain": 2}


def test_a_run_without_its_figure_is_not_the_median():
    runs: list[dict[str, Any]] = [{"rate": None, "drain": 9}, {"rate": 50, "drain": 1}]
    assert median_run(runs, "rate") == {"rate": 50, "drain": 1}
    assert median_run([{"rate": None}], "rate") == {"rate": None}


def test_rounds_keep_every_run_and_take_the_ratios_of_the_medians(monkeypatch: pytest.MonkeyPatch):
    rates = {
        "reducers": iter([40_000, 44_000, 30_000]),
        "ceiling": iter([60_000, 80_000, 64_000]),
        "plain": iter([35_000, 33_000, 50_000]),
    }
    order: list[str] = []

    def consumer(name: str, key: str):
        def measure(**_: object) -> dict[str, int]:
            order.append(name)
            return {key: next(rates[name]), f"{name}_extra": len(order)}

        return measure

    monkeypatch.setattr(reducers, "bench_reducers", consumer("reducers", "reducer_microbatch_updates_per_s"))
    monkeypatch.setattr(reducers, "bench_reducer_ceiling", consumer("ceiling", "reducer_spark_ceiling_updates_per_s"))
    monkeypatch.setattr(reducers, "bench_plain_consumer", consumer("plain", "reducer_plain_consumer_updates_per_s"))
    monkeypatch.setattr(reducers, "cpu_probe_ms", lambda: 100.0)
    monkeypatch.setattr(reducers, "log", lambda message: None)

    results: dict[str, Any] = {}
    reducers.reducer_rounds(results, records=1_000, rounds=3)

    assert order == ["reducers", "ceiling", "plain", "plain", "ceiling", "reducers", "reducers", "ceiling", "plain"]
    assert results["reducer_microbatch_updates_per_s"] == 40_000
    assert results["reducer_spark_ceiling_updates_per_s"] == 64_000
    assert results["reducer_plain_consumer_updates_per_s"] == 35_000
    # The figures beside a median come from its run: the reducers' 40,000 was the first run.
    assert results["reducers_extra"] == 1
    assert results["reducer_microbatch_vs_ceiling"] == round(40_000 / 64_000, 2)
    assert results["reducer_microbatch_vs_plain"] == round(40_000 / 35_000, 2)
    kept = results["reducer_rounds"]
    assert [(r["round"], r["consumer"], r["updates_per_s"]) for r in kept][:4] == [
        (1, "reducers", 40_000),
        (1, "ceiling", 60_000),
        (1, "plain", 35_000),
        (2, "plain", 33_000),
    ]
    line = reducers.reducer_rounds_line(results)[0]
    assert "3 rounds" in line
    assert "reducers 40,000, ceiling 60,000, plain 35,000, plain 33,000" in line


class ProgressLists:
    """The reducers' recent progress reports of each query, as Redis lists hold them."""

    def __init__(self, reports: dict[str, list[dict[str, Any]]]) -> None:
        from store import keys

        self._lists = {keys.reducer_progress_recent(q): [orjson.dumps(r) for r in rs] for q, rs in reports.items()}

    def lrange(self, name: str, start: int, end: int) -> list[bytes]:
        return list(self._lists.get(name, []))


def report(batch_id: int, rows: int, timestamp: str) -> dict[str, Any]:
    return {"batchId": batch_id, "numInputRows": rows, "durationMs": {"triggerExecution": 10}, "timestamp": timestamp}


def test_the_warm_up_is_settled_once_the_movers_finish_a_batch_with_rows_started_after_it():
    from datetime import datetime

    since = datetime.fromisoformat("2026-11-27T21:00:10+00:00").timestamp()
    before = report(1, 2_000, "2026-11-27T21:00:05.000Z")
    empty_after = report(2, 0, "2026-11-27T21:00:11.000Z")
    after = report(3, 5_000, "2026-11-27T21:00:15.000Z")
    prices_after = report(9, 200_000, "2026-11-27T21:00:15.000Z")

    ran_since = reducers.movers_ran_since
    assert not ran_since(ProgressLists({"movers": [before, empty_after], "prices": [prices_after]}))(since)
    assert ran_since(ProgressLists({"movers": [after, empty_after, before]}))(since)
    assert not ran_since(ProgressLists({}))(since)


def test_a_drains_rate_is_its_busy_batches_unless_wall_clock_is_asked_for_or_no_report_came():
    batch = reducers.Batch(rows=400_000, ms=4_000, started=1.0)
    drain = reducers.Drain(
        records=1_100_000,
        warmup=100_000,
        drain_s=12.0,
        ninety_s=10.0,
        batches={7: batch},
        produced_at=0.0,
        done_when_produced=0,
        after_s=5.0,
    )
    assert drain.rate() == (100_000, "busy batches")
    assert drain.rate(wall_clock=True) == (90_000, "wall clock")
    assert reducers.Drain(**{**drain.__dict__, "batches": {}}).rate() == (90_000, "wall clock")


def test_cpu_per_1000_updates_counts_only_the_measured_backlog_and_the_ratio_is_against_the_bare_query():
    drain = reducers.Drain(
        records=1_100_000,
        warmup=100_000,
        drain_s=12.0,
        ninety_s=10.0,
        batches={},
        produced_at=0.0,
        done_when_produced=0,
        after_s=5.0,
        cpu_s=30.0,
    )
    assert drain.cpu_s_per_1000() == 0.03
    assert reducers.Drain(**{**drain.__dict__, "cpu_s": None}).cpu_s_per_1000() is None
    results: dict[str, Any] = {
        "reducer_microbatch_updates_per_s": 70_000,
        "reducer_spark_ceiling_updates_per_s": 100_000,
        "reducer_microbatch_cpu_s_per_1000": 0.03,
        "reducer_spark_ceiling_cpu_s_per_1000": 0.02,
    }
    reducers.reducer_ratios(results)
    assert results["reducer_cpu_vs_ceiling"] == 1.5
    del results["reducer_spark_ceiling_cpu_s_per_1000"]
    reducers.reducer_ratios(results)
    assert results["reducer_cpu_vs_ceiling"] is None
