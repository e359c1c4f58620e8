"""The market-scale stage's figures from its windows."""

from __future__ import annotations

from bench.markets import label, markets_summary


def window(universe: int, p99: float, round_: int = 1) -> dict:
    return {
        "round": round_,
        "universe": universe,
        "p50_ms": p99 / 4,
        "p99_ms": p99,
        "max_ms": p99 * 2,
        "deliveries_per_s": 20_000_000 // universe,
        "stages": {},
    }


def test_each_universe_takes_the_median_of_its_windows_and_the_largest_is_compared_with_the_smallest():
    windows = [
        *(window(1000, p99, n) for n, p99 in enumerate((200, 100, 150), 1)),
        *(window(10_000, p99, n) for n, p99 in enumerate((240, 900, 300), 1)),
    ]
    summary = markets_summary(windows, (1000, 10_000))
    assert summary["e2e_1k_markets_p99_ms"] == 150.0
    assert summary["e2e_10k_markets_p99_ms"] == 300.0
    assert summary["e2e_10k_vs_1k_markets"] == 2.0
    assert summary["e2e_10k_markets_deliveries_per_s"] == 2000


def test_labels_name_thousands_and_leave_other_sizes_as_they_are():
    assert [label(u) for u in (1000, 10_000, 200)] == ["1k", "10k", "200"]


def test_a_universe_never_measured_gives_no_ratio():
    summary = markets_summary([window(1000, 200)], (1000, 10_000))
    assert summary["e2e_10k_vs_1k_markets"] is None
    assert "e2e_10k_markets_p99_ms" not in summary
