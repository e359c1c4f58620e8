"""Replaying dead letters to their source topic, or discarding them, as an operator decides:
each dead letter is handled once, and each replay or discard is recorded with who, when, what
was chosen and how many."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import redis
from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction

from odds.core.kafka import producer_create
from odds.ops.models import DeadLetterAction, DeadLetterHandled
from odds.ops.selectors.dead_letters import DeadLetterRecord, dead_letters_select
from reducers.dead_letters import SOURCES, record_digest, replay_headers
from store.clients import redis_client
from store.dead_letters import ReplayLedger

FLUSH_TIMEOUT_S = 30.0


class DeadLettersConflict(Exception):
    """Some of the chosen dead letters were handled meanwhile (by another operator)."""


class NothingChosen(Exception):
    """The selection holds no dead letter that this action may handle."""


@functools.cache
def _redis() -> redis.Redis:
    return redis_client(settings.REDIS_URL)


def _action_open(
    *,
    kind: str,
    source: str,
    reason: str | None,
    since: datetime | None,
    until: datetime | None,
    note: str,
    by: User,
    chosen: Sequence[DeadLetterRecord],
    selected: int,
) -> DeadLetterAction:
    """Record the action and take each chosen dead letter for it, at once: one handled twice
    (two operators at the same moment) fails the whole action."""
    try:
        with transaction.atomic():
            action = DeadLetterAction.objects.create(
                kind=kind,
                source=source,
                reason=reason or "",
                since=since,
                until=until,
                note=note,
                by=by,
                selected=selected,
                refused=selected - len(chosen),
            )
            DeadLetterHandled.objects.bulk_create(
                DeadLetterHandled(action=action, topic=r.topic, partition=r.partition, offset=r.offset) for r in chosen
            )
    except IntegrityError as exc:
        raise DeadLettersConflict("some of these dead letters were handled meanwhile: preview them again") from exc
    return action


def dead_letters_replay(
    *,
    source: str,
    reason: str | None,
    since: datetime | None,
    until: datetime | None,
    ends: dict[int, int] | None,
    note: str,
    by: User,
) -> DeadLetterAction:
    """Send the selected dead letters back to their source topic, oldest first, each with its
    key and value unchanged and headers naming its first failure and its replay count
    (``reducers.dead_letters.replay_headers``). Those replayed ``MAX_REPLAYS`` times are left
    out (refused). The replay is marked in the ledger before anything is sent, so the reducer
    that fails on a record again dead-letters it with the same headers, counted again, and never
    sends it back by itself. ``ends`` are the preview's: nothing written after it is sent."""
    selection = dead_letters_select(source=source, reason=reason, since=since, until=until, ends=ends)
    chosen = selection.replayable
    if not chosen:
        raise NothingChosen("no dead letter of this selection may be replayed")
    action = _action_open(
        kind=DeadLetterAction.Kind.REPLAY,
        source=source,
        reason=reason,
        since=since,
        until=until,
        note=note,
        by=by,
        chosen=chosen,
        selected=len(selection.records),
    )
    topic = SOURCES[source].topic()
    headers = {r.place: replay_headers(failure=r.failure, replay_id=action.pk) for r in chosen}
    ReplayLedger(_redis()).mark(
        {record_digest(topic=topic, key=r.key, value=r.value): headers[r.place] for r in chosen}
    )
    delivered: dict[tuple[str, int, int], str] = {}
    failed: dict[tuple[str, int, int], str] = {}

    def reported(place: tuple[str, int, int]) -> Any:
        def on_delivery(error: Any, message: Any) -> None:
            if error is not None:
                failed[place] = str(error)
            else:
                delivered[place] = f"{message.topic()}/{message.partition()}/{message.offset()}"

        return on_delivery

    producer = producer_create()
    for record in chosen:
        producer.produce(
            topic,
            key=record.key,
            value=record.value,
            headers=list(headers[record.place]),
            on_delivery=reported(record.place),
        )
        producer.poll(0)
    producer.flush(FLUSH_TIMEOUT_S)
    unsent = [r for r in chosen if r.place not in delivered]
    with transaction.atomic():
        for record in chosen:
            if record.place in delivered:
                DeadLetterHandled.objects.filter(
                    topic=record.topic, partition=record.partition, offset=record.offset
                ).update(sent_to=delivered[record.place])
        if unsent:
            # Not sent: free to be replayed again.
            for record in unsent:
                DeadLetterHandled.objects.filter(
                    action=action, topic=record.topic, partition=record.partition, offset=record.offset
                ).delete()
            reasons = sorted({failed.get(r.place, "not acknowledged in time") for r in unsent})
            action.error = f"{len(unsent)} not sent: {'; '.join(reasons)}"[:2000]
        action.handled = len(delivered)
        action.save(update_fields=["handled", "error"])
    return action


def dead_letters_discard(
    *,
    source: str,
    reason: str | None,
    since: datetime | None,
    until: datetime | None,
    ends: dict[int, int] | None,
    note: str,
    by: User,
) -> DeadLetterAction:
    """Set the selected dead letters aside for good, with the reason why: they stay in their
    topic until its retention ends, marked discarded, and are never selected again."""
    selection = dead_letters_select(source=source, reason=reason, since=since, until=until, ends=ends)
    if not selection.records:
        raise NothingChosen("this selection holds no dead letter")
    action = _action_open(
        kind=DeadLetterAction.Kind.DISCARD,
        source=source,
        reason=reason,
        since=since,
        until=until,
        note=note,
        by=by,
        chosen=selection.records,
        selected=len(selection.records),
    )
    action.handled = len(selection.records)
    action.save(update_fields=["handled"])
    return action
