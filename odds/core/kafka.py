"""Kafka clients shared by the web processes, the feed and the management commands."""

from __future__ import annotations

import functools
import threading
import time
from typing import Any

from confluent_kafka import Consumer, Message, Producer
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic
from django.conf import settings

from reducers.topics import TopicSpec, all_topics
from store.clients import kafka_consumer, kafka_producer


def message_headers(message: Message) -> dict[str, bytes | None]:
    """A consumed record's headers by name (a header without a value: None)."""
    # confluent-kafka's stubs type headers() as a str; it returns (name, bytes) pairs.
    pairs: list[tuple[str, Any]] = list(message.headers() or [])  # type: ignore[arg-type]
    return {str(name): value if isinstance(value, bytes) else None for name, value in pairs}


def producer_create(**overrides: Any) -> Producer:
    """An idempotent producer (acks=all), batched for throughput, to the configured brokers."""
    return kafka_producer(settings.KAFKA_BOOTSTRAP_SERVERS, **overrides)


READER_GROUP = "sportsbook-reader"


def reader_create(**overrides: Any) -> Consumer:
    """A consumer that reads partitions it assigns itself: it joins no group and commits
    nothing, so reading never moves anyone's offsets."""
    return kafka_consumer(settings.KAFKA_BOOTSTRAP_SERVERS, READER_GROUP, **{"fetch.wait.max.ms": 50, **overrides})


@functools.cache
def admin_client() -> AdminClient:
    return AdminClient({"bootstrap.servers": settings.KAFKA_BOOTSTRAP_SERVERS})


def topic_config(spec: TopicSpec) -> dict[str, str]:
    config = {
        "cleanup.policy": "compact" if spec.compacted else "delete",
        "min.insync.replicas": str(settings.KAFKA_MIN_INSYNC_REPLICAS),
    }
    if spec.retention_ms is not None:
        config["retention.ms"] = str(spec.retention_ms)
    if spec.compacted:
        config["min.cleanable.dirty.ratio"] = "0.1"
        config["delete.retention.ms"] = str(3600 * 1000)
    return config


def topics_ensure(*, specs: list[TopicSpec] | None = None, timeout: float = 30.0) -> dict[str, str]:
    """Create missing topics and grow partition counts that are too small. Idempotent.

    Returns topic name → what happened ("created", "exists", "partitions increased to N").
    """
    from confluent_kafka.admin import NewPartitions

    admin = admin_client()
    specs = specs if specs is not None else all_topics()
    existing = admin.list_topics(timeout=timeout).topics
    outcome: dict[str, str] = {}
    to_create = [
        NewTopic(
            s.name,
            num_partitions=s.partitions,
            replication_factor=settings.KAFKA_REPLICATION_FACTOR,
            config=topic_config(s),
        )
        for s in specs
        if s.name not in existing
    ]
    if to_create:
        for name, future in admin.create_topics(to_create, operation_timeout=timeout).items():
            try:
                future.result()
                outcome[name] = "created"
            except Exception as exc:  # a concurrent creator won the race
                if "TOPIC_ALREADY_EXISTS" not in str(exc):
                    raise
                outcome[name] = "exists"
    grow = [
        NewPartitions(s.name, s.partitions)
        for s in specs
        if s.name in existing and len(existing[s.name].partitions) < s.partitions
    ]
    if grow:
        for name, future in admin.create_partitions(grow).items():
            future.result()
            outcome[name] = f"partitions increased to {next(s.partitions for s in specs if s.name == name)}"
    for s in specs:
        outcome.setdefault(s.name, "exists")
    changed = [name for name, what in outcome.items() if what != "exists"]
    if changed:
        partitions_led_wait(admin, changed, timeout=timeout)
    return outcome


def partitions_led_wait(admin: AdminClient, names: list[str], *, timeout: float) -> None:
    """Wait until every partition of ``names`` has a leader: a topic just created or grown may
    refuse reads of its offsets and records produced to it (NOT_LEADER_FOR_PARTITION) until
    then. Raises ``TimeoutError`` naming the partitions still without one."""
    deadline = time.monotonic() + timeout
    while True:
        known = admin.list_topics(timeout=timeout).topics
        leaderless = [
            f"{name}[{p.id}]" if p is not None else name
            for name in names
            for p in (known[name].partitions.values() if name in known and known[name].partitions else [None])
            if p is None or p.leader < 0
        ]
        if not leaderless:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"partitions without a leader after {timeout:.0f} s: {', '.join(leaderless[:10])}")
        time.sleep(0.1)


def topic_describe(name: str) -> dict[str, str]:
    resource = ConfigResource(ConfigResource.Type.TOPIC, name)
    result = admin_client().describe_configs([resource])[resource].result()
    return {k: v.value for k, v in result.items()}


_shared_lock = threading.Lock()


@functools.cache
def _shared(linger_ms: int) -> Producer:
    return producer_create(**{"linger.ms": linger_ms})


def producer_shared(*, linger_ms: int = 1) -> Producer:
    """One producer per process (and linger) for records produced from request handlers, tasks
    and relays. Made once under a lock: Django runs concurrent requests' views in threads of
    their own, and two first requests each made one; a caller that wrote to one and flushed the
    other was told its record was sent and lost it with the producer it had written it to."""
    with _shared_lock:
        return _shared(linger_ms)
