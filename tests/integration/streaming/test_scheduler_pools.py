"""A query started through its starter runs its batches, and the jobs its ``foreachBatch``
function submits, in its own fair-scheduler pool."""

from __future__ import annotations

import pytest

from spark.jobs.reducers import POOL_PROPERTY, in_pool
from tests.conftest import wait_for

pytestmark = pytest.mark.integration


def test_a_query_and_its_batch_function_run_in_the_pool_named_for_it(spark):
    seen: list[str | None] = []

    def batch(frame, batch_id: int) -> None:
        seen.append(frame.sparkSession.sparkContext.getLocalProperty(POOL_PROPERTY))
        frame.count()

    def start():
        source = spark.readStream.format("rate").option("rowsPerSecond", 5).load()
        return source.writeStream.queryName("pool-probe").foreachBatch(batch).start()

    query = in_pool(spark, "prices", start)()
    try:
        wait_for(lambda: len(seen) >= 2, timeout=60, what="two batches")
    finally:
        query.stop()
    assert set(seen) == {"prices"}
    # The thread that started it is back in no pool.
    assert spark.sparkContext.getLocalProperty(POOL_PROPERTY) is None
