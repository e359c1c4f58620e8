"""The socket-scale stage's decisions: which row counts, what gave first, and the keys it writes."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest

from bench import sockets
from bench.sockets import (
    ARRIVAL_PER_S,
    RATES,
    bench_sockets,
    best,
    climb_arrival,
    first_limit,
    markdown_lines,
    median_row,
    paced_rates,
    sockets_summary,
    within,
)


def row(edge: str, clients: int, rate: int, **over: Any) -> dict[str, Any]:
    base = {
        "edge": edge,
        "clients": clients,
        "rate": rate,
        "p99_ms": 40.0,
        "client_errors": 0,
        "deliveries_per_s": clients * rate // 50,
        "expected_per_s": clients * rate // 50,
        "opens": clients,
        "server_cpu_s_per_1000": 0.02 if edge == "hub" else 0.01,
        "rss_per_socket_idle_kib": 30.0 if edge == "hub" else 12.0,
        "rss_per_socket_streaming_kib": 40.0 if edge == "hub" else 16.0,
        "accepted_per_s": 900 if edge == "hub" else 3000,
    }
    return {**base, **over}


def test_a_row_counts_only_within_the_bound_with_every_socket_open_and_everything_delivered():
    assert within(row("hub", 100, 50))
    assert not within(row("hub", 100, 50, p99_ms=101.0))
    assert not within(row("hub", 100, 50, client_errors=3))
    assert not within(row("hub", 100, 50, opens=99))
    assert not within(row("hub", 100, 50, deliveries_per_s=10))
    assert not within(row("hub", 100, 50, late_opens=3)), "handshakes in the measured window"


def test_the_best_row_is_the_highest_delivery_rate_within_the_bound():
    rows = [row("hub", 100, 50), row("hub", 100, 100), row("hub", 100, 200, p99_ms=300.0)]
    assert best(rows) == rows[1]
    assert best([row("hub", 100, 50, p99_ms=300.0)]) is None


def test_the_first_limit_names_what_gave():
    assert first_limit([row("hub", 100, 50)], open_files=65536) == "none up to 50 updates/s"
    assert first_limit([row("hub", 100, 50, p99_ms=250.0)], open_files=65536).startswith("p99 250.0 ms at 50")
    assert first_limit([row("hub", 100, 50, opens=90)], open_files=65536) == "10 sockets not opened at 50 updates/s"
    assert first_limit([row("hub", 10_000, 50, opens=9000)], open_files=8192) == "open files (8192) at 10000 sockets"
    assert first_limit([row("hub", 100, 50, deliveries_per_s=1)], open_files=65536).startswith("delivered 1/s")
    assert first_limit([row("hub", 100, 50, late_opens=7)], open_files=65536) == (
        "7 sockets still opening in the measured window at 50 updates/s"
    )


def test_the_summary_compares_the_hub_with_the_bare_server_at_the_largest_count():
    rows = [
        row("hub", 50, 50),
        row("ceiling", 50, 50),
        row("hub", 100, 50),
        row("hub", 100, 100, p99_ms=200.0),
        row("ceiling", 100, 50),
        row("ceiling", 100, 100),
    ]
    summary = sockets_summary(rows, limits={}, counts=(50, 100))
    assert summary["sockets_top"] == 100
    # hub: 100 sockets at 50/s = 100 deliveries/s; bare: at 100/s = 200/s.
    assert summary["edge_10k_vs_bare"] == 0.5
    assert summary["edge_rss_per_socket_kib"] == 40.0
    assert summary["edge_bare_rss_per_socket_kib"] == 16.0
    assert summary["edge_rss_vs_bare"] == 2.5
    assert summary["edge_cpu_vs_bare"] == 2.0
    assert summary["edge_accepted_per_s_10k"] == 900
    assert [p["sockets"] for p in summary["sockets_curve"]] == [50, 100]


def test_a_count_the_hub_never_served_within_the_bound_scores_zero_not_a_missing_figure():
    rows = [row("hub", 100, 50, p99_ms=500.0), row("ceiling", 100, 50)]
    summary = sockets_summary(rows, limits={}, counts=(100,))
    assert summary["edge_10k_vs_bare"] == 0.0
    assert summary["sockets_curve"][0]["hub"]["p99_ms"] == 500.0


def test_a_count_whose_sockets_did_not_all_open_reports_no_memory_or_cost_per_socket():
    rows = [
        row("hub", 100, 50, opens=2, deliveries_per_s=1, rss_per_socket_streaming_kib=3.0, accepted_per_s=1),
        row("ceiling", 100, 50),
    ]
    summary = sockets_summary(rows, limits={}, counts=(100,))
    hub = summary["sockets_curve"][0]["hub"]
    assert hub["opened"] == 2
    assert hub["rss_per_socket_streaming_kib"] is None
    assert hub["cpu_s_per_1000"] is None
    assert summary["edge_rss_vs_bare"] is None
    assert summary["edge_cpu_vs_bare"] is None
    assert summary["edge_accepted_per_s_10k"] is None
    assert summary["edge_10k_vs_bare"] == 0.0
    table = "\n".join(markdown_lines(summary))
    assert "| 100 | 2, 100 | 0 |" in table
    assert "—, —" in table


def test_a_storm_row_gives_the_accept_rate_and_the_paced_climb_gives_the_rest():
    """From the paced count on, the storm (every socket at once) is a row apart: its accept rate
    and how many opened are reported, even when not all opened, and it never counts as the best
    row; the climb's rows, sockets arriving paced, give deliveries, cost and memory."""
    rows = [
        row("hub", 100, 25, storm=True, opens=60, deliveries_per_s=1, accepted_per_s=450, arrival_per_s=0),
        row("hub", 100, 25, accepted_per_s=40, arrival_per_s=40),
        row("hub", 100, 50, p99_ms=300.0, accepted_per_s=40, arrival_per_s=40),
        row("ceiling", 100, 25, storm=True, accepted_per_s=1800, arrival_per_s=0),
        row("ceiling", 100, 25, accepted_per_s=40, arrival_per_s=40),
        row("ceiling", 100, 50, accepted_per_s=40, arrival_per_s=40),
    ]
    summary = sockets_summary(rows, limits={}, counts=(100,))
    hub = summary["sockets_curve"][0]["hub"]
    assert summary["edge_accepted_per_s_10k"] == 450
    assert summary["edge_opened_at_once_10k"] == 60
    assert hub["opened"] == 100, "the climb's sockets all opened"
    assert hub["arrival_per_s"] == 40
    # hub: 100 sockets at 25/s = 50 deliveries/s; bare at 50/s = 100/s.
    assert summary["edge_10k_vs_bare"] == 0.5
    table = "\n".join(markdown_lines(summary))
    assert "hub 40 a second, bare server 40" in table
    assert "hub 60, bare 100" in table


