"""Dead-letter replay on the ops page, against the real broker and Redis: an operator selects a
topic's dead letters by reason and time, previews them, and replays them to their source topic
(key kept, headers naming the first failure) or discards them, with a reason; each is handled
once, every action is recorded with who, when and how many. A replayed command that fails again
in the real command reducer (its batch processor, without Spark) is dead-lettered again with
its replay count, counted, and after ``MAX_REPLAYS`` can only be discarded."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from confluent_kafka import TopicPartition
from django.conf import settings

from odds.core.kafka import reader_create
from odds.ops.models import DeadLetterAction, DeadLetterHandled
from reducers import topics
from reducers.dead_letters import (
    COUNTER_AGAIN,
    HEADER_FIRST_ORIGIN,
    HEADER_FIRST_REASON,
    HEADER_REPLAY,
    HEADER_REPLAYS,
    MAX_REPLAYS,
)
from spark.jobs.commands import CommandBatchProcessor
from spark.sinks.dead_letter import dead_letter_sink
from store import keys

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(300)]


def end_offsets(topic: str) -> dict[int, int]:
    reader = reader_create()
    try:
        metadata = reader.list_topics(topic, timeout=10).topics[topic]
        return {p: reader.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in metadata.partitions}
    finally:
        reader.close()


def read_from(topic: str, starts: dict[int, int], *, count: int, timeout: float = 20) -> list[Any]:
    """``count`` records of ``topic`` written after ``starts`` (its end offsets before)."""
    reader = reader_create()
    found: list[Any] = []
    try:
        reader.assign([TopicPartition(topic, p, o) for p, o in starts.items()])
        deadline = time.monotonic() + timeout
        while len(found) < count and time.monotonic() < deadline:
            found += [m for m in reader.consume(num_messages=100, timeout=0.3) if m.error() is None]
    finally:
        reader.close()
    return found


def dead_letter(
    *, value: bytes, reason: str = "undecodable", key: bytes = b"ch-1", offset: int = 7, headers=()
) -> None:
    """A commands dead letter as the command reducer's sink writes one."""
    sink = dead_letter_sink(bootstrap=settings.KAFKA_BOOTSTRAP_SERVERS, source_topic=topics.commands())
    sink.send(
        key=key,
        value=value,
        reason=reason,
        detail=f"{reason}: {value[:20]!r}",
        origin=f"{topics.commands()}/0/{offset}",
        headers=list(headers),
    )
    sink.flush()


def rows(messages: list[Any]) -> list[dict[str, Any]]:
    return [{"key": m.key(), "value": m.value(), "partition": m.partition(), "offset": m.offset()} for m in messages]


@pytest.fixture
def marker() -> str:
    """A reason no other test writes: each test selects its own dead letters."""
    return f"undecodable_{uuid.uuid4().hex[:8]}"


def preview(staff_client, **query: str) -> str:
    return staff_client.get("/ops/dead-letters", {"preview": "1", "source": "commands", **query}).content.decode()


def act(staff_client, action: str, note: str, page: str, **form: str):
    ends = page.split('name="ends" value="', 1)[1].split('"', 1)[0]
    return staff_client.post(
        "/ops/dead-letters/act",
        {"source": "commands", "action": action, "note": note, "ends": ends, **form},
        follow=True,
    )


def test_replayed_dead_letters_reach_their_source_topic_with_their_key_and_first_failure(
    staff_client, staff, kafka_topics, redis_client, marker
):
    for n in range(3):
        dead_letter(value=b"{not json " + str(n).encode(), reason=marker, offset=10 + n)
    page = preview(staff_client, reason=marker)
    assert 'data-selected="3" data-replayable="3"' in page
    before = end_offsets(topics.commands())

    answer = act(staff_client, "replay", "command decoder fixed", page, reason=marker)
    assert "Replayed 3 commands dead letters to" in answer.content.decode()

    sent = read_from(topics.commands(), before, count=3)
    assert sorted(m.value() for m in sent) == [b"{not json 0", b"{not json 1", b"{not json 2"]
    action = DeadLetterAction.objects.get(reason=marker)
    for message in sent:
        headers = dict(message.headers())
        assert message.key() == b"ch-1"
        assert headers[HEADER_FIRST_REASON] == marker.encode()
        assert headers[HEADER_FIRST_ORIGIN].startswith(f"{topics.commands()}/0/1".encode())
        assert headers[HEADER_REPLAYS] == b"1"
        assert headers[HEADER_REPLAY] == str(action.pk).encode()
    assert (action.kind, action.by, action.handled, action.selected, action.note) == (
        "replay",
        staff,
        3,
        3,
        "command decoder fixed",
    )
    assert set(DeadLetterHandled.objects.filter(action=action).values_list("sent_to", flat=True)) == {
        f"{m.topic()}/{m.partition()}/{m.offset()}" for m in sent
    }
    # Each is handled once: the same selection now holds none, and a second replay does nothing.
    again = preview(staff_client, reason=marker)
    assert 'data-selected="0"' in again
    assert "3 more were replayed or discarded before" in again
    assert "Nothing was done" in act(staff_client, "replay", "again", page, reason=marker).content.decode()
    assert (
        "replayed" in staff_client.get("/ops/dead-letters", {"source": "commands", "reason": marker}).content.decode()
    )


