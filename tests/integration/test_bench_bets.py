"""The bets benchmark, small: bets are placed through the real server while a small stream runs,
the result names every figure, and the run leaves no rows behind. No speed assertion."""

from __future__ import annotations

from typing import Any

import pytest

from bench.bets import COMPETITION, PUNTER_PREFIX, bench_bets, server_faults

# Every test may use the database: pytest-django runs the tests that do apart from the others,
# and a module split in two would run its benchmark twice.
pytestmark = [pytest.mark.integration, pytest.mark.timeout(240), pytest.mark.django_db]

FIGURES = {
    "bet_p50_ms",
    "bet_p99_ms",
    "bet_max_ms",
    "bet_rate_offered",
    "bet_rate_accepted_per_s",
    "bet_errors",
    "bet_client_cpu_s",
    "bet_rejections",
    "bet_error_codes",
    "stream",
    "bets_db_ceiling_per_s",
    "bets_db_minimal_per_s",
    "bets_per_s",
    "bets_ratio",
    "bets_search",
    "bet_web_cpu_ms",
    "bet_bare_web_cpu_ms",
    "bet_web_cpu_vs_bare",
    "bet_db_cpu_ms",
    "bet_bare_db_cpu_ms",
    "bet_pgbench_cpu_ms",
    "bet_db_cpu_vs_pgbench",
    "bet_cost_runs",
}


@pytest.fixture(scope="module")
def result(services, django_db_setup, django_db_blocker) -> dict[str, Any]:
    """One small run on the test session's database (the server is pointed at it too)."""
    with django_db_blocker.unblock():
        return bench_bets(
            rate=20,
            duration=3,
            warmup=1,
            punters=20,
            stream_rate=100,
            stream_clients=10,
            ceiling_s=1,
            search=(10,),
            search_duration=2,
            search_warmup=1,
            cost_rate=40,
            cost_duration=3,
        )


def test_result_names_every_figure(result):
    assert result.keys() >= FIGURES
    assert result["stream"].keys() >= {"clients", "rate", "published", "deliveries_per_s"}


def test_bets_are_accepted_without_server_errors(result):
    assert result["bet_rate_accepted_per_s"] > 0
    faults = server_faults(result)
    assert not faults, f"faults {faults}; send lag p99 {result['bet_send_lag_p99_ms']} ms"
    assert result["bet_p50_ms"] <= result["bet_p99_ms"] <= result["bet_max_ms"]


def test_the_ceiling_and_the_search_were_measured(result):
    assert result["bets_db_ceiling_per_s"] > 0
    assert result["bets_db_minimal_per_s"] > 0
    assert [step["rate"] for step in result["bets_search"]] == [10]
    assert result["bets_per_s"] in (0, 10)
    assert result["bets_ratio"] == round(result["bets_per_s"] / result["bets_db_ceiling_per_s"], 3)


def test_a_bets_cost_was_measured_against_its_bare_twin_and_the_databases(result):
    runs = result["bet_cost_runs"]
    for name in ("app", "bare"):
        assert runs[name]["answered_per_s"] > 0, f"the {name} run answered nothing"
        assert runs[name]["errors"] == {}, f"the {name} run: {runs[name]['errors']}"
    assert result["bet_web_cpu_ms"] > 0
    assert result["bet_bare_web_cpu_ms"] > 0
    assert result["bet_web_cpu_vs_bare"] == round(result["bet_web_cpu_ms"] / result["bet_bare_web_cpu_ms"], 2)
    assert result["bet_pgbench_cpu_ms"] > 0
    assert result["bet_db_cpu_ms"] > 0


def test_stream_ran_beside_the_bets(result):
    assert result["stream"]["published"] > 0
    assert result["stream"]["client_errors"] == 0


def test_run_leaves_no_punters_or_events_behind(result):
    from django.contrib.auth.models import User

    from odds.catalogue.models import Event

    assert not User.objects.filter(username__startswith=PUNTER_PREFIX).exists()
    assert not Event.objects.filter(competition__name=COMPETITION).exists()
