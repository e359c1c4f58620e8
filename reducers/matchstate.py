"""Latest-state reduction of match-state snapshots: conflation and idempotent apply.

Like prices, each record is a full snapshot of one event's match state, so per event only the
highest sequence matters. The store keeps the highest sequence applied and its state document;
an update applies only when its sequence is higher, so replays and duplicates change nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from reducers import frames
from reducers.frames import MatchMessage
from reducers.schemas import MatchStateUpdate

MATCH_MESSAGE_VERSION = 1


@dataclass(frozen=True)
class ConflatedMatch:
    """The newest match state of one event in a batch and how many updates it stands for."""

    update: MatchStateUpdate
    merged: int
    kafka_ts: int


def conflate_matches(updates: Iterable[tuple[MatchStateUpdate, int]]) -> list[ConflatedMatch]:
    """Keep the highest-sequence state per event, paired with its Kafka timestamp (ms)."""
    best: dict[int, ConflatedMatch] = {}
    for update, kafka_ts in updates:
        current = best.get(update.event_id)
        if current is None:
            best[update.event_id] = ConflatedMatch(update, 1, kafka_ts)
        elif update.seq > current.update.seq:
            best[update.event_id] = ConflatedMatch(update, current.merged + 1, kafka_ts)
        else:
            best[update.event_id] = ConflatedMatch(current.update, current.merged + 1, current.kafka_ts)
    return sorted(best.values(), key=lambda c: c.update.event_id)


def match_applies(*, stored_seq: int | None, incoming_seq: int) -> bool:
    """Whether an incoming sequence supersedes the stored one; stale and replayed states do not."""
    return stored_seq is None or incoming_seq > stored_seq


def match_message(*, item: ConflatedMatch, reducer_ts: int) -> MatchMessage:
    """The ``match`` message stored in Redis and sent to the channels showing the event's markets
    (schema in docs/protocol.md)."""
    update = item.update
    return {
        "type": "match",
        "v": MATCH_MESSAGE_VERSION,
        "event_id": update.event_id,
        "seq": update.seq,
        "sport": update.sport,
        "status": update.status,
        "period": update.period,
        "score": update.score,
        "clock": None if update.clock is None else update.clock.to_json(),
        "incidents": [incident.to_json() for incident in update.incidents],
        "ts": {"event": update.event_ts, "produce": update.produce_ts, "kafka": item.kafka_ts, "reducer": reducer_ts},
        "suspension": None if update.suspension is None else update.suspension.to_json(),
    }


def match_apply(*, stored_seq: int | None, item: ConflatedMatch, reducer_ts: int) -> MatchMessage | None:
    """The message to store and publish for a batch's newest state of an event, or ``None`` when
    the store already holds that sequence or a newer one."""
    if not match_applies(stored_seq=stored_seq, incoming_seq=item.update.seq):
        return None
    return match_message(item=item, reducer_ts=reducer_ts)


def encode_match(message: MatchMessage) -> bytes:
    return frames.encode(message)
