"""The game's bucket count is kept in its checkpoint: a punter's state lives in the bucket a hash
of their id picks among that many, so a query resumed with another count is refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reducers.config import ConfigError
from reducers.queries import GAME
from spark.jobs.game import BUCKETS_FILE, pin_buckets
from spark.jobs.reducers import query_checkpoint
from tests.reducers_process import run_reducers


def test_a_new_checkpoint_keeps_the_count_it_starts_with(tmp_path):
    checkpoint = tmp_path / "game"

    assert pin_buckets(checkpoint, 64) == 64

    assert (checkpoint / BUCKETS_FILE).read_text() == "64\n"
    assert pin_buckets(checkpoint, 64) == 64  # started again with the same count


def test_another_count_is_refused_naming_both_and_the_way_out(tmp_path):
    pin_buckets(tmp_path, 64)

    with pytest.raises(ConfigError) as refused:
        pin_buckets(tmp_path, 16)

    text = str(refused.value)
    assert "SPARK_GAME_BUCKETS is 16" in text
    assert "keeps its punters in 64 buckets" in text
    assert "SPARK_GAME_BUCKETS=64" in text
    assert (tmp_path / BUCKETS_FILE).read_text() == "64\n"  # what was kept stays


@pytest.mark.parametrize("held", ["", "many", "0", "-4"])
def test_a_kept_count_that_is_not_one_is_named(tmp_path, held):
    (tmp_path / BUCKETS_FILE).write_text(held)

    with pytest.raises(ConfigError, match="must hold the game's bucket count"):
        pin_buckets(tmp_path, 64)


def test_a_checkpoint_made_before_the_count_was_kept_takes_the_count_it_starts_with(tmp_path, caplog):
    (tmp_path / "metadata").write_text('{"id":"q"}')

    assert pin_buckets(tmp_path, 64) == 64

    assert (tmp_path / BUCKETS_FILE).read_text() == "64\n"
    assert "keeps no bucket count" in caplog.text


def test_the_reducers_refuse_to_start_on_a_checkpoint_of_another_count(tmp_path, monkeypatch):
    monkeypatch.setenv("SPORTSBOOK_NAMESPACE", f"buckets{os.getpid()}")
    checkpoint = Path(query_checkpoint(tmp_path, GAME, mode="microbatch"))
    pin_buckets(checkpoint, 64)
    environ = {**os.environ, "SPARK_CHECKPOINT_DIR": str(tmp_path), "SPARK_GAME_BUCKETS": "16"}

    result = run_reducers(environ)

    assert result.returncode == 2
    assert "SPARK_GAME_BUCKETS is 16" in result.stderr
    assert str(checkpoint) in result.stderr
