"""The Spark session's JVM starts with the settings ``spark.session.build_session`` gives it."""

from __future__ import annotations

import pytest

from spark.config import GC_OPTIONS, config
from spark.sources import one_task_per_slot

pytestmark = pytest.mark.integration

# The names the JVM gives each collector's beans.
COLLECTOR_BEANS = {"parallel": {"PS Scavenge", "PS MarkSweep"}, "g1": {"G1 Young Generation", "G1 Old Generation"}}


def test_the_jvm_collects_garbage_with_the_configured_collector(spark):
    jvm = spark.sparkContext._jvm
    beans = {bean.getName() for bean in jvm.java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()}
    arguments = list(jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments())
    assert config().gc == "parallel"
    assert GC_OPTIONS["parallel"] in arguments
    assert COLLECTOR_BEANS["parallel"] <= beans
    assert not COLLECTOR_BEANS["g1"] & beans


def test_a_frame_is_read_by_no_more_tasks_than_the_session_has_slots(spark):
    slots = spark.sparkContext.defaultParallelism
    wide = spark.range(0, 1200, numPartitions=3 * slots)
    narrow = spark.range(0, 10, numPartitions=1)
    assert one_task_per_slot(wide).rdd.getNumPartitions() == slots
    assert sorted(row.id for row in one_task_per_slot(wide).collect()) == list(range(1200))
    assert one_task_per_slot(narrow).rdd.getNumPartitions() == 1
