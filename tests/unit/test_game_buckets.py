"""The game's bucket count is kept in its checkpoint: a punter's state lives in the bucket a hash
of their id picks among that many, so a query resumed with another count is refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reducers.config import ConfigError
from reducers.queries import GAME
from spark.hashing import hash_int, int_partition
from spark.jobs.game import BUCKETS_FILE, BucketLayout, bucket_labels, pin_buckets
from spark.jobs.reducers import query_checkpoint
from tests.reducers_process import run_reducers


def test_a_new_checkpoint_keeps_the_count_it_starts_with_and_its_state_s_partitions(tmp_path):
    checkpoint = tmp_path / "game"

    assert pin_buckets(checkpoint, 64, 4) == BucketLayout(64, 4)

    assert (checkpoint / BUCKETS_FILE).read_text() == "64 4\n"
    assert pin_buckets(checkpoint, 64, 4) == BucketLayout(64, 4)  # started again with the same count
    assert pin_buckets(checkpoint, 64, 8) == BucketLayout(64, 4), "Spark keeps the checkpoint's partitions"


def test_a_checkpoint_kept_before_the_labels_were_balanced_keeps_its_labels(tmp_path):
    (tmp_path / BUCKETS_FILE).write_text("64\n")

    layout = pin_buckets(tmp_path, 64, 4)

    assert layout == BucketLayout(64)
    assert bucket_labels(layout) == list(range(64))
    assert (tmp_path / BUCKETS_FILE).read_text() == "64\n"


def test_spark_s_hash_of_an_int_is_computed_as_spark_computes_it():
    # Spark 4's ``hash(cast(id as int))`` for ids 0 to 7 (its shuffle's partitioning hash).
    spark = [933211791, -559580957, 1765031574, -1823081949, -397064898, 1023896466, -331964951, 1079293707]

    assert [hash_int(i) for i in range(8)] == spark
    assert [int_partition(i, 4) for i in range(8)] == [h % 4 for h in spark]


@pytest.mark.parametrize(("buckets", "partitions"), [(64, 4), (16, 4), (64, 3), (5, 2), (1, 4), (3, 8)])
def test_balanced_labels_put_as_many_buckets_in_each_partition_and_bucket_0_is_labelled_0(buckets, partitions):
    labels = bucket_labels(BucketLayout(buckets, partitions))

    assert len(set(labels)) == buckets
    assert labels[0] == 0
    held = [sum(1 for label in labels if int_partition(label, partitions) == p) for p in range(partitions)]
    assert max(held) - min(held) <= 1, held
    unbalanced = [sum(1 for label in range(64) if int_partition(label, 4) == p) for p in range(4)]
    assert unbalanced == [11, 21, 16, 16], "labelled 0 to 63, a third of the punters in one partition"


def test_another_count_is_refused_naming_both_and_the_way_out(tmp_path):
    pin_buckets(tmp_path, 64, 4)

    with pytest.raises(ConfigError) as refused:
        pin_buckets(tmp_path, 16, 4)

    text = str(refused.value)
    assert "SPARK_GAME_BUCKETS is 16" in text
    assert "keeps its punters in 64 buckets" in text
    assert "SPARK_GAME_BUCKETS=64" in text
    assert (tmp_path / BUCKETS_FILE).read_text() == "64 4\n"  # what was kept stays


@pytest.mark.parametrize("held", ["", "many", "0", "-4", "64 0", "64 4 2", "64 four"])
def test_a_kept_count_that_is_not_one_is_named(tmp_path, held):
    (tmp_path / BUCKETS_FILE).write_text(held)

    with pytest.raises(ConfigError, match="must hold the game's bucket count"):
        pin_buckets(tmp_path, 64, 4)


def test_a_checkpoint_made_before_the_count_was_kept_takes_the_count_it_starts_with(tmp_path, caplog):
    (tmp_path / "metadata").write_text('{"id":"q"}')

    assert pin_buckets(tmp_path, 64, 4) == BucketLayout(64), "labelled 0 to 63, as it was made"

    assert (tmp_path / BUCKETS_FILE).read_text() == "64\n"
    assert "keeps no bucket count" in caplog.text


def test_the_reducers_refuse_to_start_on_a_checkpoint_of_another_count(tmp_path, monkeypatch):
    monkeypatch.setenv("SPORTSBOOK_NAMESPACE", f"buckets{os.getpid()}")
    checkpoint = Path(query_checkpoint(tmp_path, GAME, mode="microbatch"))
    pin_buckets(checkpoint, 64, 4)
    environ = {**os.environ, "SPARK_CHECKPOINT_DIR": str(tmp_path), "SPARK_GAME_BUCKETS": "16"}

    result = run_reducers(environ)

    assert result.returncode == 2
    assert "SPARK_GAME_BUCKETS is 16" in result.stderr
    assert str(checkpoint) in result.stderr
