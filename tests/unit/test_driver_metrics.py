"""The reducers' driver's own /metrics (spark/metrics.py): each supervised query's state and
restarts as the supervisor holds them, and the process figures, in a valid exposition."""

from __future__ import annotations

import os

from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from reducers.supervision import RESTARTING, RUNNING, QueryRun
from spark.metrics import driver_registry


def samples(text: bytes) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text.decode())
        for s in family.samples
    }


def test_each_query_is_running_or_not_with_its_restarts():
    runs = {"prices": QueryRun(state=RUNNING, restarts=2), "liability": QueryRun(state=RESTARTING, restarts=5)}
    found = samples(generate_latest(driver_registry(runs=lambda: runs, jvm_pid=None)))
    assert found[("sportsbook_driver_query_running", (("query", "prices"),))] == 1
    assert found[("sportsbook_driver_query_running", (("query", "liability"),))] == 0
    assert found[("sportsbook_driver_query_restarts_total", (("query", "liability"),))] == 5


def test_the_jvm_beside_the_driver_has_its_own_process_figures():
    found = samples(generate_latest(driver_registry(runs=dict, jvm_pid=os.getpid())))
    assert found[("spark_jvm_process_resident_memory_bytes", ())] > 0
    assert found[("process_start_time_seconds", ())] > 0
