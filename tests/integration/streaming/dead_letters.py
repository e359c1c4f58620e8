"""Finding a record among a dead-letter topic's recent records."""

from __future__ import annotations

import time

from confluent_kafka import OFFSET_BEGINNING, Message, TopicPartition

from reducers import topics
from tests.conftest import wait_for
from tests.integration.topic_records import topic_reader


def dead_letter_of(value: bytes | None, *, source: str | None = None, key: bytes | None = None, within_s: float = 300):
    """The dead letter of ``source`` (default: the price topic) carrying ``value`` (and ``key``,
    when given), among those of the last ``within_s`` seconds (other tests dead-letter records
    too; the partitions are assigned, not joined as a group)."""
    topic = topics.dead_letter_of(source or topics.prices())
    consumer = topic_reader("dlq-test")
    metadata = consumer.list_topics(topic, timeout=10).topics[topic]
    since_ms = int((time.time() - within_s) * 1000)
    starts = consumer.offsets_for_times([TopicPartition(topic, p, since_ms) for p in metadata.partitions], timeout=10)
    consumer.assign(
        [TopicPartition(t.topic, t.partition, t.offset if t.offset >= 0 else OFFSET_BEGINNING) for t in starts]
    )

    def matches(message: Message) -> bool:
        return message.error() is None and message.value() == value and (key is None or message.key() == key)

    def found() -> list[Message] | None:
        # Everything that has arrived, not one record per poll: other tests' dead letters come first.
        # Wrapped in a list: a Message's truth is its value's length, and a null value is a dead
        # letter too.
        for message in consumer.consume(1000, timeout=0.5):
            if matches(message):
                return [message]
        return None

    try:
        return wait_for(found, what=f"the dead letter of {value!r} on {topic}")[0]
    finally:
        consumer.close()
