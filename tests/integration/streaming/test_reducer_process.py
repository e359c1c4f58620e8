"""The reducer application as operators run it (`python -m spark.jobs.reducers`), killed and restarted.

Each test runs the reducers in their own process and their own namespace, so the reducers the
rest of the suite shares cannot mask what happens when this process dies.
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path

import orjson
import psutil
import pytest
import redis as redis_lib

from bench.harness import Process, python
from reducers import topics
from reducers.queries import QUERIES
from spark.session import autogroup_niceness
from store import keys
from tests.conftest import wait_for
from tests.factories import market_ids_define, raw_price_update
from tests.integration.reliability.streaming import Feed, stored

pytestmark = pytest.mark.integration

MARKETS = list(range(400_001, 400_041))


@pytest.fixture
def namespace(services, monkeypatch) -> Iterator[str]:
    from odds.core.kafka import admin_client, topics_ensure

    name = f"r{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("SPORTSBOOK_NAMESPACE", name)
    topics_ensure()
    yield name
    admin_client().delete_topics([t.name for t in topics.all_topics()], operation_timeout=30)


def reducer_process(*, mode: str, checkpoints: Path, log: Path) -> Process:
    """The reducers' process (``python -m spark.jobs.reducers``) in ``mode``, not yet started."""
    env = {
        **os.environ,
        "SPARK_TRIGGER_MODE": mode,
        "SPARK_MASTER": "local[8]" if mode == "realtime" else "local[2]",
        "SPARK_CHECKPOINT_DIR": str(checkpoints),
        # Longer than any wait below: what real-time mode applies, it applies mid-batch.
        "SPARK_REALTIME_BATCH": "10 minutes",
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    return Process("reducers", python("-m", "spark.jobs.reducers"), env=env, log=log)


@pytest.fixture
def reducer(tmp_path) -> Iterator[Callable[[str], Process]]:
    handles: list[Process] = []

    def make(mode: str) -> Process:
        handle = reducer_process(mode=mode, checkpoints=tmp_path / "checkpoints", log=tmp_path / "reducer.log")
        handles.append(handle)
        return handle

    yield make
    for handle in handles:
        handle.stop()


def jvm_of(pid: int) -> int:
    """The JVM the reducers' process ``pid`` started."""
    jvms = [p.pid for p in psutil.Process(pid).children(recursive=True) if p.name() == "java"]
    assert jvms, f"no JVM under process {pid}"
    return jvms[0]


def assert_session_below_others(pid: int) -> None:
    """Leading a session of its own (the harness starts it so), the reducers' process puts its
    session below the others: the CPU is shared between sessions before a thread's niceness
    counts (None: the kernel does not share it by session)."""
    group = autogroup_niceness(pid)
    assert group is None or group >= 10


class Published(threading.Thread):
    """Records every market frame published on pub-sub, per market, in order."""

    def __init__(self, client: redis_lib.Redis) -> None:
        super().__init__(daemon=True)
        self.pubsub = client.pubsub(ignore_subscribe_messages=True)
        self.pubsub.psubscribe(keys.market_channel_pattern())
        self.seqs: dict[int, list[int]] = defaultdict(list)
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.is_set():
            message = self.pubsub.get_message(timeout=0.2)
            if message is not None:
                state = orjson.loads(message["data"])
                self.seqs[state["market_id"]].append(state["seq"])


@pytest.mark.parametrize("mode", ["microbatch", "realtime"])
def test_killing_the_reducers_mid_stream_loses_nothing_and_no_sequence_goes_backwards(
    namespace, reducer, producer, redis_client, mode
):
    market_ids_define(redis_client, *MARKETS)
    process = reducer(mode)
    process.start()
    wait_for(lambda: redis_client.get(keys.heartbeat("reducers")), timeout=120, what="reducers running")
    published = Published(redis_client)
    published.start()
    feed = Feed(producer, rate=200, markets=MARKETS, primed=False, seed=3)
    feed.start()
    try:
        for _ in range(2):
            time.sleep(6)
            process.kill()
            time.sleep(2)
            process.start()
        time.sleep(4)
    finally:
        feed.stopped.set()
        feed.join(30)

    wait_for(
        lambda: all(stored(redis_client, m) == feed.last[m] for m in feed.last),
        timeout=180,
        what="Redis to hold the last produced price of every market",
    )
    published.stopped.set()
    published.join(5)
    for market, seqs in published.seqs.items():
        assert seqs == sorted(set(seqs)), f"market {market}: published sequences went backwards or repeated"
    assert sum(len(s) for s in published.seqs.values()) > 0


def test_real_time_mode_applies_prices_record_by_record(namespace, reducer, producer, redis_client):
    """Spark's real-time operator allowlist is on (its default): a query it does not support
    would not start."""
    market_ids_define(redis_client, MARKETS[0])
    process = reducer("realtime")
    process.start()
    wait_for(lambda: redis_client.get(keys.heartbeat("reducers")), timeout=120, what="reducers running")
    time.sleep(5)
    for seq in (1, 2, 3):
        update = raw_price_update(market_id=MARKETS[0], seq=seq, prices=((1, f"2.{seq}0"),))
        producer.produce(topics.prices(), key=update.key(), value=update.encode())
    bad = raw_price_update(market_id=1, seq=1, prices=((0, "2.00"),)).encode()  # a selection id of 0
    producer.produce(topics.prices(), key=b"1", value=bad)
    producer.flush(10)
    # The batch runs for ten minutes, so everything below happens inside one real-time batch.
    wait_for(lambda: stored(redis_client, MARKETS[0]) == (3, "2.30"), timeout=90, what="real-time price applied")
    wait_for(lambda: redis_client.hget(keys.counter("dead_letters"), "bad_field"), what="dead letter counted")
    runs = {k.decode(): orjson.loads(v) for k, v in redis_client.hgetall(keys.reducer_queries()).items()}
    assert runs["prices"]["state"] == "running"
    assert runs["prices-apply"]["state"] == "running"
    # The JVM runs below the applier's priority, its real-time tasks (started after the session)
    # included; the reducers' own process keeps its priority.
    jvm = jvm_of(process.pid)
    tasks = {t: os.getpriority(os.PRIO_PROCESS, int(t)) for t in os.listdir(f"/proc/{jvm}/task")}
    assert min(tasks.values()) >= os.getpriority(os.PRIO_PROCESS, process.pid) + 10, tasks
    assert any("Executor task" in Path(f"/proc/{jvm}/task/{t}/comm").read_text() for t in tasks)
    assert_session_below_others(process.pid)

    # The price query's group holds what has been applied, within the real-time batch: the lag
    # tools see the four records done, not ten minutes behind.
    def committed_to_the_price_query() -> int:
        from confluent_kafka import TopicPartition
        from django.conf import settings

        from store.clients import kafka_consumer

        consumer = kafka_consumer(settings.KAFKA_BOOTSTRAP_SERVERS, topics.reducer_group("prices"))
        try:
            parts = consumer.list_topics(topics.prices(), timeout=10).topics[topics.prices()].partitions
            found = consumer.committed([TopicPartition(topics.prices(), p) for p in parts], timeout=10)
            return sum(max(0, part.offset) for part in found)
        finally:
            consumer.close()

    wait_for(lambda: committed_to_the_price_query() == 4, what="the applied offsets committed for the price query")


def test_a_subscribe_command_without_its_spec_stops_no_reducer(namespace, reducer, producer, redis_client):
    from tests.integration.streaming.dead_letters import dead_letter_of

    market_ids_define(redis_client, MARKETS[0])
    process = reducer("microbatch")
    process.start()
    # The command query reads from the latest offset it found at its first batch.
    wait_for(lambda: redis_client.get(keys.reducer_progress("commands")), timeout=120, what="commands query running")
    channel = "p" * 24
    poison = orjson.dumps({"v": 1, "type": "subscribe", "channel_id": channel, "user_id": 1, "ts": 1})
    producer.produce(topics.commands(), key=channel.encode(), value=poison)
    producer.flush(10)
    headers = dict(dead_letter_of(poison, source=topics.commands()).headers())
    assert headers["reason"] == b"missing_field"

    update = raw_price_update(market_id=MARKETS[0], seq=1, prices=((1, "2.50"),))
    producer.produce(topics.prices(), key=update.key(), value=update.encode())
    producer.flush(10)
    wait_for(lambda: stored(redis_client, MARKETS[0]) == (1, "2.50"), timeout=90, what="prices still applied")
    assert process.process is not None
    assert process.process.poll() is None, "the reducer process exited"
    assert_session_below_others(process.pid)
    runs = {k.decode(): orjson.loads(v) for k, v in redis_client.hgetall(keys.reducer_queries()).items()}
    assert set(runs) == {query.name for query in QUERIES}
    # Every query ran throughout but the game's, whose first batch's Python worker may miss Spark's
    # ten-second connect-back on a loaded machine and be restarted by the supervisor.
    steady = {name: run for name, run in runs.items() if name != "game"}
    assert {name: run["state"] for name, run in steady.items()} == dict.fromkeys(steady, "running")
    assert all(run["restarts"] == 0 for run in steady.values())
