"""Reading a whole topic back in a test: every partition from its start to where it ended when the
read began, assigned rather than joined as a group (so no rebalance waits)."""

from __future__ import annotations

import time
import uuid

from confluent_kafka import OFFSET_BEGINNING, Consumer, Message, TopicPartition
from django.conf import settings


def topic_reader(purpose: str) -> Consumer:
    """A consumer for partitions a test assigns itself: a group of its own (named after
    ``purpose``) that commits nothing."""
    return Consumer(
        {
            "bootstrap.servers": settings.KAFKA_BOOTSTRAP_SERVERS,
            "group.id": f"{purpose}-{uuid.uuid4().hex}",
            "enable.auto.commit": False,
        }
    )


def records_from_start(topic: str, *, timeout_s: float = 30) -> list[Message]:
    """Every record of ``topic`` up to each partition's end when called (errors left out)."""
    consumer = topic_reader("read-back")
    try:
        partitions = consumer.list_topics(topic, timeout=10).topics[topic].partitions
        ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in partitions}
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
        left = {p for p, end in ends.items() if end > 0}
        records: list[Message] = []
        deadline = time.monotonic() + timeout_s
        while left:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{topic}: partitions {sorted(left)} not read to their end in {timeout_s} s")
            records += [m for m in consumer.consume(num_messages=10_000, timeout=0.5) if m.error() is None]
            positions = consumer.position([TopicPartition(topic, p) for p in left])
            left -= {tp.partition for tp in positions if tp.offset >= ends[tp.partition]}
        return records
    finally:
        consumer.close()
