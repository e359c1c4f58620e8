"""Supervision of the reducer queries: one failed query is restarted alone, with a backoff.

The reducer process runs several streaming queries in one Spark application. A query that
stops with an error (a dependency down, a defect met by one batch) is started again from its
checkpoint after a delay that doubles with each consecutive failure, up to a cap; the other
queries run on meanwhile. A query that has run without failing for ``stable_s`` has its
failure count forgotten, so the next failure is retried quickly again.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

# The states a query is shown in on /healthz and the lag dashboard.
RUNNING = "running"
RESTARTING = "restarting"
STOPPED = "stopped"


@dataclass(frozen=True)
class Backoff:
    base_s: float = 1.0
    cap_s: float = 60.0
    stable_s: float = 60.0

    def delay_s(self, failures: int) -> float:
        """Seconds to wait before the restart that follows the ``failures``-th failure in a row."""
        if failures < 1:
            return 0.0
        return min(self.cap_s, self.base_s * 2 ** min(failures - 1, 30))


@dataclass(frozen=True)
class QueryRun:
    """What the supervisor knows of one query."""

    state: str = RUNNING
    restarts: int = 0
    failures: int = 0
    last_error: str | None = None
    last_failure_ms: int | None = None
    since_ms: int = 0
    next_start_ms: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "restarts": self.restarts,
            "failures": self.failures,
            "last_error": self.last_error,
            "last_failure_ms": self.last_failure_ms,
            "since_ms": self.since_ms,
            "next_start_ms": self.next_start_ms,
        }


def run_started(run: QueryRun, *, now_ms: int) -> QueryRun:
    return replace(run, state=RUNNING, since_ms=now_ms, next_start_ms=None)


def run_failed(run: QueryRun, *, error: str, now_ms: int, backoff: Backoff) -> QueryRun:
    """The query stopped with ``error``: schedule its restart."""
    failures = run.failures + 1
    return replace(
        run,
        state=RESTARTING,
        failures=failures,
        last_error=error[:500],
        last_failure_ms=now_ms,
        since_ms=now_ms,
        next_start_ms=now_ms + int(backoff.delay_s(failures) * 1000),
    )


def run_restarted(run: QueryRun, *, now_ms: int) -> QueryRun:
    return replace(run_started(run, now_ms=now_ms), restarts=run.restarts + 1)


def run_steady(run: QueryRun, *, now_ms: int, backoff: Backoff) -> QueryRun:
    """A running query that has not failed for ``stable_s`` starts its backoff afresh."""
    if run.state == RUNNING and run.failures and now_ms - run.since_ms >= backoff.stable_s * 1000:
        return replace(run, failures=0)
    return run


def run_stopped(run: QueryRun, *, now_ms: int) -> QueryRun:
    return replace(run, state=STOPPED, since_ms=now_ms, next_start_ms=None)


def restart_due(run: QueryRun, *, now_ms: int) -> bool:
    return run.state == RESTARTING and run.next_start_ms is not None and now_ms >= run.next_start_ms
