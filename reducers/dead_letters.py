"""Dead letters: which topics have them, and how one is replayed to its source topic.

``SOURCES`` is the one list of the reducers' dead-letter topics: the source topic each sets
aside records of, and the prefix its reducer counts reasons under in the ``dead_letters`` counter
(``spark/sinks/dead_letter.py``). The operator pages, ``/metrics`` and the replay derive theirs
from it.

A replay re-sends a dead letter's key and value to its source topic with headers naming its
first failure (``replay_headers``): where it first failed, why, and how many times it has been
replayed. Should it fail again, the reducer dead-letters it again with the same headers and the
count one higher (``store.dead_letters.ReplayLedger``, read by ``Rejects.flush``); a dead letter replayed
``MAX_REPLAYS`` times can only be discarded, so nothing ever loops.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Mapping
from typing import Any

from reducers.queries import QUERIES


@dataclasses.dataclass(frozen=True)
class DeadLetterSource:
    """One topic the reducers read and its dead-letter topic."""

    name: str
    topic: Callable[[], str]
    dead_letter: Callable[[], str]
    # The prefix of the reasons its reducer counts (``dead_letters`` counter): ``command_undecodable``.
    counter_prefix: str


# From the registry of reducer queries: each topic a query reads that has a dead-letter topic (its
# source, and its broadcast topic when it reads one).
SOURCES: dict[str, DeadLetterSource] = {
    dead_letters.label: DeadLetterSource(dead_letters.label, topic, dead_letters.topic, dead_letters.counter_prefix)
    for query in QUERIES
    for topic, dead_letters in ((query.source, query.dead_letters), (query.broadcast, query.broadcast_dead_letters))
    if topic is not None and dead_letters is not None
}
# Counted reasons without a known prefix are the price reducer's.
UNPREFIXED_SOURCE = "prices"

# Headers of a replayed record (and of its dead letter, should it fail again).
HEADER_FIRST_REASON = "dl-first-reason"
HEADER_FIRST_DETAIL = "dl-first-detail"
HEADER_FIRST_ORIGIN = "dl-first-origin"
HEADER_FIRST_AT = "dl-first-at"
HEADER_REPLAYS = "dl-replays"
HEADER_REPLAY = "dl-replay"
# A dead letter replayed this many times is not replayed again: it can only be discarded.
MAX_REPLAYS = 3
# How long the ledger remembers a replayed record (the dead-letter topics keep 7 days).
LEDGER_TTL_S = 8 * 24 * 3600
# The counter family of records dead-lettered again after a replay, by ``<prefix><reason>``.
COUNTER_AGAIN = "dead_letters_again"


def source_of_reason(counted: str) -> tuple[str, str]:
    """The source and the reason of a field of the ``dead_letters`` counter: the source whose
    prefix it carries (the price reducer's reasons carry none) and the field as it is."""
    for source in SOURCES.values():
        if source.counter_prefix and counted.startswith(source.counter_prefix):
            return source.name, counted
    return UNPREFIXED_SOURCE, counted


@dataclasses.dataclass(frozen=True)
class FirstFailure:
    """Where and why a record first failed, and how many times it has been replayed since."""

    reason: str
    detail: str
    origin: str
    at_ms: int
    replays: int = 0

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _text(headers: Mapping[str, bytes | None], name: str) -> str:
    value = headers.get(name)
    return value.decode("utf-8", errors="replace") if value else ""


def first_failure(
    *, headers: Mapping[str, bytes | None], reason: str, detail: str, origin: str, at_ms: int
) -> FirstFailure:
    """The first failure of a dead letter: named by its replay headers when it is a replayed
    record that failed again, else its own reason, detail, origin and time."""
    first_origin = _text(headers, HEADER_FIRST_ORIGIN)
    if not first_origin:
        return FirstFailure(reason=reason, detail=detail, origin=origin, at_ms=at_ms)
    try:
        replays = int(_text(headers, HEADER_REPLAYS) or 0)
        first_at = int(_text(headers, HEADER_FIRST_AT) or at_ms)
    except ValueError:
        replays, first_at = 0, at_ms
    return FirstFailure(
        reason=_text(headers, HEADER_FIRST_REASON),
        detail=_text(headers, HEADER_FIRST_DETAIL),
        origin=first_origin,
        at_ms=first_at,
        replays=replays,
    )


def replay_refusal(failure: FirstFailure) -> str | None:
    """Why a dead letter may not be replayed (it has been ``MAX_REPLAYS`` times), else None."""
    if failure.replays >= MAX_REPLAYS:
        return f"replayed {failure.replays} times already: discard it, or fix its producer and send it anew"
    return None


def replay_headers(*, failure: FirstFailure, replay_id: int) -> list[tuple[str, bytes]]:
    """The headers a replayed record carries: its first failure, and its replay count (this
    replay included) and replay id."""
    return [
        (HEADER_FIRST_REASON, failure.reason.encode()),
        (HEADER_FIRST_DETAIL, failure.detail[:500].encode()),
        (HEADER_FIRST_ORIGIN, failure.origin.encode()),
        (HEADER_FIRST_AT, str(failure.at_ms).encode()),
        (HEADER_REPLAYS, str(failure.replays + 1).encode()),
        (HEADER_REPLAY, str(replay_id).encode()),
    ]


def record_digest(*, topic: str, key: bytes | None, value: bytes | None) -> str:
    """What identifies a replayed record to the reducer that reads it: its topic, key and value
    (the reducer sees no headers, and the record's offset is not known before it is produced)."""
    digest = hashlib.blake2b(digest_size=16)
    for part in (topic.encode(), key or b"", value or b""):
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    return digest.hexdigest()
