"""Event-time bookkeeping shared by the reducers: windows, watermark and lateness.

The watermark is the largest event time seen minus the allowed delay; a record whose event
time is below the watermark when it arrives is late. Spark drops such records from its
event-time window aggregation; the price reducer counts them with this same rule, because
Spark's own drop metric undercounts once it pre-aggregates or filters early.
"""

from __future__ import annotations

from collections.abc import Iterable


def window_start(event_ts: int, *, size_ms: int) -> int:
    """Start (epoch ms) of the tumbling window that holds ``event_ts``."""
    return event_ts - event_ts % size_ms


def advance_watermark(*, watermark: int, event_times: Iterable[int], delay_ms: int) -> tuple[int, int]:
    """(records later than the current watermark, the watermark after this batch).

    The watermark only moves forwards, so a late record never pulls it back.
    """
    late = 0
    newest = watermark
    for ts in event_times:
        if ts < watermark:
            late += 1
        newest = max(newest, ts - delay_ms)
    return late, newest


def parse_duration_ms(text: str) -> int:
    """``"30 seconds"``, ``"1 minute"``, ``"2 hours"`` → milliseconds (Spark's interval wording)."""
    amount, _, unit = text.strip().partition(" ")
    units = {"millisecond": 1, "second": 1000, "minute": 60_000, "hour": 3_600_000}
    try:
        return int(amount) * units[unit.rstrip("s")]
    except (ValueError, KeyError) as exc:
        raise ValueError(f"not a duration: {text!r}") from exc
