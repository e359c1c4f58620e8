"""Dead letters chosen for a replay or a discard: one source's dead-letter topic read from a time
on (or its beginning), filtered by reason and time, leaving out those already handled."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime

from confluent_kafka import TopicPartition

from odds.core.kafka import message_headers, reader_create
from odds.core.metrics import topic_partitions
from odds.ops.models import DeadLetterAction, DeadLetterHandled
from reducers.dead_letters import SOURCES, FirstFailure, first_failure, replay_refusal

# A selection holds at most this many dead letters (a replay or discard of more is done again).
SELECT_MAX = 5000
READ_TIMEOUT_S = 10.0
KAFKA_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class DeadLetterRecord:
    """One dead letter as read: its place, its record (key, value, headers unchanged) and its
    failures (the first, and why it may not be replayed, if so)."""

    topic: str
    partition: int
    offset: int
    ts_ms: int
    key: bytes | None
    value: bytes | None
    headers: dict[str, bytes | None]
    reason: str
    detail: str
    origin: str
    failure: FirstFailure
    refusal: str | None

    @property
    def when(self) -> datetime:
        return datetime.fromtimestamp(self.ts_ms / 1000, tz=UTC)

    @property
    def place(self) -> tuple[str, int, int]:
        return (self.topic, self.partition, self.offset)


@dataclass
class DeadLetterSelection:
    """The dead letters of a selection, the end offset read to in each partition (a replay made
    after the preview stops there, so records arriving meanwhile are not sent unseen), how many
    matching ones were handled before, and whether the selection stopped at ``SELECT_MAX``."""

    source: str
    records: list[DeadLetterRecord] = field(default_factory=list)
    ends: dict[int, int] = field(default_factory=dict)
    handled_before: int = 0
    truncated: bool = False
    # The topic could not be read to ``ends`` within READ_TIMEOUT_S: more may match.
    incomplete: bool = False

    @property
    def replayable(self) -> list[DeadLetterRecord]:
        return [r for r in self.records if r.refusal is None]

    @property
    def refused(self) -> list[DeadLetterRecord]:
        return [r for r in self.records if r.refusal is not None]


def _text(raw: bytes | None) -> str:
    return "" if raw is None else raw.decode("utf-8", errors="replace")


def _ms(moment: datetime | None) -> int | None:
    return None if moment is None else int(moment.timestamp() * 1000)


def dead_letters_select(
    *,
    source: str,
    reason: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    ends: dict[int, int] | None = None,
    limit: int = SELECT_MAX,
) -> DeadLetterSelection:
    """The dead letters of ``source`` (a name of ``reducers.dead_letters.SOURCES``) of
    ``reason`` (every reason when None), written from ``since`` up to ``until``, up to ``ends``
    (per partition; the log end now when None), oldest first, not yet replayed or discarded: at
    most ``limit`` (reading stops there, ``truncated``), read for at most ``READ_TIMEOUT_S``
    (``incomplete`` when the ends were not reached)."""
    if source not in SOURCES:
        raise ValueError(f"no dead-letter topic for {source!r}; choose one of {', '.join(SOURCES)}")
    topic = SOURCES[source].dead_letter()
    selection = DeadLetterSelection(source=source)
    since_ms, until_ms = _ms(since), _ms(until)
    reader = reader_create()
    found: list[DeadLetterRecord] = []
    try:
        starts: dict[int, int] = {}
        for partition in topic_partitions(topic):
            low, high = reader.get_watermark_offsets(TopicPartition(topic, partition), timeout=KAFKA_TIMEOUT_S)
            end = min(high, ends[partition]) if ends is not None and partition in ends else high
            selection.ends[partition] = end
            start = low
            if since_ms is not None:
                (at,) = reader.offsets_for_times([TopicPartition(topic, partition, since_ms)], timeout=KAFKA_TIMEOUT_S)
                start = end if at.offset < 0 else max(low, at.offset)
            if end > start:
                starts[partition] = start
        if starts:
            reader.assign([TopicPartition(topic, p, o) for p, o in starts.items()])
            left = {p: selection.ends[p] for p in starts}
            deadline = time.monotonic() + READ_TIMEOUT_S
            while left and not selection.truncated and time.monotonic() < deadline:
                batch: list[DeadLetterRecord] = []
                for message in reader.consume(num_messages=500, timeout=0.2):
                    if message.error() is not None:
                        continue
                    partition, offset = int(message.partition() or 0), int(message.offset() or 0)
                    if partition not in left or offset >= left[partition]:
                        continue
                    if offset >= left[partition] - 1:
                        del left[partition]
                    headers = message_headers(message)
                    ts_ms = int(message.timestamp()[1])
                    record_reason = _text(headers.get("reason"))
                    if reason is not None and record_reason != reason:
                        continue
                    if until_ms is not None and ts_ms > until_ms:
                        continue
                    failure = first_failure(
                        headers=headers,
                        reason=record_reason,
                        detail=_text(headers.get("detail")),
                        origin=_text(headers.get("origin")),
                        at_ms=ts_ms,
                    )
                    batch.append(
                        DeadLetterRecord(
                            topic=topic,
                            partition=partition,
                            offset=offset,
                            ts_ms=ts_ms,
                            key=message.key(),
                            value=message.value(),
                            headers=headers,
                            reason=record_reason,
                            detail=_text(headers.get("detail")),
                            origin=_text(headers.get("origin")),
                            failure=failure,
                            refusal=replay_refusal(failure),
                        )
                    )
                # Those handled before are left out batch by batch, so a topic full of them is
                # read through without holding it all.
                handled = dead_letters_handled(topic=topic, offsets=[(r.partition, r.offset) for r in batch])
                fresh = [r for r in batch if (r.partition, r.offset) not in handled]
                selection.handled_before += len(batch) - len(fresh)
                found.extend(fresh)
                selection.truncated = len(found) > limit
            selection.incomplete = bool(left) and not selection.truncated
    finally:
        reader.close()
    found.sort(key=lambda r: (r.ts_ms, r.partition, r.offset))
    selection.records = found[:limit]
    return selection


def dead_letters_handled(*, topic: str, offsets: list[tuple[int, int]]) -> dict[tuple[int, int], str]:
    """Which of these dead letters (partition, offset) were replayed or discarded: by place, the
    action's kind."""
    if not offsets:
        return {}
    partitions = {p for p, _ in offsets}
    lowest = min(o for _, o in offsets)
    rows = DeadLetterHandled.objects.filter(topic=topic, partition__in=partitions, offset__gte=lowest).values_list(
        "partition", "offset", "action__kind"
    )
    wanted = set(offsets)
    return {(p, o): kind for p, o, kind in rows if (p, o) in wanted}


def dead_letter_actions_recent(*, limit: int = 20) -> list[DeadLetterAction]:
    """The latest replays and discards, with who made them."""
    return list(DeadLetterAction.objects.select_related("by").order_by("-at", "-id")[:limit])
