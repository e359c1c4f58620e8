"""The latency histograms' hashes: one per stage, written by every process that times a stage.

The buckets and the reading are the reducers' decisions (``reducers.latency``); this module
names the hashes and queues the increments on a caller's pipeline.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from reducers.latency import COUNTER_LATENCY, PIPELINE_STAGES, STAGES, histogram_increments, state_spans_ms
from store import keys


def histogram_key(stage: str) -> str:
    """The Redis hash holding ``stage``'s histogram."""
    if stage not in STAGES:
        raise ValueError(f"unknown latency stage {stage!r}")
    return keys.counter(f"{COUNTER_LATENCY}.{stage}")


def latency_observe(pipe: Any, *, stage: str, seconds: Sequence[float]) -> None:
    """Queue on ``pipe`` (a Redis pipeline, sent by the caller with its other writes) the
    increments that add ``seconds`` to ``stage``'s histogram."""
    if not seconds:
        return
    key = histogram_key(stage)
    for field, amount in histogram_increments(seconds).items():
        pipe.hincrby(key, field, amount)


def pipeline_observe(pipe: Any, states: Iterable[Mapping[str, Any]]) -> None:
    """Queue on ``pipe`` the pipeline stages of newly applied market states (a replay is not a
    new latency, so only states that were applied belong here)."""
    by_stage: list[list[float]] = [[] for _ in PIPELINE_STAGES]
    for state in states:
        spans = state_spans_ms(state)
        if spans is None:
            continue
        for observed, ms in zip(by_stage, spans, strict=True):
            observed.append(ms / 1000)
    for stage, seconds in zip(PIPELINE_STAGES, by_stage, strict=True):
        latency_observe(pipe, stage=stage, seconds=seconds)
