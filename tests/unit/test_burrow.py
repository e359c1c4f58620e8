"""Burrow-style lag evaluation over a sliding window of offset samples."""

from __future__ import annotations

from reducers.burrow import OffsetSample, Status, evaluate, group_status, lag_seconds, window, worst


def s(ts: int, committed: int, log_end: int, reported: int | None = None) -> OffsetSample:
    return OffsetSample(
        ts_ms=ts, committed=committed, log_end=log_end, reported_ms=ts if reported is None else reported
    )


def test_no_samples_is_an_error():
    result = evaluate([], now_ms=1000)
    assert result.status is Status.ERR
    assert "no samples" in result.reason


def test_nothing_committed_is_an_error():
    result = evaluate([s(0, -1, 10), s(1000, -1, 12)], now_ms=1000)
    assert result.status is Status.ERR
    assert result.lag == 12


def test_unknown_log_end_is_ok():
    assert evaluate([s(0, 5, -1)], now_ms=0).status is Status.OK


def test_no_lag_now_is_ok():
    result = evaluate([s(0, 5, 90), s(1000, 100, 100)], now_ms=1000)
    assert (result.status, result.reason, result.lag) == (Status.OK, "caught up", 0)


def test_lag_zero_anywhere_in_the_window_is_ok():
    samples = [s(0, 10, 10), s(1000, 10, 15), s(2000, 10, 20)]
    result = evaluate(samples, now_ms=2000)
    assert result.status is Status.OK
    assert "within the window" in result.reason


def test_offsets_going_back_is_an_error():
    samples = [s(0, 50, 60), s(1000, 40, 70), s(2000, 45, 80)]
    result = evaluate(samples, now_ms=2000)
    assert result.status is Status.ERR
    assert "from 50 to 40" in result.reason


def test_silent_consumer_longer_than_its_reports_span_is_stopped():
    samples = [s(0, 10, 20, reported=0), s(2000, 10, 30, reported=0), s(4000, 10, 40, reported=0)]
    result = evaluate(samples, now_ms=4000)
    assert result.status is Status.STOP
    assert "no report for 4.0 s" in result.reason


def test_stopped_rule_compares_silence_with_the_span_of_reports():
    # Reports every second until t=4 s; at t=5 s one second of silence is shorter than 4 s of span.
    samples = [s(t, 10, 20 + t // 100, reported=t) for t in (0, 1000, 2000, 3000, 4000)]
    assert evaluate(samples, now_ms=5000).status is not Status.STOP
    assert evaluate(samples, now_ms=9000).status is Status.STOP


def test_reporting_consumer_with_a_frozen_offset_is_stalled():
    samples = [s(0, 10, 20), s(1000, 10, 20), s(2000, 10, 25)]
    result = evaluate(samples, now_ms=2000)
    assert result.status is Status.STALL
    assert "stuck at 10" in result.reason


def test_advancing_consumer_whose_lag_never_shrinks_warns():
    samples = [s(0, 10, 20), s(1000, 20, 35), s(2000, 30, 50)]
    result = evaluate(samples, now_ms=2000)
    assert result.status is Status.WARN
    assert "grew from 10 to 20" in result.reason


def test_advancing_consumer_with_steady_lag_warns():
    samples = [s(0, 10, 20), s(1000, 20, 30), s(2000, 30, 40)]
    assert evaluate(samples, now_ms=2000).status is Status.WARN


def test_lag_that_shrinks_at_some_step_is_ok():
    samples = [s(0, 10, 50), s(1000, 40, 60), s(2000, 60, 70)]
    result = evaluate(samples, now_ms=2000)
    assert result.status is Status.OK
    assert "shrinking" in result.reason


def test_single_lagging_sample_shows_no_trend_yet():
    result = evaluate([s(0, 10, 20)], now_ms=0)
    assert result.status is Status.OK
    assert result.lag == 10


def test_consumer_that_never_reported_is_stopped():
    samples = [OffsetSample(0, 10, 20, None), OffsetSample(1000, 10, 30, None)]
    assert evaluate(samples, now_ms=1000).status is Status.STOP


def test_samples_are_evaluated_in_time_order_whatever_order_they_come_in():
    samples = [s(2000, 30, 50), s(0, 10, 20), s(1000, 20, 35)]
    assert evaluate(samples, now_ms=2000).status is Status.WARN


def test_window_keeps_the_newest_samples_oldest_first():
    samples = [s(t, 0, 0) for t in (3, 1, 4, 2, 5)]
    assert [x.ts_ms for x in window(samples, size=3)] == [3, 4, 5]
    assert window(samples, size=0) == []


def test_worst_and_group_status():
    assert worst([]) is Status.OK
    assert worst([Status.OK, Status.WARN, Status.STALL]) is Status.STALL
    assert group_status([Status.OK, Status.WARN]) is Status.WARN
    assert group_status([Status.OK, Status.STOP]) is Status.ERR
    assert group_status([Status.OK]) is Status.OK


def test_lag_seconds_is_zero_when_caught_up():
    assert lag_seconds([s(0, 5, 10), s(1000, 10, 10)], now_ms=5000) == 0.0


def test_lag_seconds_is_the_age_of_the_log_end_the_consumer_reached():
    samples = [s(0, 0, 10), s(1000, 10, 20), s(2000, 12, 30)]
    # the consumer (at 12) has passed the log end of t=0 (10) but not of t=1 s (20)
    assert lag_seconds(samples, now_ms=2000) == 2.0


def test_lag_seconds_is_at_least_the_window_when_nothing_was_reached():
    samples = [s(1000, 0, 10), s(2000, 0, 20)]
    assert lag_seconds(samples, now_ms=3000) == 2.0
    assert lag_seconds([], now_ms=3000) == 0.0