def test_a_replayed_record_failing_again_is_dead_lettered_again_counted_and_stops_at_the_limit(
    staff_client, own_namespace, redis_client, marker
):
    processor = CommandBatchProcessor(
        redis_client=redis_client,
        dead_letters=dead_letter_sink(bootstrap=settings.KAFKA_BOOTSTRAP_SERVERS, source_topic=topics.commands()),
    )
    dead_letter(value=b"{still broken", reason=marker)
    again_before = int(redis_client.hget(keys.counter(COUNTER_AGAIN), "command_bad_json") or 0)
    for round_ in range(1, MAX_REPLAYS + 1):
        # The previous round's dead letter has reason "bad_json" (the reducer's), its first
        # failure the original's: select it by time from now on.
        since = (datetime.now(UTC) - timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M")
        reason = marker if round_ == 1 else "bad_json"
        dlq_before = end_offsets(topics.commands_dead_letter())
        page = preview(staff_client, reason=reason, since=since)
        assert 'data-replayable="1"' in page, round_
        source_before = end_offsets(topics.commands())
        assert (
            "Replayed 1 commands dead letter"
            in act(staff_client, "replay", f"round {round_}", page, reason=reason, since=since).content.decode()
        )
        (replayed,) = read_from(topics.commands(), source_before, count=1)
        # The command reducer fails on it again: a new dead letter naming the first failure.
        assert processor.process_rows(rows([replayed])) == {"rejected": 1}
        (redead,) = read_from(topics.commands_dead_letter(), dlq_before, count=1)
        headers = dict(redead.headers())
        assert headers[HEADER_FIRST_REASON] == marker.encode()
        assert headers[HEADER_REPLAYS] == str(round_).encode()
        assert headers["origin"] == (f"{replayed.topic()}/{replayed.partition()}/{replayed.offset()}".encode())
    assert int(redis_client.hget(keys.counter(COUNTER_AGAIN), "command_bad_json")) == again_before + MAX_REPLAYS
    since = (datetime.now(UTC) - timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M")
    page = preview(staff_client, reason="bad_json", since=since)
    assert 'data-replayable="0"' in page
    assert "discard only" in page
    refused = act(staff_client, "replay", "once more", page, reason="bad_json", since=since)
    assert "Nothing was done: no dead letter of this selection may be replayed" in refused.content.decode()
    discarded = act(staff_client, "discard", "producer sends garbage; dropped", page, reason="bad_json", since=since)
    assert "Discarded" in discarded.content.decode()


def test_discarded_dead_letters_are_recorded_with_the_reason_and_never_sent(staff_client, staff, kafka_topics, marker):
    dead_letter(value=b"{junk 1", reason=marker)
    dead_letter(value=b"{junk 2", reason=marker)
    page = preview(staff_client, reason=marker)
    before = end_offsets(topics.commands())
    answer = act(staff_client, "discard", "test traffic from a load tool", page, reason=marker)
    assert "Discarded 2 commands dead letters" in answer.content.decode()
    assert read_from(topics.commands(), before, count=1, timeout=2) == []
    action = DeadLetterAction.objects.get(reason=marker)
    assert (action.kind, action.by, action.handled, action.note) == (
        "discard",
        staff,
        2,
        "test traffic from a load tool",
    )
    page = staff_client.get("/ops/dead-letters").content.decode()
    assert "test traffic from a load tool" in page


def test_an_action_needs_a_reason_and_a_topic(staff_client, kafka_topics, marker):
    dead_letter(value=b"{x", reason=marker)
    page = preview(staff_client, reason=marker)
    assert "say why you replay" in act(staff_client, "replay", " ", page, reason=marker).content.decode()
    answer = staff_client.post(
        "/ops/dead-letters/act", {"source": "nope", "action": "replay", "note": "x"}, follow=True
    )
    assert "choose the topic of the dead letters" in answer.content.decode()
    assert not DeadLetterAction.objects.filter(reason=marker).exists()


def test_records_written_after_the_preview_are_not_replayed_unseen(staff_client, kafka_topics, marker):
    dead_letter(value=b"{seen", reason=marker)
    page = preview(staff_client, reason=marker)
    dead_letter(value=b"{arrived after the preview", reason=marker)
    before = end_offsets(topics.commands())
    assert (
        "Replayed 1 commands dead letter" in act(staff_client, "replay", "fixed", page, reason=marker).content.decode()
    )
    (sent,) = read_from(topics.commands(), before, count=1)
    assert sent.value() == b"{seen"
    assert 'data-selected="1"' in preview(staff_client, reason=marker)


def test_a_selection_holds_at_most_its_limit_oldest_first_and_says_so(kafka_topics, marker):
    from odds.ops.selectors.dead_letters import dead_letters_select

    for n in range(3):
        dead_letter(value=b"{limit " + str(n).encode(), reason=marker)
    selection = dead_letters_select(source="commands", reason=marker, limit=2)
    assert [r.value for r in selection.records] == [b"{limit 0", b"{limit 1"]
    assert (selection.truncated, selection.incomplete) == (True, False)
    everything = dead_letters_select(source="commands", reason=marker)
    assert (len(everything.records), everything.truncated, everything.incomplete) == (3, False, False)