def test_a_climb_s_sockets_arrive_no_faster_than_the_server_opened_them_in_its_storm():
    """A climb whose sockets arrive faster than the server accepts them measures its handshakes
    again, not its streaming: the climb arrives at 0.8 of the storm's accept rate when that is
    below the ceiling."""
    assert climb_arrival({"accepted_per_s": 179}, ARRIVAL_PER_S) == 143
    assert climb_arrival({"accepted_per_s": 1095}, ARRIVAL_PER_S) == ARRIVAL_PER_S
    assert climb_arrival({"accepted_per_s": None}, ARRIVAL_PER_S) == ARRIVAL_PER_S, "no rate measured: the ceiling"
    assert climb_arrival({"accepted_per_s": 1}, ARRIVAL_PER_S) == 1


def test_a_paced_count_starts_its_climb_below_the_other_counts_first_rate():
    assert paced_rates(RATES) == (10, *RATES)
    assert paced_rates((5, 10)) == (5, 10), "a climb already starting lower is left as it is"


def test_cpu_per_delivery_is_compared_at_the_highest_rate_both_servers_streamed():
    """A cost per delivery falls as the rate rises; the hub's row at 10/s against the bare
    server's at 25/s would count the rate, not the server."""
    rows = [
        row("hub", 100, 10, p99_ms=198.0, server_cpu_s_per_1000=0.13),
        row("ceiling", 100, 10, server_cpu_s_per_1000=0.10),
        row("ceiling", 100, 25, server_cpu_s_per_1000=0.06),
        row("ceiling", 100, 50, p99_ms=1500.0, server_cpu_s_per_1000=0.05),
        row("hub", 100, 10, storm=True, server_cpu_s_per_1000=0.5),
    ]
    summary = sockets_summary(rows, limits={}, counts=(100,))
    assert summary["edge_cpu_rate"] == 10
    assert summary["edge_cpu_vs_bare"] == 1.3
    assert summary["edge_10k_vs_bare"] == 0.0, "the hub served no rate within the bound"


def test_no_rate_both_servers_streamed_gives_no_cost_ratio():
    rows = [row("hub", 100, 10, opens=90), row("ceiling", 100, 10)]
    summary = sockets_summary(rows, limits={}, counts=(100,))
    assert summary["edge_cpu_vs_bare"] is None
    assert summary["edge_cpu_rate"] is None


def test_the_run_of_median_p99_stands_for_a_repeated_rate_with_every_run_s_p99():
    runs = [row("hub", 10_000, 25, p99_ms=p99) for p99 in (461.0, 41.0, 44.0)]
    chosen = median_row(runs)
    assert chosen["p99_ms"] == 44.0
    assert chosen["repeat_p99_ms"] == [461.0, 41.0, 44.0]
    assert median_row(runs[:1]) is runs[0], "a rate run once is its own row"


def test_a_paced_count_runs_each_rate_of_its_climb_three_times_and_one_slow_window_does_not_decide_it(
    monkeypatch: pytest.MonkeyPatch,
):
    # The hub's second window at 25 updates/s is slow once; the bare server's are all quick.
    slow = {("hub", 10_000, 25): iter((41.0, 461.0, 44.0))}
    calls: list[tuple[str, int, int]] = []

    def run(args: Any) -> dict[str, Any]:
        calls.append((args.edge, args.clients, args.rate))
        p99 = next(slow.get((args.edge, args.clients, args.rate), iter(())), 30.0 if args.rate < 50 else 300.0)
        return {**row(args.edge, args.clients, args.rate, p99_ms=p99), "arrival_per_s": args.arrival_per_s}

    @contextlib.contextmanager
    def namespace() -> Iterator[str]:
        yield "test"

    monkeypatch.setattr(sockets, "run", run)
    monkeypatch.setattr(sockets, "namespace", namespace)
    result = bench_sockets(counts=(100, 10_000), rates=(25, 50), duration=1, warmup=1)
    # Not paced: each rate once. Paced: the storm once, then each rate three times until one misses.
    assert calls.count(("hub", 100, 25)) == 1
    assert calls.count(("hub", 10_000, 10)) == 1 + 3
    assert calls.count(("hub", 10_000, 25)) == 3
    assert calls.count(("hub", 10_000, 50)) == 3
    assert result["edge_10k_vs_bare"] == 1.0
    top = next(r for r in result["sockets_rows"] if r["edge"] == "hub" and r["clients"] == 10_000 and r["rate"] == 25)
    assert top["p99_ms"] == 44.0
    assert top["repeat_p99_ms"] == [41.0, 461.0, 44.0]
    assert any("hub 10,000 at 25/s 41, 461, 44" in line for line in markdown_lines(result))
