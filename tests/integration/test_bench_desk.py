"""The desk stage at test size (``bench.desk.QUICK``): a reducers process and a web server of
its own carry bets from the bets topic to a trader's socket. No speed assertion (that is
`make bench` and docs/performance.md): only that the stage measured what it promises, through
the product's own path, with nothing lost."""

from __future__ import annotations

from typing import Any

import pytest

from bench.desk import DRAIN_S, QUICK, bench_desk, desk_ratio

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600), pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def result(kafka_topics, django_db_blocker) -> dict[str, Any]:
    with django_db_blocker.unblock():
        return bench_desk(quick=True)


def test_every_bet_reached_the_traders_socket_once(result):
    rate, duration, _ = QUICK
    assert result["desk_bets"] == int(rate * duration)
    assert result["desk_ticker_frames"] == result["desk_bets"], "each bet's ticker frame exactly once"
    assert 0 < result["desk_counted"] < result["desk_bets"], "the warm-up's bets are not counted"
    # The rounds of bets before the measured run (until the ticker keeps up) are timed, bounded.
    assert 0 <= result["desk_warmup_s"] <= 30 + 1 + DRAIN_S


def test_the_ticker_and_the_books_are_timed_to_the_socket(result):
    assert 0 < result["ticker_p50_ms"] <= result["ticker_p99_ms"]
    assert 0 < result["liability_p50_ms"] <= result["liability_p99_ms"]
    assert result["liability_p50_ms"] >= result["ticker_p50_ms"], "the books frame follows the bets of its batch"


def test_the_ratio_to_the_end_to_end_p99_is_taken_when_both_ran(result):
    figures = {**result, "e2e_microbatch_p99_ms": 100}
    desk_ratio(figures)
    assert figures["ticker_p99_vs_e2e"] == round(result["ticker_p99_ms"] / 100, 2)
    alone = dict(result)
    desk_ratio(alone)
    assert alone["liability_p99_vs_e2e"] is None
