"""The bets benchmark's count of its answers: which non-2xx answers are faults of the server."""

from __future__ import annotations

from bench.bets import _bets_summary, server_faults


def _bet(index: int, status: int, code: str = "") -> tuple[int, float, float, int, str]:
    return (index, 1.0, 8.0, status, code)


def test_answers_are_counted_by_status_and_code_within_the_window():
    bets = [
        _bet(0, 503, "overloaded"),  # warm-up: not counted
        _bet(1, 201),
        _bet(2, 503, "overloaded"),
        _bet(3, 409, "price_changed"),
        _bet(4, 503, "database_unavailable"),
        _bet(5, 0, "TimeoutError"),
    ]
    summary = _bets_summary(bets, rate=1, warmup=1, duration=5)
    assert summary["bet_errors"] == {"503": 2, "409": 1, "0": 1}
    assert summary["bet_error_codes"] == {
        "503 overloaded": 1,
        "409 price_changed": 1,
        "503 database_unavailable": 1,
        "0 TimeoutError": 1,
    }


def test_only_shedding_load_is_a_5xx_that_is_not_a_fault():
    summary = {
        "bet_error_codes": {
            "503 overloaded": 4,
            "409 price_changed": 2,
            "503 database_unavailable": 1,
            "500 unreadable": 1,
            "0 ConnectionResetError": 3,
        }
    }
    assert server_faults(summary) == {
        "503 database_unavailable": 1,
        "500 unreadable": 1,
        "0 ConnectionResetError": 3,
    }
    assert server_faults({"bet_error_codes": {"503 overloaded": 6, "429 rate_limited": 1}}) == {}
