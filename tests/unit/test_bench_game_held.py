"""The game stage's measure of a bucket with idle punters held (bench/game_held.py): its batches
run through the bucket's own code and do what they say, and its line reads the figures."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from bench import game_held
from reducers.game import PunterTable


def test_a_bucket_with_idle_punters_runs_each_batch_and_stores_every_punter(monkeypatch):
    stored: list[bytes] = []
    real = game_held.PunterTable.encode

    def keep(table: PunterTable, known: Mapping[int, bytes] = MappingProxyType({})) -> bytes:
        blob = real(table, known)
        stored.append(blob)
        return blob

    monkeypatch.setattr(game_held.PunterTable, "encode", keep)
    monkeypatch.setattr(game_held, "ROUNDS", 1)
    costs = game_held.bucket_costs(200)
    assert set(costs) == {"small", "all", "goal", "stored_kib"}
    assert all(costs[k] > 0 for k in ("small", "all", "goal"))
    # the idle punters and the live ones are all in the table the batches start from
    assert len(PunterTable.decode(stored[-1])) == 200 + game_held.LIVE


def test_the_line_gives_each_count_held_and_its_batches():
    results = {
        "game_held_buckets": 64,
        "game_held_live_per_bucket": 1600,
        "game_held_bucket_ms": {
            "0": {"small": 0.27, "all": 8.6, "goal": 7.7, "stored_kib": 200},
            "1000000": {"small": 1.07, "all": 7.6, "goal": 6.7, "stored_kib": 1253},
        },
        "game_held_small_vs_none": 4.0,
    }
    line = game_held.markdown_lines(results)[1]
    assert "one bucket of 64, 1,600 live punters" in line
    assert "1,000,000 held: 1.07 ms small, 7.6 ms all, 6.7 ms goal (1,253 KiB stored)" in line
    assert game_held.markdown_lines({}) == []
