import pytest

from reducers.windows import advance_watermark, parse_duration_ms, window_start


def test_event_falls_in_the_window_of_its_event_time():
    assert window_start(125_000, size_ms=60_000) == 120_000
    assert window_start(120_000, size_ms=60_000) == 120_000


def test_records_behind_the_watermark_are_late_and_do_not_move_it_back():
    late, watermark = advance_watermark(watermark=100_000, event_times=[130_000, 90_000, 99_999], delay_ms=30_000)
    assert late == 2
    assert watermark == 100_000
    late, watermark = advance_watermark(watermark=watermark, event_times=[200_000], delay_ms=30_000)
    assert (late, watermark) == (0, 170_000)


def test_out_of_order_within_the_delay_is_not_late():
    _, watermark = advance_watermark(watermark=0, event_times=[100_000], delay_ms=30_000)
    late, _ = advance_watermark(watermark=watermark, event_times=[75_000], delay_ms=30_000)
    assert late == 0


@pytest.mark.parametrize(("text", "ms"), [("30 seconds", 30_000), ("1 minute", 60_000), ("2 hours", 7_200_000)])
def test_durations_parse(text, ms):
    assert parse_duration_ms(text) == ms


def test_a_bad_duration_is_named():
    with pytest.raises(ValueError, match="not a duration"):
        parse_duration_ms("soon")
