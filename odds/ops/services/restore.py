"""After PostgreSQL is restored to an earlier moment: bring Kafka and Redis in line with it.

``manage.py after_restore`` runs the steps in this order; each is idempotent, so the command can
run again after any of them failed. docs/reliability.md has the whole procedure.

1. ``outbox``: pending outbox rows whose record Kafka already holds (relayed after the restore
   point, their ``sent_at`` lost with it) are marked sent without producing; the rest are
   relayed, once.
2. ``bets``: the bets topic from shortly before the restore point is checked against the
   database (``reducers.restore``): events of bets it never saw, or of changes it does not
   hold, go to the bets dead-letter topic with reason ``not_in_restored_database``; the bet ids
   Kafka has seen are never handed out again.
3. ``liability``: once the liability reducer has read the bets topic to its end, the figures are
   rebuilt from the database's open bets (liability per selection and each market's book per
   outcome), with the reducer's seen-markers to match.
4. ``store``: Redis's market state is the reducers' to rebuild from Kafka (``spark/rebuild.py``,
   whenever the store's mark is missing); the step waits for the mark, after removing it when
   asked to.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from confluent_kafka import KafkaError, KafkaException, TopicPartition
from django.db import connection, transaction
from django.db.models import Max
from django.utils import timezone

from odds.betting.models import Bet, LedgerEntry
from odds.betting.services.bets import bet_event
from odds.core.connections import redis_shared
from odds.core.kafka import message_headers, producer_shared, reader_create
from odds.core.metrics import COUNTER_DEAD_LETTERS, committed_offsets, log_end_offsets, topic_partitions
from odds.core.outbox import outbox_drain, outbox_pending_count
from odds.models import OutboxMessage
from reducers import restore, topics
from reducers.liability import SEEN_TTL_S, aggregate, books_of
from reducers.schemas import InvalidRecord, decode_bet_event
from store.liability import BookStore
from store.markets import LiabilityStore
from store.pipeline import counter_add, store_mark_read, store_mark_remove

log = logging.getLogger(__name__)

# Records are read from this long before the restore point: clocks of the hosts that wrote the
# database and produced to Kafka may differ by this much.
SCAN_MARGIN = timedelta(minutes=5)
# The consumer group the liability reducer commits its read offsets to.
LIABILITY_QUERY = "liability"
DONE, SKIPPED, INCOMPLETE = "done", "skipped", "incomplete"


@dataclass
class StepReport:
    status: str
    figures: dict[str, Any] = field(default_factory=dict)
    note: str = ""


@dataclass(frozen=True)
class Record:
    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: dict[str, bytes]

    @property
    def origin(self) -> str:
        return f"{self.topic}/{self.partition}/{self.offset}"


def restore_point() -> datetime | None:
    """The newest write the database holds (a bet, a ledger entry, an outbox row): what it was
    restored to, as far as its money tells."""
    found = [
        *Bet.objects.aggregate(Max("placed_at"), Max("settled_at")).values(),
        LedgerEntry.objects.aggregate(Max("created_at"))["created_at__max"],
        OutboxMessage.objects.aggregate(Max("created_at"))["created_at__max"],
    ]
    times = [t for t in found if t is not None]
    return max(times) if times else None


def scan_start(*, since: datetime | None = None) -> datetime:
    """Where Kafka is read from: ``since`` when given, else shortly before the restore point."""
    if since is not None:
        return since
    point = restore_point()
    return point - SCAN_MARGIN if point is not None else datetime(1970, 1, 1, tzinfo=UTC)


T = TypeVar("T")


def _retrying(read: Callable[[], T], *, attempts: int = 5, pause_s: float = 0.5) -> T:
    """``read()``, again after a pause while Kafka answers with a retriable error (a partition
    whose leader is moving or not yet elected: NOT_LEADER_FOR_PARTITION)."""
    for attempt in range(attempts):
        try:
            return read()
        except KafkaException as exc:
            error = exc.args[0] if exc.args else None
            if attempt == attempts - 1 or not (isinstance(error, KafkaError) and error.retriable()):
                raise
            time.sleep(pause_s * (attempt + 1))
    raise AssertionError("unreachable")


def records_since(topic: str, *, since: datetime, timeout_s: float = 60.0) -> Iterator[Record]:
    """Every record of ``topic`` produced at or after ``since``, up to the log end when called."""
    partitions = topic_partitions(topic)
    if not partitions:
        return
    reader = reader_create(**{"auto.offset.reset": "earliest"})
    try:
        since_ms = int(since.timestamp() * 1000)
        starts = _retrying(
            lambda: reader.offsets_for_times([TopicPartition(topic, p, since_ms) for p in partitions], timeout=10)
        )

        def high_watermark(partition: int) -> int:
            return int(reader.get_watermark_offsets(TopicPartition(topic, partition), timeout=10)[1])

        ends = {p: _retrying(functools.partial(high_watermark, p)) for p in partitions}
        assign = [tp for tp in starts if 0 <= tp.offset < ends[tp.partition]]
        if not assign:
            return
        reader.assign(assign)
        left = {tp.partition for tp in assign}
        deadline = time.monotonic() + timeout_s
        while left:
            if time.monotonic() > deadline:
                raise TimeoutError(f"reading {topic} did not reach its end within {timeout_s:.0f} s")
            for message in reader.consume(num_messages=1000, timeout=0.2):
                partition, offset = message.partition(), message.offset()
                if message.error() is not None or partition not in left or partition is None or offset is None:
                    continue
                if offset >= ends[partition]:
                    left.discard(partition)
                    continue
                yield Record(
                    topic,
                    partition,
                    offset,
                    message.key(),
                    message.value(),
                    {name: value for name, value in message_headers(message).items() if value is not None},
                )
                if offset + 1 >= ends[partition]:
                    left.discard(partition)
    finally:
        reader.close()


# --- 1. outbox ---------------------------------------------------------------------------------


def outbox_reconcile(*, margin: timedelta = SCAN_MARGIN) -> StepReport:
    """Mark sent the pending rows whose record Kafka already holds, then relay the others once."""
    pending = list(OutboxMessage.objects.filter(sent_at__isnull=True).order_by("id"))
    already: list[int] = []
    if pending:
        since = min(row.created_at for row in pending) - margin
        by_record: dict[tuple[str, bytes, bytes | None], list[int]] = {}
        for row in pending:
            value = bytes(row.value) if row.value is not None else None
            by_record.setdefault((row.topic, bytes(row.key), value), []).append(row.id)
        for topic in sorted({row.topic for row in pending}):
            for record in records_since(topic, since=since):
                ids = by_record.pop((topic, record.key or b"", record.value), None)
                if ids:
                    already.extend(ids)
        if already:
            OutboxMessage.objects.filter(id__in=already).update(sent_at=timezone.now())
    sent = failed = 0
    while True:
        result = outbox_drain(budget_s=60)
        sent, failed = sent + result.sent, failed + result.failed
        if result.busy or result.failed or not result.sent:
            break
    left = outbox_pending_count()
    figures = {"pending": len(pending), "already_in_kafka": len(already), "relayed": sent, "left": left}
    if left:
        return StepReport(INCOMPLETE, figures, f"{left} outbox rows could not be relayed ({failed} failed)")
    return StepReport(DONE, figures)


# --- 2. bets -----------------------------------------------------------------------------------


@dataclass
class BetsCheck:
    report: StepReport
    verdicts: list[restore.BetEventVerdict]


def _bet_rows(bet_ids: set[int]) -> dict[int, restore.BetRow]:
    rows = Bet.objects.filter(id__in=bet_ids).values_list("id", "user_id", "status")
    return {bet_id: restore.BetRow(bet_id, user_id, status) for bet_id, user_id, status in rows}


def _sequence_floor(*, table: str, floor: int) -> int:
    """Make the id sequence of ``table`` hand out only ids above ``floor``; returns its value."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_get_serial_sequence(%s, 'id')", [table])
        (sequence,) = cursor.fetchone()
        cursor.execute(f"SELECT last_value, is_called FROM {sequence}")  # noqa: S608 - a name PostgreSQL gave
        last, called = cursor.fetchone()
        if floor > last or (floor == last and not called):
            cursor.execute("SELECT setval(%s, %s)", [sequence, floor])
            return floor
    return int(last)


