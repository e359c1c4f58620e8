"""The game stage at test size (``bench.game.QUICK``): a reducers process of its own takes every
answer into the game query's state and a goal settles every punter. No speed assertion (that is
`make bench` and docs/performance.md): only that the stage measured what it promises, through the
product's own path, with nothing lost."""

from __future__ import annotations

from typing import Any

import pytest

from bench.game import QUICK, bench_game

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]


@pytest.fixture(scope="module")
def result(kafka_topics) -> dict[str, Any]:
    return bench_game(quick=True)


def test_every_answer_reached_the_game_and_every_punter_was_settled(result):
    punters, matches = QUICK
    assert (result["game_punters"], result["game_matches"], result["game_answers"]) == (punters, matches, 2 * punters)
    assert result["game_answers_per_s"] > 0
    assert result["game_answers_busy_per_s"] > 0
    assert sum(batch["rows"] for batch in result["game_answers_batches"]) >= result["game_answers"]


def test_the_games_bare_query_took_the_same_answers_and_is_set_beside_the_game(result):
    assert result["game_ceiling_answers_per_s"] > 0
    assert len(result["game_ceiling_rounds_per_s"]) == 1, "quick: one round, no warm-up"
    ratio = result["game_answers_busy_per_s"] / result["game_ceiling_answers_per_s"]
    assert result["game_answers_vs_ceiling"] == round(ratio, 2)


def test_the_least_game_took_and_decoded_every_answer_and_is_set_beside_the_game(result):
    assert result["game_least_answers_per_s"] > 0
    assert len(result["game_least_rounds_per_s"]) == 1, "quick: one round, no warm-up"
    ratio = result["game_answers_busy_per_s"] / result["game_least_answers_per_s"]
    assert result["game_answers_vs_least"] == round(ratio, 2)


def test_the_settlement_and_the_memory_are_measured(result):
    assert 0 < result["game_settle_p50_ms"] <= result["game_settle_p99_ms"] <= result["game_settle_max_ms"]
    assert result["game_state_rss_mib"] > 100, "the reducers process: a JVM and its Python workers"


def test_the_settling_batch_is_reported_with_sparks_time_by_step(result):
    batches = result["game_settle_batches"]
    assert batches, "the batch that took the goals"
    assert all(b["rows"] > 0 and b["triggerExecution"] >= b["addBatch"] > 0 for b in batches)


def test_the_game_is_measured_after_a_warm_up_round(result):
    assert result["game_warmup_rounds"] == 1, "quick: one small round of warm-up matches"
    assert result["game_warmup_compiler_cores"] == [], "quick: the compilers are not read"
    assert result["game_compiler_cores"] == {}, "quick: the compilers are not read"
