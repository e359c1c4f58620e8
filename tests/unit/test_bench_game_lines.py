"""The game stage's line under docs/performance.md's table says how warm the game was measured,
and reads a result from before the stage warmed up."""

from __future__ import annotations

from bench.game import markdown_lines

RESULT = {
    "game_punters": 100_000,
    "game_matches": 10,
    "game_answers": 200_000,
    "game_settle_p50_ms": 1043,
    "game_settle_p99_ms": 1992,
    "game_settle_max_ms": 1992,
    "game_state_rss_growth_mib": 175,
}


def test_the_line_names_the_warm_up_and_the_compilers_share_over_the_measured_run():
    line = markdown_lines(
        {
            **RESULT,
            "game_warmup_s": 92,
            "game_warmup_rounds": 23,
            "game_warmup_compiler_cores": [0.5, 0.09],
            "game_compiler_cores": {"answers": 0.09, "settle": 0.071},
        }
    )[1]
    assert "settlement p50 1043 ms" in line
    assert "after 92 s of warm-up (23 rounds)" in line
    assert "0.09 of a core over the answers and 0.07 over the goal" in line


def test_a_quick_result_names_its_warm_up_without_the_compilers():
    line = markdown_lines({**RESULT, "game_warmup_s": 2, "game_warmup_rounds": 1, "game_compiler_cores": {}})[1]
    assert line.endswith("after 2 s of warm-up (1 round).")


def test_a_result_from_before_the_warm_up_reads_without_it():
    line = markdown_lines(RESULT)[1]
    assert line.endswith("grew the reducers process by 175 MiB.")
    assert "warm" not in line
