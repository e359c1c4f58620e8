"""Every Redis and Kafka client of the platform's processes and benchmarks comes from one
factory, ``store/clients.py``, so a setting (Sentinel URLs, acks, commit policy) is
changed in one place."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaException

from store.clients import CONSUMER_DEFAULTS, kafka_consumer

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("odds", "spark", "reducers", "webapp", "bench")
FACTORY = ROOT / "reducers" / "connections.py"
# Calls that build a client, by how they are written: only the factory may make them.
KAFKA_CLIENTS = {"Consumer", "Producer"}
REDIS_CLIENTS = {"Redis", "StrictRedis"}


def _constructions(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if not isinstance(node, ast.Call):
            continue
        called = ast.unparse(node.func)
        last = called.rsplit(".", 1)[-1]
        owner = called.rsplit(".", 2)[-2] if "." in called else ""
        if last in KAFKA_CLIENTS or last in REDIS_CLIENTS or (last == "from_url" and owner in REDIS_CLIENTS):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno} {called}(…)")
    return found


def test_no_process_or_benchmark_builds_its_own_redis_or_kafka_client():
    stray = [
        hit
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if path != FACTORY and "migrations" not in path.parts
        for hit in _constructions(path)
    ]
    assert stray == [], "build these through store/clients.py:\n" + "\n".join(stray)


def test_the_walk_finds_a_client_built_by_hand():
    sample = ROOT / "bench" / "_sample_for_walk.py"
    sample.write_text(
        "import redis\nfrom confluent_kafka import Consumer\n"
        "c = redis.Redis.from_url('redis://x')\nk = Consumer({'group.id': 'g'})\n"
    )
    try:
        hits = _constructions(sample)
    finally:
        sample.unlink()
    assert [hit.split(" ", 1)[1] for hit in hits] == ["redis.Redis.from_url(…)", "Consumer(…)"]


def test_a_consumer_commits_only_what_it_is_told():
    assert CONSUMER_DEFAULTS["enable.auto.commit"] is False
    assert CONSUMER_DEFAULTS["enable.auto.offset.store"] is False
    consumer = kafka_consumer("127.0.0.1:1", "factory-test", **{"fetch.wait.max.ms": 50})
    try:
        assert isinstance(consumer, Consumer)
    finally:
        consumer.close()


def test_a_consumer_setting_librdkafka_does_not_know_is_refused():
    with pytest.raises(KafkaException):
        kafka_consumer("127.0.0.1:1", "factory-test", **{"no.such.setting": 1})
