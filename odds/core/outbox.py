"""Transactional outbox: write Kafka records with the change they announce; relay them later.

``outbox_enqueue`` must run inside the transaction of the change. ``outbox_relay`` produces
pending rows in id order with the idempotent ``acks=all`` producer and marks the delivered ones
sent. One relay works at a time (a PostgreSQL advisory lock), so records of one key leave in the
order they were written. Delivery is at least once: a crash after the produce and before the
commit of ``sent_at`` sends the row again, and consumers de-duplicate.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from confluent_kafka import KafkaError, Message, Producer
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from odds.core.kafka import producer_shared
from odds.models import OutboxMessage

log = logging.getLogger(__name__)

# Any fixed 64-bit number, the same in every process: the id of the relay's advisory lock.
RELAY_LOCK_ID = 0x5B0_0B0C5


@dataclass
class RelayResult:
    sent: int = 0
    failed: int = 0
    busy: bool = False
    errors: list[str] = field(default_factory=list)


def outbox_enqueue(*, topic: str, key: bytes, value: bytes | None) -> OutboxMessage:
    """Queue a record for Kafka as part of the current transaction (``value=None`` is a tombstone)."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("outbox_enqueue must run inside the transaction of the change it announces")
    return OutboxMessage.objects.create(topic=topic, key=key, value=value)


def outbox_pending_count() -> int:
    return OutboxMessage.objects.filter(sent_at__isnull=True).count()


def outbox_relay(*, producer: Producer | None = None, batch_size: int = 500, timeout: float = 10.0) -> RelayResult:
    """Produce one batch of pending records and mark the acknowledged ones sent.

    Returns at once with ``busy`` set when another relay holds the lock.
    """
    producer = producer or producer_shared()
    result = RelayResult()
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_xact_lock(%s)", [RELAY_LOCK_ID])
            if not cursor.fetchone()[0]:
                result.busy = True
                return result
        rows = list(OutboxMessage.objects.filter(sent_at__isnull=True).order_by("id")[:batch_size])
        if not rows:
            return result
        delivered: list[int] = []
        failures: dict[int, str] = {}

        def on_delivery(row_id: int) -> Callable[[KafkaError | None, Message], None]:
            def callback(error: KafkaError | None, _message: Message) -> None:
                if error is None:
                    delivered.append(row_id)
                else:
                    failures[row_id] = str(error)[:255]

            return callback

        for row in rows:
            producer.produce(
                row.topic,
                key=bytes(row.key),
                value=bytes(row.value) if row.value is not None else None,
                on_delivery=on_delivery(row.id),
            )
            producer.poll(0)
        deadline = time.monotonic() + timeout
        while len(delivered) + len(failures) < len(rows) and time.monotonic() < deadline:
            producer.flush(max(0.0, deadline - time.monotonic()))
        if delivered:
            OutboxMessage.objects.filter(id__in=delivered).update(sent_at=timezone.now(), attempts=F("attempts") + 1)
        for row_id, error in failures.items():
            OutboxMessage.objects.filter(id=row_id).update(attempts=F("attempts") + 1, last_error=error)
        result.sent = len(delivered)
        result.failed = len(rows) - len(delivered)
        result.errors = sorted(set(failures.values()))
    if result.failed:
        log.warning("outbox relay: %d of %d records not acknowledged: %s", result.failed, len(rows), result.errors)
    return result


def outbox_drain(*, budget_s: float = 0.9, batch_size: int = 500) -> RelayResult:
    """Relay batches until nothing is pending, another relay is busy, or the time budget is spent."""
    total = RelayResult()
    started = time.monotonic()
    while time.monotonic() - started < budget_s:
        batch = outbox_relay(batch_size=batch_size)
        total.sent += batch.sent
        total.failed += batch.failed
        total.errors += batch.errors
        total.busy = batch.busy
        if batch.busy or batch.failed or batch.sent < batch_size:
            break
    return total
