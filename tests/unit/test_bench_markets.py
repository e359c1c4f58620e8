"""The market-scale stage's figures from its windows."""

from __future__ import annotations

from typing import Any

from bench.markets import label, markdown_lines, markets_summary, plot_markets


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


def test_each_universe_takes_the_median_of_its_drains_and_carries_its_page_figures_on_the_curve():
    drains: list[dict[str, Any]] = [
        {"round": 1, "universe": 1000, "updates_per_s": 90_000, "cpu_s_per_1000": 0.02},
        {"round": 1, "universe": 10_000, "updates_per_s": 60_000, "cpu_s_per_1000": 0.04},
        {"round": 2, "universe": 1000, "updates_per_s": 70_000},
        {"round": 2, "universe": 10_000, "updates_per_s": None},
        {"round": 3, "universe": 1000, "updates_per_s": 80_000},
    ]
    pages = {1000: {"snapshot_ms": 12.5, "first_price_ms": 40.0}, 10_000: {"snapshot_ms": 30.0}}
    summary = markets_summary([window(1000, 100), window(10_000, 120)], (1000, 10_000), drains=drains, pages=pages)
    assert summary["markets_1k_reducer_updates_per_s"] == 80_000
    # A drain without a rate is left out, not counted as nothing.
    assert summary["markets_10k_reducer_updates_per_s"] == 60_000
    assert summary["markets_1k_reducer_cpu_s_per_1000"] == 0.02
    assert summary["markets_10k_snapshot_ms"] == 30.0
    assert "markets_10k_first_price_ms" not in summary
    assert summary["markets_curve"] == [
        {
            "markets": 1000,
            "reducer_updates_per_s": 80_000,
            "reducer_cpu_s_per_1000": 0.02,
            "snapshot_ms": 12.5,
            "first_price_ms": 40.0,
            "p50_ms": 25.0,
            "p99_ms": 100.0,
        },
        {
            "markets": 10_000,
            "reducer_updates_per_s": 60_000,
            "reducer_cpu_s_per_1000": 0.04,
            "snapshot_ms": 30.0,
            "p50_ms": 30.0,
            "p99_ms": 120.0,
        },
    ]


def test_the_report_tables_the_curve_and_draws_it(tmp_path):
    pages = {u: {"snapshot_ms": 10.0, "snapshot_bytes": 40_000, "first_price_ms": 35.5} for u in (1000, 10_000)}
    drains = [{"round": 1, "universe": u, "updates_per_s": 50_000} for u in (1000, 10_000)]
    summary = markets_summary([window(1000, 100), window(10_000, 130)], (1000, 10_000), drains=drains, pages=pages)
    lines = markdown_lines(summary)
    assert "| 10,000 | 130 | 50,000 | — | 40,000 | 10.0 | — | — | 35.5 |" in lines
    assert any("img/markets.png" in line for line in lines)
    path = tmp_path / "markets.png"
    plot_markets(summary, path)
    assert path.read_bytes().startswith(b"\x89PNG")
