"""Kafka as a cluster: three brokers, the price topic replicated three times with two in sync
required, and the feed's producer settings (acks=all, idempotent). The leader of a price
partition is killed mid-stream: leadership moves, producing carries on, and every record the
producer was told is written is in the topic exactly once, in order per market."""

from __future__ import annotations

import itertools
import threading
import time
from collections import defaultdict

import orjson
import pytest
from confluent_kafka import Consumer, KafkaError, Message, Producer
from confluent_kafka.admin import NewTopic

from odds.services.kafka import PRODUCER_DEFAULTS
from tests.integration.reliability.kafka_cluster import QUIET, KafkaCluster

pytestmark = pytest.mark.integration

TOPIC = "cluster.prices"
PARTITIONS = 3
MARKETS = 30


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    cluster = KafkaCluster(tmp_path_factory.mktemp("kafka-cluster"))
    try:
        cluster.start()
        admin = cluster.admin()  # held until the topic exists: a dropped client cancels its requests
        futures = admin.create_topics(
            [
                NewTopic(
                    TOPIC,
                    num_partitions=PARTITIONS,
                    replication_factor=3,
                    config={"min.insync.replicas": "2"},
                )
            ]
        )
        futures[TOPIC].result(60)
        yield cluster
    finally:
        cluster.stop()


class Feed(threading.Thread):
    """Produces one price record per market in turn, each market's sequence counting up, and
    keeps what the brokers acknowledged."""

    def __init__(self, bootstrap: str) -> None:
        super().__init__(daemon=True)
        self.producer = Producer({"bootstrap.servers": bootstrap, **PRODUCER_DEFAULTS, "log_level": QUIET})
        self.acked: list[tuple[int, int]] = []
        self.failed: list[str] = []
        self.produced = 0
        self.stopping = threading.Event()
        self.acked_at: list[float] = []

    def _delivered(self, err, msg) -> None:
        if err is not None:
            self.failed.append(str(err))
            return
        record = orjson.loads(msg.value())
        self.acked.append((record["market_id"], record["seq"]))
        self.acked_at.append(time.monotonic())

    def run(self) -> None:
        seq = 0
        while not self.stopping.is_set():
            seq += 1
            for market_id in range(1, MARKETS + 1):
                value = orjson.dumps({"market_id": market_id, "seq": seq})
                self.producer.produce(
                    TOPIC,
                    key=str(market_id).encode(),
                    value=value,
                    on_delivery=self._delivered,
                )
                self.produced += 1
            self.producer.poll(0)
            time.sleep(0.05)
        self.producer.flush(120)


def _record(message: Message) -> tuple[int, int, int] | None:
    """(partition, market, sequence) of a record; ``None`` for the end of a partition."""
    error = message.error()
    if error is not None:
        assert error.code() == KafkaError._PARTITION_EOF, error
        return None
    record = orjson.loads(message.value() or b"{}")
    return int(message.partition() or 0), int(record["market_id"]), int(record["seq"])


def read_all(bootstrap: str, expected: int) -> list[tuple[int, int, int]]:
    """Every record of the topic as (partition, market, sequence), in each partition's order."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"cluster-check-{time.monotonic_ns()}",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "log_level": QUIET,
        }
    )
    consumer.subscribe([TOPIC])
    records: list[tuple[int, int, int]] = []
    deadline = time.monotonic() + 60
    try:
        while len(records) < expected and time.monotonic() < deadline:
            records.extend(r for r in map(_record, consumer.consume(1000, timeout=1)) if r is not None)
        # anything past what was acknowledged would be a duplicate: give it a moment to show
        records.extend(r for r in map(_record, consumer.consume(1000, timeout=2)) if r is not None)
    finally:
        consumer.close()
    return records


def test_killing_a_partition_leader_mid_stream_loses_and_duplicates_nothing(cluster):
    feed = Feed(cluster.bootstrap)
    feed.start()
    time.sleep(3)
    victim = cluster.leader_of(TOPIC, 0)
    assert victim in cluster.nodes
    acked_before = len(feed.acked)
    killed_at = time.monotonic()
    cluster.kill(victim)

    def new_leader() -> int | None:
        try:
            leader = cluster.leader_of(TOPIC, 0)
        except Exception:
            return None
        return leader if leader not in (victim, -1) else None

    deadline = time.monotonic() + 60
    leader = None
    while leader is None and time.monotonic() < deadline:
        leader = new_leader()
        time.sleep(0.1)
    failover_s = time.monotonic() - killed_at
    assert leader is not None, "no new leader for partition 0"
    time.sleep(4)
    feed.stopping.set()
    feed.join(180)
    assert not feed.is_alive()

    # producing carried on after the crash, and nothing the producer sent failed
    assert feed.failed == []
    assert len(feed.acked) == feed.produced
    acked_after_kill = [at for at in feed.acked_at if at > killed_at]
    assert len(acked_after_kill) > MARKETS
    assert len(feed.acked) > acked_before

    records = read_all(cluster.bootstrap_without(victim), expected=len(feed.acked))
    written = [(market, seq) for _, market, seq in records]
    duplicates = len(written) - len(set(written))
    lost = set(feed.acked) - set(written)
    assert duplicates == 0
    assert lost == set()
    # in order per market within its partition (the idempotent producer keeps the order of retries)
    by_market: dict[int, list[int]] = defaultdict(list)
    for _, market, seq in records:
        by_market[market].append(seq)
    assert all(seqs == sorted(seqs) for seqs in by_market.values())
    around = sorted(at for at in feed.acked_at if at >= killed_at - 1)
    pause_s = max((b - a for a, b in itertools.pairwise(around)), default=0.0)
    print(
        f"\nkafka cluster: leader {victim} of partition 0 killed; new leader {leader} after {failover_s:.2f} s; "
        f"{len(feed.acked)} records acknowledged, {len(written)} read, lost {len(lost)}, duplicated {duplicates}; "
        f"longest pause between acknowledgements around the crash {pause_s * 1000:.0f} ms"
    )
