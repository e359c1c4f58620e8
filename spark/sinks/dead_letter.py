"""Dead-letter sink: records a reducer cannot decode or apply, with the reason in headers.

Every topic a reducer reads has a dead-letter topic (``reducers.topics.dead_letter_of``). A
dead letter keeps the record's key and value unchanged and carries three headers: ``reason``
(a short code), ``detail`` (words) and ``origin`` (``topic/partition/offset``), so an operator
can find, fix and replay it. Each is also counted in Redis by reason for the dashboard.

A record an operator replayed (``reducers.dead_letters``) that fails again keeps the replay's
headers (its first failure, and how many times it was replayed) on its new dead letter, and is
counted once more in ``dead_letters_again``: it is never re-sent by itself.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, Protocol

import redis

from reducers import topics
from reducers.dead_letters import COUNTER_AGAIN, record_digest
from store.clients import kafka_producer
from store.dead_letters import ReplayLedger
from store.pipeline import counter_add

log = logging.getLogger("spark.sinks.dead_letter")


class DeadLetters(Protocol):
    """What a reducer needs of its dead-letter topic (``DeadLetterSink``; an in-memory stand-in
    in the tests that run a reducer without a broker)."""

    def send(
        self,
        *,
        key: bytes | None,
        value: bytes | None,
        reason: str,
        detail: str,
        origin: str,
        headers: Sequence[tuple[str, bytes]] = (),
    ) -> None: ...

    def flush(self, timeout: float = 30.0) -> None: ...


class DeadLetterSink:
    """The dead-letter topic of one source topic, through a Kafka producer."""

    def __init__(self, *, bootstrap_servers: str, topic: str) -> None:
        self._topic = topic
        self._producer = kafka_producer(bootstrap_servers)

    def send(
        self,
        *,
        key: bytes | None,
        value: bytes | None,
        reason: str,
        detail: str,
        origin: str,
        headers: Sequence[tuple[str, bytes]] = (),
    ) -> None:
        self._producer.produce(
            self._topic,
            key=key,
            value=value,
            headers=[
                ("reason", reason.encode()),
                ("detail", detail[:500].encode()),
                ("origin", origin.encode()),
                *headers,
            ],
        )
        self._producer.poll(0)

    def flush(self, timeout: float = 30.0) -> None:
        """Block until every record is acknowledged; raise if some are not."""
        remaining = self._producer.flush(timeout)
        if remaining:
            raise RuntimeError(f"{remaining} dead-letter records not acknowledged within {timeout}s")


class Rejects:
    """The dead letters of one batch of one source topic.

    ``add`` collects a rejected row; ``flush`` sends them all, waits for the broker's
    acknowledgement (a batch whose dead letters are not stored fails and is replayed, so nothing
    is lost) and adds them to the ``dead_letters`` counter as ``<prefix><reason>``.
    """

    def __init__(
        self, *, sink: DeadLetters, redis_client: redis.Redis, source_topic: str, counter_prefix: str = ""
    ) -> None:
        self._sink = sink
        self._redis = redis_client
        self._source = source_topic
        self._prefix = counter_prefix
        self._rows: list[tuple[Any, str, str]] = []

    def add(self, row: Any, reason: str, detail: str) -> None:
        log.warning(
            "dead letter from %s/%s/%s: %s %s", self._source, row["partition"], row["offset"], reason, detail[:200]
        )
        self._rows.append((row, reason, detail))

    def __len__(self) -> int:
        return len(self._rows)

    def flush(self) -> dict[str, int]:
        """Send and count the collected rows; returns the count per reason."""
        if not self._rows:
            return {}
        counts: dict[str, int] = {}
        again: dict[str, int] = {}
        digests = [record_digest(topic=self._source, key=row["key"], value=row["value"]) for row, _, _ in self._rows]
        replayed = ReplayLedger(self._redis).headers_of(digests)
        for (row, reason, detail), digest in zip(self._rows, digests, strict=True):
            counts[reason] = counts.get(reason, 0) + 1
            if digest in replayed:
                again[reason] = again.get(reason, 0) + 1
            self._sink.send(
                key=row["key"],
                value=row["value"],
                reason=reason,
                detail=detail,
                origin=f"{self._source}/{row['partition']}/{row['offset']}",
                headers=replayed.get(digest, ()),
            )
        self._sink.flush()
        pipe = self._redis.pipeline(transaction=False)
        for reason, count in counts.items():
            counter_add(pipe, "dead_letters", f"{self._prefix}{reason}", count)
        for reason, count in again.items():
            counter_add(pipe, COUNTER_AGAIN, f"{self._prefix}{reason}", count)
        pipe.execute()
        self._rows = []
        return counts


def dead_letter_sink(*, bootstrap: str, source_topic: str) -> DeadLetterSink:
    """The sink of the dead-letter topic of ``source_topic``."""
    return DeadLetterSink(bootstrap_servers=bootstrap, topic=topics.dead_letter_of(source_topic))
