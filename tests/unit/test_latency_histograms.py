"""Latency histograms: buckets, their cumulative reading, several recorders adding up, and the
exposition of every metric passing Prometheus' own linter."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from odds.core.metrics_prometheus import render
from reducers.latency import (
    BUCKET_FIELDS,
    FIELD_SUM_US,
    LATENCY_BUCKETS_S,
    bucket_of,
    histogram_increments,
    histogram_read,
    state_spans_ms,
)
from store.latency import histogram_key, pipeline_observe
from tests.promtool import promtool_check
from tests.unit.test_metrics_rendering import HISTOGRAMS, SNAPSHOT


def _hash(*recorders: dict[str, int]) -> dict[str, str]:
    """What Redis holds after each recorder's HINCRBYs (as strings, as a hash answers)."""
    total: Counter[str] = Counter()
    for increments in recorders:
        total.update(increments)
    return {field: str(amount) for field, amount in total.items()}


def test_an_observation_on_a_bound_falls_in_that_bucket_and_beyond_the_last_in_inf():
    assert bucket_of(0.005) == "0.005"
    assert bucket_of(0.0051) == "0.01"
    assert bucket_of(0.0) == BUCKET_FIELDS[0]
    assert bucket_of(LATENCY_BUCKETS_S[-1] + 1) == "+Inf"


def test_buckets_are_read_cumulative_ending_with_inf_equal_to_the_count():
    histogram = histogram_read(_hash(histogram_increments([0.0004, 0.003, 0.003, 0.2, 0.9, 120.0])))
    counts = [count for _, count in histogram.buckets]
    assert [le for le, _ in histogram.buckets] == list(BUCKET_FIELDS)
    assert counts == sorted(counts)
    assert dict(histogram.buckets)["0.001"] == 1
    assert dict(histogram.buckets)["0.005"] == 3
    assert dict(histogram.buckets)["0.25"] == 4
    assert dict(histogram.buckets)["1.0"] == 5
    assert dict(histogram.buckets)["60.0"] == 5
    assert histogram.buckets[-1] == ("+Inf", 6)
    assert histogram.count == 6
    assert histogram.sum_s == pytest.approx(121.1064, abs=1e-6)


def test_two_recorders_add_up_in_count_sum_and_every_bucket():
    first, second = [0.002, 0.04, 0.7], [0.04, 3.0]
    both = histogram_read(_hash(histogram_increments(first), histogram_increments(second)))
    alone = histogram_read(_hash(histogram_increments(first))), histogram_read(_hash(histogram_increments(second)))
    assert both.count == alone[0].count + alone[1].count == 5
    assert both.sum_s == pytest.approx(alone[0].sum_s + alone[1].sum_s, abs=1e-6)
    assert both.sum_s == pytest.approx(3.782, abs=1e-6)
    for i, (le, count) in enumerate(both.buckets):
        assert count == alone[0].buckets[i][1] + alone[1].buckets[i][1], le


def test_the_sum_is_kept_in_whole_microseconds_and_a_negative_observation_counts_as_zero():
    increments = histogram_increments([0.0000014, -0.5])
    assert increments[FIELD_SUM_US] == 1
    assert increments[BUCKET_FIELDS[0]] == 2


def test_an_empty_histogram_reads_as_zeros():
    histogram = histogram_read({})
    assert histogram.count == 0
    assert histogram.sum_s == 0.0
    assert all(count == 0 for _, count in histogram.buckets)


def test_every_metric_with_samples_passes_promtool_check_metrics():
    run = {"state": "running", "restarts": 2, "last_error": None, "since": 1}
    snapshot: dict[str, Any] = {**SNAPSHOT, "queries": {"prices": {**SNAPSHOT["queries"]["prices"], "run": run}}}
    checked = promtool_check(render(snapshot=snapshot, histograms=HISTOGRAMS))
    assert (checked.returncode, checked.stdout, checked.stderr) == (0, "", "")


def test_a_states_stamps_give_its_pipeline_stages_clipped_at_zero():
    state = {"ts": {"event": 1_000, "produce": 1_004, "kafka": 1_003, "reducer": 1_050}}
    # source 4, Kafka -1 (clocks apart) → 0, reducer 47, end to end 50
    assert state_spans_ms(state) == (4, 0, 47, 50)


def test_a_state_missing_a_stamp_has_no_stages():
    assert state_spans_ms({"ts": {"event": 1, "produce": 2, "kafka": 3}}) is None
    assert state_spans_ms({"ts": {"event": 1, "produce": 2, "kafka": 3, "reducer": True}}) is None
    assert state_spans_ms({}) is None


def test_observing_applied_states_adds_each_stage_in_seconds():
    class Pipe:
        def __init__(self) -> None:
            self.added: dict[tuple[str, str], int] = {}

        def hincrby(self, key: str, field: str, amount: int) -> None:
            self.added[(key, field)] = self.added.get((key, field), 0) + amount

    pipe = Pipe()
    pipeline_observe(
        pipe,
        [
            {"ts": {"event": 0, "produce": 2, "kafka": 3, "reducer": 20}},
            {"ts": {"event": 0, "produce": 1, "kafka": 1, "reducer": 400}},
            {"ts": {}},
        ],
    )
    end_to_end = histogram_key("end_to_end")
    assert pipe.added[(end_to_end, "0.025")] == 1
    assert pipe.added[(end_to_end, "0.5")] == 1
    assert pipe.added[(end_to_end, "sum_us")] == 420_000
    assert pipe.added[(histogram_key("source"), "sum_us")] == 3_000


def test_a_market_frames_age_is_now_less_its_event_time():
    from reducers.latency import frame_age_s

    assert frame_age_s('{"type":"market","ts":{"event":1000,"reducer":1010}}', now_ms=1250) == 0.25
    assert frame_age_s('{"type":"market","ts":{"event":2000}}', now_ms=1000) == 0
    assert frame_age_s('{"type":"market.status"}', now_ms=1000) is None
    assert frame_age_s("not json", now_ms=1000) is None
