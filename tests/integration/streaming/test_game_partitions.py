"""The game's bucket labels are spread by Spark itself as ``spark.hashing`` computes: a shuffle on
the labels (as the game query's ``groupBy("bucket")`` makes) puts as many buckets in each partition
of its state."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F

from spark.hashing import hash_int
from spark.jobs.game import BucketLayout, bucket_labels

pytestmark = pytest.mark.integration


def test_spark_hashes_ints_as_spark_hashing_does(spark):
    rows = spark.range(-1000, 20_000).select(
        F.col("id").cast("int").alias("i"), F.hash(F.col("id").cast("int")).alias("h")
    )

    differing = [(row.i, row.h) for row in rows.collect() if hash_int(row.i) != row.h]

    assert differing == []


@pytest.mark.parametrize(("buckets", "partitions"), [(64, 4), (64, 3), (16, 4)])
def test_a_shuffle_on_the_labels_puts_as_many_buckets_in_each_partition(spark, buckets, partitions):
    def held(labels: list[int]) -> list[int]:
        frame = spark.createDataFrame([(label,) for label in labels], "bucket int").repartition(partitions, "bucket")
        counts = {row.p: row["count"] for row in frame.groupBy(F.spark_partition_id().alias("p")).count().collect()}
        return [counts.get(p, 0) for p in range(partitions)]

    balanced = held(bucket_labels(BucketLayout(buckets, partitions)))
    as_before = held(bucket_labels(BucketLayout(buckets)))

    assert sum(balanced) == buckets
    assert max(balanced) - min(balanced) <= 1, balanced
    assert max(as_before) - min(as_before) > 1, f"labelled 0 to {buckets - 1}, Spark spread them {as_before}"
