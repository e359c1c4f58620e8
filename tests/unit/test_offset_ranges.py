"""A micro-batch's Kafka offset ranges as read from Spark's plan (spark/sources.py)."""

from __future__ import annotations

from types import SimpleNamespace

from spark.sources import OffsetRange, _offset_range


def spark_range(text: str, *, topic: str, partition: int, start: int, until: int) -> SimpleNamespace:
    """Stands for Spark's ``KafkaOffsetRange`` as py4j hands it over: its text and its fields,
    each a method under its Java name."""
    where = SimpleNamespace(topic=lambda: topic, partition=lambda: partition)
    return SimpleNamespace(
        toString=lambda: text,
        topicPartition=lambda: where,
        fromOffset=lambda: start,
        untilOffset=lambda: until,
    )


def test_a_range_is_read_from_its_text_whatever_the_topic_is_called():
    # A topic's name may itself hold dashes and digits: the partition is the number after the last.
    for topic in ("sb.prices", "test-1.prices-2", "p"):
        offsets = spark_range(
            f"KafkaOffsetRange({topic}-11,120,4567,None)", topic="unused", partition=-1, start=-1, until=-1
        )
        assert _offset_range(offsets) == OffsetRange(topic, 11, 120, 4567)


def test_a_range_whose_text_is_not_the_expected_one_is_read_field_by_field():
    offsets = spark_range("KafkaOffsetRange@1f2e3d", topic="sb.prices", partition=3, start=10, until=25)
    assert _offset_range(offsets) == OffsetRange("sb.prices", 3, 10, 25)
