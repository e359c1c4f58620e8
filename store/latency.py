"""The latency histograms' hashes: one per stage, written by every process that times a stage;
and the recent end-to-end samples operators' browsers acknowledged (``keys.browser_latency``).

The buckets and the reading are the reducers' decisions (``reducers.latency``); this module
names the hashes, queues the increments on a caller's pipeline and reads the histograms back.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import orjson

from reducers.latency import (
    COUNTER_LATENCY,
    PIPELINE_STAGES,
    STAGES,
    LatencyHistogram,
    histogram_increments,
    histogram_read,
    known_stage,
    state_spans_ms,
)
from store import keys
from store.pipeline import queue_keep_newest


def histogram_key(stage: str) -> str:
    """The Redis hash holding ``stage``'s histogram."""
    return keys.counter(f"{COUNTER_LATENCY}.{known_stage(stage)}")


def histograms_read(client: Any) -> dict[str, LatencyHistogram]:
    """Every stage's cumulative histogram, as every process recorded it, in one round trip."""
    pipe = client.pipeline(transaction=False)
    for stage in STAGES:
        pipe.hgetall(histogram_key(stage))
    return {stage: histogram_read(fields) for stage, fields in zip(STAGES, pipe.execute(), strict=True)}


def browser_samples_keep(pipe: Any, samples: Sequence[bytes], *, keep: int, ttl_s: int) -> None:
    """Queue on ``pipe`` the addition of ``samples`` (JSON) to the browsers' recent latency
    samples, newest first, the ``keep`` newest kept for ``ttl_s`` after the latest."""
    queue_keep_newest(pipe, keys.browser_latency(), samples, keep=keep, ttl_s=ttl_s)


def browser_samples_read(client: Any, *, count: int) -> list[dict[str, Any]]:
    """The ``count`` newest latency samples operators' browsers acknowledged, newest first."""
    return [orjson.loads(sample) for sample in client.lrange(keys.browser_latency(), 0, count - 1)]


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
