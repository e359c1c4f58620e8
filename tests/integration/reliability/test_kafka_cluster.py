"""Kafka as a cluster: three brokers, every topic of the platform replicated three times with two
in sync required, the feed's producer settings (acks=all, idempotent), and the Spark reducers
reading from the cluster. The leader of a price partition is killed mid-stream: leadership
moves, producing carries on, every record the producer was told is written is in the topic
exactly once, in order per market, the reducers carry on and end with the last price of every
market, and the lag dashboard's Kafka figures show the lost broker."""

from __future__ import annotations

import itertools
import subprocess
import sys
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Iterator

import pytest
from confluent_kafka import Consumer, KafkaError, Message, Producer

from odds.core.metrics import kafka_health
from reducers import topics
from reducers.queries import QUERIES as REDUCER_QUERIES
from reducers.schemas import decode_price_update
from store import keys
from store.clients import PRODUCER_DEFAULTS, redis_client
from tests.conftest import ROOT, wait_for
from tests.factories import market_ids_define, raw_price_update
from tests.integration.reliability.conftest import Stack
from tests.integration.reliability.kafka_cluster import QUIET, KafkaCluster

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

MARKETS = list(range(440_001, 440_031))
# the feed publishes about twenty sequences a second; steady means within about five seconds of it
STEADY_LAG = 100


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    cluster = KafkaCluster(tmp_path_factory.mktemp("kafka-cluster"))
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def stack(services, cluster, tmp_path) -> Iterator[Stack]:
    """A namespace whose topics live on the cluster (replication 3, min in sync 2); Redis is the
    shared one."""
    from django.conf import settings

    name = f"c{uuid.uuid4().hex[:8]}"
    stack = Stack(tmp_path, kafka=cluster.bootstrap, redis=settings.REDIS_URL, namespace=name)
    (stack.var / "log").mkdir(parents=True, exist_ok=True)
    env = stack.env(KAFKA_REPLICATION_FACTOR="3", KAFKA_MIN_INSYNC_REPLICAS="2")
    subprocess.run([sys.executable, "manage.py", "create_topics"], cwd=ROOT, env=env, check=True, capture_output=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SPORTSBOOK_NAMESPACE", name)
        try:
            yield stack
        finally:
            stack.stop_processes()
            client = redis_client(settings.REDIS_URL)
            for key in client.scan_iter(match=f"{name}:*", count=1000):
                client.delete(key)


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
        self.last_seq = 0

    def _delivered(self, err, msg) -> None:
        if err is not None:
            self.failed.append(str(err))
            return
        record = decode_price_update(msg.value())
        self.acked.append((record.market_id, record.seq))
        self.acked_at.append(time.monotonic())

    def run(self) -> None:
        seq = 0
        while not self.stopping.is_set():
            seq += 1
            self.last_seq = seq
            for market_id in MARKETS:
                update = raw_price_update(market_id=market_id, seq=seq, prices=((1, f"{2 + seq % 50 / 100:.2f}"),))
                self.producer.produce(
                    topics.prices(), key=update.key(), value=update.encode(), on_delivery=self._delivered
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
    record = decode_price_update(message.value())
    return int(message.partition() or 0), record.market_id, record.seq


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
    consumer.subscribe([topics.prices()])
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


@pytest.fixture
def feed(cluster) -> Iterator[Feed]:
    """The test's feed, started by the test and stopped here whatever happened: a failed test
    must not leave it producing into a cluster that is being stopped."""
    feed = Feed(cluster.bootstrap)
    try:
        yield feed
    finally:
        feed.stopping.set()
        if feed.is_alive():
            feed.join(180)


def _behind(client, feed: Feed) -> int:
    """How many sequences the furthest-behind market's stored price trails the feed."""
    return feed.last_seq - min(stored_seq(client, m) for m in MARKETS)


def stored_seq(client, market_id: int) -> int:
    raw = client.hget(keys.market_state(market_id), "seq")
    return int(raw) if raw is not None else 0


def test_killing_a_partition_leader_mid_stream_loses_and_duplicates_nothing(cluster, stack, feed, tmp_path):
    client = redis_client(stack.redis)
    market_ids_define(client, *MARKETS)
    reducers = stack.reducers(tmp_path / "checkpoints", SPARK_QUERY_RESTART_BASE_S="0.5", SPARK_QUERY_RESTART_MAX_S="2")
    reducers.start()
    # The feed starts once the reducers are settled: every query started, the store's first mark
    # written (the rebuild from Kafka done) and a first batch of the price query reported. Started
    # at the first query's heartbeat, on a loaded machine the feed ran ahead for a minute or more
    # while the other queries started, and the price query's first batch was that whole backlog.
    wait_for(
        lambda: (
            client.hlen(keys.reducer_seen()) >= len(REDUCER_QUERIES)
            and client.get(keys.store_mark())
            and client.get(keys.reducer_progress("prices"))
        ),
        timeout=240,
        what="the reducers running, the store marked and the price query's first batch",
        detail=reducers.tail,
    )
    admin = cluster.admin()
    healthy = wait_for(
        lambda: (h := kafka_health(admin=admin))["brokers"] == 3 and h,
        timeout=30,
        what="the admin client to know every broker",
    )
    assert (healthy["under_replicated"], healthy["offline"]) == (0, 0)
    assert healthy["partitions"] == sum(t.partitions for t in topics.all_topics())

    feed.start()
    # Steady before the crash: the price query keeps up with the feed, every market within
    # STEADY_LAG sequences of it (about five seconds on a machine this test shares with others).
    started = time.monotonic()
    try:
        wait_for(
            lambda: client.get(keys.reducer_progress("prices")) and _behind(client, feed) <= STEADY_LAG,
            timeout=180,
            what="the price query keeping up with the feed",
        )
    except BaseException:
        print(f"\nthe furthest-behind market trails the feed by {_behind(client, feed)} sequences\n{reducers.tail()}")
        raise
    steady_s = time.monotonic() - started
    time.sleep(2)
    victim = cluster.leader_of(topics.prices(), 0)
    assert victim in cluster.nodes
    acked_before = len(feed.acked)
    seq_at_kill = feed.last_seq
    killed_at = time.monotonic()
    cluster.kill(victim)

    def new_leader() -> int | None:
        try:
            leader = cluster.leader_of(topics.prices(), 0)
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
    # The dashboard's Kafka figures show the event: a broker gone, its partitions short of a replica.
    degraded = wait_for(
        lambda: (h := kafka_health(admin=admin))["brokers"] == 2 and h["under_replicated"] > 0 and h,
        timeout=30,
        what="the dashboard to show the lost broker",
    )
    wait_for(
        lambda: all(stored_seq(client, m) > seq_at_kill for m in MARKETS),
        timeout=90,
        what="the reducers applying prices produced after the crash",
    )
    applied_again_s = time.monotonic() - killed_at
    time.sleep(2)
    feed.stopping.set()
    feed.join(180)
    assert not feed.is_alive()

    # producing carried on after the crash, and nothing the producer sent failed
    assert feed.failed == []
    assert len(feed.acked) == feed.produced
    acked_after_kill = [at for at in feed.acked_at if at > killed_at]
    assert len(acked_after_kill) > len(MARKETS)
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
    # the reducers end on the last price of every market (each (market, seq) applied once in effect)
    wait_for(
        lambda: all(stored_seq(client, m) == feed.last_seq for m in MARKETS),
        timeout=90,
        what="the reducers holding the last price of every market",
    )
    assert reducers.alive(), reducers.tail()
    around = sorted(at for at in feed.acked_at if at >= killed_at - 1)
    pause_s = max((b - a for a, b in itertools.pairwise(around)), default=0.0)
    print(
        f"\nkafka cluster: the price query kept up with the feed {steady_s:.1f} s after it started; "
        f"leader {victim} of partition 0 killed; new leader {leader} after {failover_s:.2f} s; "
        f"{len(feed.acked)} records acknowledged, {len(written)} read, lost {len(lost)}, duplicated {duplicates}; "
        f"longest pause between acknowledgements around the crash {pause_s * 1000:.0f} ms; reducers applied "
        f"prices produced after the crash within {applied_again_s:.1f} s; dashboard: {degraded['brokers']} brokers, "
        f"{degraded['under_replicated']} of {degraded['partitions']} partitions under-replicated"
    )
