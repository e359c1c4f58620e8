"""Latency histograms: cumulative counts per stage, held in Redis.

Every process that records a latency adds to the same hash, so ``/metrics`` on any instance
answers the whole platform's counts and ``histogram_quantile`` works however many web workers or
hosts took the samples. One hash per stage (``store.latency``): one field per
bucket, named by its upper bound as the ``le`` label spells it, counting the observations that
fell in that bucket alone (made cumulative when read), and ``sum_us``, the sum of the
observations in microseconds (an integer, so concurrent increments add up exactly). The count is
the sum of the buckets, so ``_count`` always equals the ``+Inf`` bucket.

Changing the bounds needs new hashes: the counts of a bound no longer listed would be dropped.
"""

from __future__ import annotations

import bisect
import dataclasses
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

# Upper bounds (seconds) of the buckets of every latency histogram, ``+Inf`` implied: from a
# millisecond (a stage of the pipeline) to a minute (a browser tab that was asleep).
LATENCY_BUCKETS_S: tuple[float, ...] = (
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    30.0,
    60.0,
)
# Each bucket's field and ``le`` label: the bound as Prometheus' clients print a float.
BUCKET_FIELDS: tuple[str, ...] = (*(repr(bound) for bound in LATENCY_BUCKETS_S), "+Inf")
FIELD_SUM_US = "sum_us"
COUNTER_LATENCY = "latency"

# Stages timed by the stamps of an applied market state (event → produce → Kafka → reducer, and
# event → reducer) and by operators' browsers (event → receipt, reducer → receipt).
PIPELINE_STAGES: tuple[str, ...] = ("source", "kafka", "reducer", "end_to_end")
STAGE_BROWSER = "browser"
STAGE_WEBSOCKET = "websocket"
BROWSER_STAGES: tuple[str, ...] = (STAGE_BROWSER, STAGE_WEBSOCKET)
# Timed in the web processes: a bet's placement (request to decided, ``bet_place``), and the age of
# a market frame as a web process's hub hands it to its websockets (source event → frame, sampled).
STAGE_PLACEMENT = "placement"
STAGE_FRAME = "frame"
EDGE_STAGES: tuple[str, ...] = (STAGE_PLACEMENT, STAGE_FRAME)
STAGES: tuple[str, ...] = (*PIPELINE_STAGES, *BROWSER_STAGES, *EDGE_STAGES)


def known_stage(stage: str) -> str:
    """``stage``, one of ``STAGES``; an unknown stage raises ValueError."""
    if stage not in STAGES:
        raise ValueError(f"unknown latency stage {stage!r}")
    return stage


def bucket_of(seconds: float) -> str:
    """The field of the bucket an observation falls in: the smallest bound not below it."""
    return BUCKET_FIELDS[bisect.bisect_left(LATENCY_BUCKETS_S, seconds)]


def histogram_increments(seconds: Sequence[float]) -> dict[str, int]:
    """What observing ``seconds`` adds to a stage's hash: one per observation to its bucket's
    field, and their sum in microseconds. A negative observation (clocks apart) counts as 0."""
    clipped = [max(0.0, float(s)) for s in seconds]
    counts: dict[str, int] = dict(Counter(bucket_of(s) for s in clipped))
    return {**counts, FIELD_SUM_US: round(sum(clipped) * 1_000_000)}


@dataclasses.dataclass(frozen=True)
class LatencyHistogram:
    """One stage's histogram as Prometheus exposes it: the cumulative count per bucket (``le``,
    ending with ``+Inf``) and the sum of the observations in seconds."""

    buckets: tuple[tuple[str, int], ...]
    sum_s: float

    @property
    def count(self) -> int:
        return self.buckets[-1][1]


def histogram_read(fields: Mapping[bytes, bytes] | Mapping[str, str]) -> LatencyHistogram:
    """A stage's histogram from its hash (empty when the hash is)."""
    held = {(k.decode() if isinstance(k, bytes) else k): int(v) for k, v in fields.items()}
    cumulative, total = [], 0
    for field in BUCKET_FIELDS:
        total += held.get(field, 0)
        cumulative.append((field, total))
    return LatencyHistogram(buckets=tuple(cumulative), sum_s=held.get(FIELD_SUM_US, 0) / 1_000_000)


def state_spans_ms(state: Mapping[str, Any]) -> tuple[int, int, int, int] | None:
    """The pipeline stages of an applied market state, in milliseconds, in the order of
    ``PIPELINE_STAGES``: event → produce (source), produce → Kafka, Kafka → reducer, and event →
    reducer (end to end), each clipped at 0 (clocks apart); ``None`` when a stamp is missing."""
    ts = state.get("ts")
    if not isinstance(ts, Mapping):
        return None
    stamps = [ts.get(name) for name in ("event", "produce", "kafka", "reducer")]
    whole = [stamp for stamp in stamps if isinstance(stamp, int) and not isinstance(stamp, bool)]
    if len(whole) != len(stamps):
        return None
    event, produce, kafka, reducer = whole
    return (max(0, produce - event), max(0, kafka - produce), max(0, reducer - kafka), max(0, reducer - event))


def frame_age_s(frame: str | bytes, *, now_ms: int) -> float | None:
    """How old a market frame is as it leaves (now - its source event time), in seconds, clipped
    at 0; ``None`` for a frame with no event time (a status change, a trader's decision)."""
    try:
        decoded = orjson.loads(frame)
    except orjson.JSONDecodeError:
        return None
    ts = decoded.get("ts") if isinstance(decoded, dict) else None
    event = ts.get("event") if isinstance(ts, dict) else None
    if not isinstance(event, int) or isinstance(event, bool):
        return None
    return max(0, now_ms - event) / 1000
