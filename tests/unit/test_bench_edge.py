"""The edge benchmark's choice of each path's figure: the highest rate within the p99 bound, and
only from a run that delivered what was offered."""

from __future__ import annotations

from bench.edge import edge_best


def _row(rate: float, delivered: int, offered: int, p99: float, errors: int = 0) -> dict:
    return {
        "edge": "hub",
        "rate": rate,
        "deliveries_per_s": delivered,
        "expected_per_s": offered,
        "p99_ms": p99,
        "client_errors": errors,
    }


def test_the_highest_rate_within_the_p99_bound_is_the_figure():
    rows = [_row(50, 970, 970, 30), _row(250, 4_800, 4_850, 45), _row(500, 9_000, 9_600, 260)]
    best = edge_best(rows, "hub")
    assert (best["rate"], best["within_p99"]) == (250, True)


def test_a_run_whose_clients_lost_their_sockets_or_most_frames_does_not_count():
    rows = [
        _row(50, 970, 970, 30),
        _row(250, 1_050, 4_870, 26, errors=780),  # three in four sockets refused: fast for the rest
        _row(500, 2_700, 9_600, 34),  # a fraction of what was offered
    ]
    assert edge_best(rows, "hub")["rate"] == 50


def test_with_no_run_within_the_bound_the_lowest_rate_is_flagged():
    rows = [_row(50, 960, 960, 263), _row(100, 1_850, 1_920, 307)]
    best = edge_best(rows, "hub")
    assert (best["rate"], best["within_p99"]) == (50, False)
