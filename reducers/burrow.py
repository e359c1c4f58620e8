"""Consumer-lag evaluation in the manner of Burrow, as pure functions.

Burrow judges a consumer by a sliding window of samples of one partition rather than by a lag
threshold: a lag of a million records that is shrinking is healthy, a lag of ten that never
moves is not. Each sample holds the committed offset, the log-end offset and the time of the
consumer's latest sign of life (for the reducers: their latest progress report, the moment they
commit). The rules, in the order they are applied:

1. No lag now, or no lag at any sample in the window: **OK** (it caught up within the window).
2. The committed offset went backwards: **ERR** (a rewind; Burrow's REWIND).
3. The consumer has been silent for longer than the window of its reports spans (time since its
   latest report > time between its first and latest report in the window): **STOP**.
4. The consumer reports, but its committed offset has not moved across the window: **STALL**.
5. The committed offset moves, but the lag did not shrink at any step: **WARN** (falling behind).
6. Otherwise **OK** (the lag is shrinking).

A partition whose group never committed is **ERR**; a window with a single sample cannot show a
trend, so a lagging partition is OK until a second sample arrives (Burrow's incomplete window).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from itertools import pairwise


class Status(StrEnum):
    OK = "OK"
    WARN = "WARN"
    STALL = "STALL"
    STOP = "STOP"
    ERR = "ERR"


SEVERITY = {Status.OK: 0, Status.WARN: 1, Status.STALL: 2, Status.STOP: 3, Status.ERR: 4}


@dataclass(frozen=True)
class OffsetSample:
    """One observation of a partition: when, the committed offset (-1: none), the log-end offset
    (-1: unknown) and the consumer's latest sign of life (epoch ms; ``None``: never seen)."""

    ts_ms: int
    committed: int
    log_end: int
    reported_ms: int | None = None

    @property
    def lag(self) -> int:
        if self.log_end < 0:
            return 0
        if self.committed < 0:
            return self.log_end
        return max(0, self.log_end - self.committed)


@dataclass(frozen=True)
class Evaluation:
    status: Status
    reason: str
    lag: int
    samples: int

    def to_json(self) -> dict[str, object]:
        return {"status": str(self.status), "reason": self.reason, "lag": self.lag, "samples": self.samples}


def window(samples: Iterable[OffsetSample], *, size: int) -> list[OffsetSample]:
    """The newest ``size`` samples, oldest first."""
    ordered = sorted(samples, key=lambda s: s.ts_ms)
    return ordered[-size:] if size > 0 else []


def _seconds(ms: int) -> str:
    return f"{ms / 1000:.1f} s"


def evaluate(samples: Sequence[OffsetSample], *, now_ms: int) -> Evaluation:
    """The status of one partition from its window of samples (any order) at ``now_ms``."""
    if not samples:
        return Evaluation(Status.ERR, "no samples of this partition", 0, 0)
    ordered = sorted(samples, key=lambda s: s.ts_ms)
    first, last = ordered[0], ordered[-1]
    n = len(ordered)
    lag = last.lag
    if last.committed < 0:
        return Evaluation(Status.ERR, "the consumer group has committed no offset for this partition", lag, n)
    if last.log_end < 0:
        return Evaluation(Status.OK, "no log-end offset known yet", 0, n)
    if lag == 0:
        return Evaluation(Status.OK, "caught up", 0, n)
    caught_up = [s for s in ordered if s.committed >= 0 and s.log_end >= 0 and s.lag == 0]
    if caught_up:
        ago = now_ms - caught_up[-1].ts_ms
        return Evaluation(Status.OK, f"caught up {_seconds(ago)} ago, within the window", lag, n)
    for before, after in pairwise(ordered):
        if 0 <= after.committed < before.committed:
            return Evaluation(
                Status.ERR, f"committed offset went back from {before.committed} to {after.committed}", lag, n
            )
    if n < 2:
        return Evaluation(Status.OK, f"{lag} behind; one sample, no trend yet", lag, n)
    if last.reported_ms is None:
        return Evaluation(Status.STOP, f"{lag} behind and the consumer has never reported", lag, n)
    reports = [s.reported_ms for s in ordered if s.reported_ms is not None]
    span = last.reported_ms - min(reports)
    silent = now_ms - last.reported_ms
    if silent > span:
        return Evaluation(
            Status.STOP,
            f"{lag} behind and no report for {_seconds(silent)}, longer than the window's reports span",
            lag,
            n,
        )
    if first.committed == last.committed:
        return Evaluation(
            Status.STALL,
            f"committed offset stuck at {last.committed} for {_seconds(last.ts_ms - first.ts_ms)} "
            f"while the consumer reports; {lag} behind",
            lag,
            n,
        )
    lags = [s.lag for s in ordered]
    if all(b >= a for a, b in pairwise(lags)):
        return Evaluation(
            Status.WARN,
            f"lag grew from {lags[0]} to {lags[-1]} over {_seconds(last.ts_ms - first.ts_ms)} "
            "although the consumer advances",
            lag,
            n,
        )
    return Evaluation(Status.OK, f"{lag} behind and shrinking", lag, n)


def worst(statuses: Iterable[Status]) -> Status:
    """A query's status: the most severe of its partitions (OK when it has none)."""
    return max(statuses, key=lambda s: SEVERITY[s], default=Status.OK)


def group_status(statuses: Iterable[Status]) -> Status:
    """Burrow's status of a whole consumer group: ERR when any partition stopped, stalled or
    errs, WARN when any warns, else OK."""
    top = worst(statuses)
    if top in (Status.STALL, Status.STOP, Status.ERR):
        return Status.ERR
    return top


def lag_seconds(samples: Sequence[OffsetSample], *, now_ms: int) -> float:
    """How far behind in time the consumer is: the age of the latest sample whose log end the
    consumer has now reached (0 when caught up; the window's age when none is reached yet)."""
    if not samples:
        return 0.0
    ordered = sorted(samples, key=lambda s: s.ts_ms)
    last = ordered[-1]
    if last.lag == 0:
        return 0.0
    reached = [s for s in ordered if 0 <= s.log_end <= last.committed]
    since = reached[-1].ts_ms if reached else ordered[0].ts_ms
    return max(0.0, (now_ms - since) / 1000)
