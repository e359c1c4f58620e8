"""A micro-batch's Kafka offset ranges as read from Spark's plan (spark/sources.py)."""

from __future__ import annotations

from dataclasses import dataclass

from spark.sources import OffsetRange, _offset_range


@dataclass
class Where:
    name: str
    number: int

    def topic(self) -> str:
        return self.name

    def partition(self) -> int:
        return self.number


@dataclass
class SparkRange:
    """Stands for Spark's ``KafkaOffsetRange`` as py4j hands it over: its text and its fields."""

    text: str
    where: Where
    start: int
    until: int

    def toString(self) -> str:  # noqa: N802 (the Java method's name)
        return self.text

    def topicPartition(self) -> Where:  # noqa: N802
        return self.where

    def fromOffset(self) -> int:  # noqa: N802
        return self.start

    def untilOffset(self) -> int:  # noqa: N802
        return self.until


def test_a_range_is_read_from_its_text_whatever_the_topic_is_called():
    # A topic's name may itself hold dashes and digits: the partition is the number after the last.
    for topic in ("sb.prices", "test-1.prices-2", "p"):
        spark_range = SparkRange(f"KafkaOffsetRange({topic}-11,120,4567,None)", Where("unused", -1), -1, -1)
        assert _offset_range(spark_range) == OffsetRange(topic, 11, 120, 4567)


def test_a_range_whose_text_is_not_the_expected_one_is_read_field_by_field():
    spark_range = SparkRange("KafkaOffsetRange@1f2e3d", Where("sb.prices", 3), 10, 25)
    assert _offset_range(spark_range) == OffsetRange("sb.prices", 3, 10, 25)