def _dead_lettered(*, since: datetime) -> set[str]:
    """Origins of bet records already dead-lettered by an earlier run, from ``since`` on."""
    return {
        record.headers.get("origin", b"").decode()
        for record in records_since(topics.bets_dead_letter(), since=since)
        if record.headers.get("reason") == restore.DEAD_LETTER_REASON.encode()
    }


def bets_reconcile(*, since: datetime) -> BetsCheck:
    """Check the bets topic from ``since`` against the database; dead-letter what it does not hold."""
    records: list[tuple[Record, Any]] = []
    unreadable = 0
    for record in records_since(topics.bets(), since=since):
        try:
            records.append((record, decode_bet_event(record.value)))
        except InvalidRecord:
            unreadable += 1  # the liability reducer dead-lettered it when it arrived
    bets = _bet_rows({event.bet_id for _, event in records})
    verdicts = [restore.bet_event_verdict(event, bets.get(event.bet_id)) for _, event in records]
    done_before = _dead_lettered(since=since)
    producer = producer_shared()
    dead = 0
    for (record, _), verdict in zip(records, verdicts, strict=True):
        if not verdict.dead_letter or record.origin in done_before:
            continue
        producer.produce(
            topics.bets_dead_letter(),
            key=record.key,
            value=record.value,
            headers=[
                ("reason", restore.DEAD_LETTER_REASON.encode()),
                ("detail", verdict.detail[:500].encode()),
                ("origin", record.origin.encode()),
            ],
        )
        dead += 1
    if dead:
        if producer.flush(30):
            raise RuntimeError("dead letters of the restore not acknowledged within 30 s")
        counter_add(redis_shared(), COUNTER_DEAD_LETTERS, f"bet_{restore.DEAD_LETTER_REASON}", dead)
    floor = restore.bet_id_floor(event for _, event in records)
    next_id = _sequence_floor(table=Bet._meta.db_table, floor=floor) + 1
    counts = {v.value: sum(1 for x in verdicts if x.verdict is v) for v in restore.Verdict}
    figures = {"read": len(records) + unreadable, **counts, "dead_lettered": dead, "next_bet_id": next_id}
    for verdict in verdicts:
        if verdict.dead_letter:
            log.warning("bet event %s: %s", verdict.event_id, verdict.detail)
    return BetsCheck(StepReport(DONE, figures), verdicts)


