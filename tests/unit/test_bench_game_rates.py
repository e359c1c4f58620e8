"""The game stage's answers are set against the reducers' updates taken the same way: records over
the busy time of the batches that started once every record was produced."""

from __future__ import annotations

from bench.game import Taken, game_ratio
from bench.reducers import Batch, busy_rate

PRODUCED_AT = 100.0
# One run's rates: the reducers', the game's (busy and wall clock), its bare and its least query's.
RATES = {
    "reducer_microbatch_updates_per_s": 200_000,
    "game_answers_busy_per_s": 64_000,
    "game_answers_per_s": 40_000,
    "game_ceiling_answers_per_s": 120_000,
    "game_least_answers_per_s": 90_000,
}


def test_only_the_batches_that_started_after_the_production_count():
    batches = [
        Batch(rows=50_000, ms=2_000, started=99.0),  # ran while the producer still produced
        Batch(rows=120_000, ms=1_500, started=101.0),
        Batch(rows=30_000, ms=500, started=102.6),
    ]
    assert busy_rate(batches, since=PRODUCED_AT) == 75_000  # 150,000 rows in 2 s


def test_batches_without_rows_and_idle_time_between_batches_do_not_count():
    batches = [
        Batch(rows=100_000, ms=1_000, started=101.0),
        Batch(rows=0, ms=400, started=102.0),
        Batch(rows=100_000, ms=1_000, started=110.0),  # 7.6 s idle before it
    ]
    assert busy_rate(batches, since=PRODUCED_AT) == 100_000


def test_when_no_batch_started_after_the_production_every_batch_with_rows_counts():
    batches = [Batch(rows=40_000, ms=1_000, started=98.0), Batch(rows=0, ms=300, started=99.5)]
    assert busy_rate(batches, since=PRODUCED_AT) == 40_000


def test_no_busy_time_is_no_rate():
    assert busy_rate([], since=PRODUCED_AT) is None


def test_taken_gives_the_busy_rate_of_its_batches():
    taken = Taken(seconds=4.0, batches=[Batch(20_000, 900, 99.0), Batch(180_000, 2_000, 100.5)])
    assert taken.busy_rate(since=PRODUCED_AT) == 90_000


def test_the_target_ratio_takes_the_busy_rate_and_the_wall_clock_ratio_is_kept_beside_it():
    results = dict(RATES)
    game_ratio(results)
    assert results["game_answers_vs_reducers"] == 0.32
    assert results["game_answers_wall_vs_reducers"] == 0.2


def test_without_the_reducers_stage_there_is_no_ratio():
    results = {"game_answers_busy_per_s": 64_000, "game_answers_per_s": 40_000}
    game_ratio(results)
    assert results["game_answers_vs_reducers"] is None
    assert results["game_answers_wall_vs_reducers"] is None


def test_the_bare_and_the_least_query_are_set_against_the_reducers_beside_the_game():
    results = dict(RATES)
    game_ratio(results)
    assert results["game_ceiling_vs_reducers"] == 0.6
    assert results["game_least_vs_reducers"] == 0.45
