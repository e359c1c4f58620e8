"""Which failures are the infrastructure's and which are a record's.

A reducer meets two kinds of failure while it applies a record. One belongs to the record: it
cannot be decoded, or applying it raises because of what it holds. Retrying it would fail the
same way forever, so it goes to its topic's dead letters and the reducer carries on. The other
belongs to the infrastructure: Redis or Kafka unreachable, Redis out of memory or loading. That
record is fine, so it must not be dead-lettered: the batch fails, the query is restarted with a
backoff, and the batch is replayed from the checkpoint once the dependency is back.
"""

from __future__ import annotations

import redis

# Redis error replies that describe the server's condition, not the command's arguments.
TRANSIENT_REPLIES = ("OOM", "LOADING", "BUSY", "MASTERDOWN", "READONLY", "TRYAGAIN", "CLUSTERDOWN", "NOREPLICAS")


def is_transient(exc: BaseException) -> bool:
    """Whether ``exc`` says a dependency is unavailable (retry the batch) rather than that the
    record is unusable (dead-letter it)."""
    if isinstance(exc, redis.ConnectionError | redis.TimeoutError | OSError):
        return True
    if isinstance(exc, redis.ResponseError):
        return str(exc).lstrip().startswith(TRANSIENT_REPLIES)
    return False


def failure_of(exc: Exception, *, stage: str) -> tuple[str, str]:
    """The dead-letter reason and detail of a record whose ``stage`` ("decode" or "apply")
    raised ``exc``; re-raises ``exc`` when the failure is the infrastructure's."""
    if is_transient(exc):
        raise exc
    reason = "undecodable" if stage == "decode" else "apply_failed"
    return reason, f"{type(exc).__name__}: {exc}"[:500]