# --- 3. liability ------------------------------------------------------------------------------


def liability_reducer_caught_up() -> tuple[bool, int]:
    """Whether the liability reducer has committed the bets topic's log end on every partition,
    and how many records it has still to read."""
    partitions = [(topics.bets(), p) for p in topic_partitions(topics.bets())]
    ends = log_end_offsets(partitions)
    committed = committed_offsets(topics.reducer_group(LIABILITY_QUERY), partitions)
    behind = sum(max(0, ends[tp] - max(0, committed[tp])) for tp in partitions if ends[tp] > 0)
    caught = all(ends[tp] <= 0 or committed[tp] >= ends[tp] for tp in partitions)
    return caught, behind


def liability_rebuild(
    *, verdicts: list[restore.BetEventVerdict], wait_s: float, sleep: Callable[[float], None] = time.sleep
) -> StepReport:
    """Rebuild liability from the database's open bets once the reducer has read every bet event."""
    deadline = time.monotonic() + wait_s
    caught, behind = liability_reducer_caught_up()
    while not caught and time.monotonic() < deadline:
        sleep(0.5)
        caught, behind = liability_reducer_caught_up()
    if not caught:
        return StepReport(
            INCOMPLETE,
            {"records_unread": behind},
            "the liability reducer has not read the bets topic to its end: start the reducers "
            "(make up), then run after_restore again",
        )
    with transaction.atomic():
        open_bets = list(
            Bet.objects.filter(status=Bet.Status.ACCEPTED).select_related("user__wallet").prefetch_related("legs")
        )
        events = [bet_event(bet=bet, type="placed", currency=bet.user.wallet.currency) for bet in open_bets]
    totals = aggregate(events)
    marks = restore.liability_marks(verdicts, open_bet_events=(e.event_id for e in events))
    LiabilityStore(redis_shared()).replace(totals, seen=marks.seen, unseen=marks.unseen, seen_ttl_s=SEEN_TTL_S)
    books = books_of(events)
    BookStore(redis_shared()).replace(books)
    return StepReport(
        DONE,
        {
            "open_bets": len(open_bets),
            "selections": len(totals),
            "markets": len(books),
            "marked_seen": len(marks.seen),
            "cleared": len(marks.unseen),
        },
    )


# --- 4. store ----------------------------------------------------------------------------------


def store_rebuilt(*, rebuild: bool, wait_s: float, sleep: Callable[[float], None] = time.sleep) -> StepReport:
    """Wait for the reducers' store mark (they rebuild Redis from Kafka when it is missing),
    after removing it when ``rebuild`` is asked."""
    client = redis_shared()
    if rebuild:
        store_mark_remove(client)
    deadline = time.monotonic() + wait_s
    mark = store_mark_read(client)
    while mark is None and time.monotonic() < deadline:
        sleep(0.5)
        mark = store_mark_read(client)
    if mark is None:
        return StepReport(
            INCOMPLETE,
            {},
            "the store has no mark: the reducers rebuild it from Kafka as soon as they run (make up)",
        )
    return StepReport(DONE, {"mark": mark})
