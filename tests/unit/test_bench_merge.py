"""A run of some stages merged into the last (``bench.run --merge``): each stage keeps its figures,
its date and its seconds, and each run's speed probes stay with that run, so docs/performance.md
never shows one run's machine speed for another run's figures."""

from __future__ import annotations

from bench.report import cpu_probe_line
from bench.run import merged

FULL = {
    "date": "2026-12-01T10:00:00+00:00",
    "stages": ["bets", "game", "reducers"],
    "stage_dates": dict.fromkeys(["bets", "game", "reducers"], "2026-12-01T10:00:00+00:00"),
    "stage_seconds": {"bets": 100.0, "game": 300.0, "reducers_microbatch": 600.0},
    "cpu_probe_ms": {"start": 70.0, "bets": 72.0, "game": 75.0},
    "bet_rate": 900,
    "game_settle_p99_ms": 1900,
}
GAME = {
    "date": "2026-12-02T10:00:00+00:00",
    "stages": ["game"],
    "stage_dates": {"game": "2026-12-02T10:00:00+00:00"},
    "stage_seconds": {"game": 280.0},
    "cpu_probe_ms": {"start": 55.0, "game": 58.0},
    "game_settle_p99_ms": 1400,
}


def test_the_stages_run_replace_theirs_and_the_others_keep_their_figures_dates_and_seconds():
    out = merged(FULL, GAME)
    assert (out["game_settle_p99_ms"], out["bet_rate"]) == (1400, 900)
    assert out["stages"] == ["bets", "game", "reducers"]
    assert out["stage_dates"] == {
        "bets": FULL["date"],
        "game": GAME["date"],
        "reducers": FULL["date"],
    }
    assert out["stage_seconds"] == {"bets": 100.0, "game": 280.0, "reducers_microbatch": 600.0}


def test_each_runs_speed_probes_stay_with_it():
    out = merged(FULL, GAME)
    assert out["cpu_probe_ms"] == GAME["cpu_probe_ms"]
    assert out["cpu_probe_ms_by_run"] == {FULL["date"]: FULL["cpu_probe_ms"]}
    line = cpu_probe_line(out)[0]
    assert f"this run ({GAME['date']}) start 55.0, game 58.0" in line
    assert line.endswith(f"; the run of {FULL['date']} start 70.0, bets 72.0, game 75.0")


def test_a_run_whose_figures_were_all_measured_again_drops_its_probes():
    once = merged(FULL, GAME)
    again = {
        **GAME,
        "date": "2026-12-03T10:00:00+00:00",
        "stages": ["bets", "reducers"],
        "stage_dates": dict.fromkeys(["bets", "reducers"], "2026-12-03T10:00:00+00:00"),
    }
    out = merged(once, again)
    assert out["cpu_probe_ms_by_run"] == {GAME["date"]: GAME["cpu_probe_ms"]}


def test_a_run_not_merged_lists_its_probes_alone():
    line = cpu_probe_line(FULL)[0]
    assert line.endswith("when it ended): start 70.0, bets 72.0, game 75.0")
