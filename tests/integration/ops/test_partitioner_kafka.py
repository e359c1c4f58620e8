"""The pure partitioners place keys exactly where librdkafka's producer puts them."""

from __future__ import annotations

import uuid

import pytest

from reducers.partitioning import market_partition
from reducers.topics import TopicSpec, namespace

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def twelve_partitions(kafka_topics):
    from odds.core.kafka import admin_client, topics_ensure

    name = f"{namespace()}.partitioner-check.{uuid.uuid4().hex[:6]}"
    topics_ensure(specs=[TopicSpec(name, 12)])
    yield name
    for future in admin_client().delete_topics([name], operation_timeout=30).values():
        future.result()


def _placements(topic: str, partitioner: str | None) -> dict[int, int]:
    from odds.core.kafka import producer_create

    extra = {"partitioner": partitioner} if partitioner else {}
    producer = producer_create(**{"linger.ms": 0, **extra})
    placed: dict[int, int] = {}

    def delivered(err, msg) -> None:
        assert err is None, err
        placed[int(msg.key())] = msg.partition()

    for market_id in range(1, 201):
        producer.produce(topic, key=str(market_id).encode(), value=b"x", on_delivery=delivered)
    assert producer.flush(30) == 0
    return placed


def test_murmur2_partition_matches_librdkafkas_murmur2_random(twelve_partitions):
    placed = _placements(twelve_partitions, "murmur2_random")
    assert placed == {m: market_partition(m, 12, partitioner="murmur2_random") for m in placed}


def test_crc32_partition_matches_librdkafkas_consistent_random(twelve_partitions):
    placed = _placements(twelve_partitions, "consistent_random")
    assert placed == {m: market_partition(m, 12, partitioner="consistent_random") for m in placed}
