"""Scenario 2: Redis, the Kafka broker, the ASGI server and a Celery worker are restarted in
turn, each on this module's own stack (own ports, own data directory), while prices flow.

Prices reach Redis through the reducers' own sink (``store.markets.MarketStore``,
the apply-if-newer-and-publish script) driven from a thread, so each restart is judged on the
part restarted; the Spark reducers' own crash recovery is scenario 1 (test_reducer_crash.py).

Guarantees (seed 004 terms):
- idempotent producer across a broker restart: exactly once per (market, seq) on the topic —
  acks=all with retries gives at-least-once, idempotence removes the duplicates.
- websocket market prices across a Redis or ASGI restart: at-most-once per connection while it
  lasts (pub-sub keeps nothing), at-least-once across reconnects — every (re)watch starts with an
  image, so each client ends on the last price of every market it watches.
- Celery tasks across a worker crash: at-least-once — tasks are acknowledged after they ran
  (acks_late), a task queued while no worker runs is run when one comes back.
"""

from __future__ import annotations

import random
import threading
import time
import urllib.request
from collections import defaultdict
from collections.abc import Iterator
from decimal import Decimal

import orjson
import pytest
import redis as redis_lib
from confluent_kafka import Consumer, TopicPartition

from bench.harness import Process, free_port
from reducers import topics
from store import keys
from tests.conftest import wait_for
from tests.factories import user_create
from tests.integration.reliability.clients import Loop, WatchClient, session_for
from tests.integration.reliability.conftest import Stack, wait_web

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]

MARKETS = list(range(1, 41))


@pytest.fixture(scope="module")
def web(stack: Stack, django_db_setup) -> Iterator[tuple[str, Process]]:
    port = free_port()
    process = stack.uvicorn(port)
    process.start()
    base = f"http://127.0.0.1:{port}"
    wait_web(base, process)
    yield base, process
    process.stop()


class Publisher(threading.Thread):
    """Applies price updates through the reducers' Redis sink, riding out Redis being away."""

    def __init__(self, redis_url: str, rate: float) -> None:
        super().__init__(daemon=True)
        self.client = redis_lib.Redis.from_url(redis_url, socket_timeout=2, socket_connect_timeout=1)
        self.rate = rate
        self.seqs: dict[int, int] = defaultdict(int)
        self.last: dict[int, tuple[int, str]] = {}
        self.failures = 0
        self.stopped = threading.Event()

    def publish(self, market: int, price: Decimal) -> None:
        from reducers.prices import conflate
        from reducers.schemas import PriceUpdate, SelectionPrice
        from store.markets import MarketStore

        self.seqs[market] += 1
        now = int(time.time() * 1000)
        update = PriceUpdate(market, self.seqs[market], "open", (SelectionPrice(1, price),), now, now)
        while True:
            try:
                MarketStore(self.client).apply(conflate([(update, now)]))
                break
            except redis_lib.ConnectionError:
                self.failures += 1
                time.sleep(0.2)
        self.last[market] = (self.seqs[market], f"{price:.2f}")

    def run(self) -> None:
        rng = random.Random(5)
        while not self.stopped.is_set():
            self.publish(rng.choice(MARKETS), Decimal(rng.randint(101, 999)) / 100)
            time.sleep(1 / self.rate)

    def finish(self) -> None:
        """Stop, then move every market once more, so each has a price published after the fault."""
        self.stopped.set()
        self.join(30)
        for market in MARKETS:
            self.publish(market, Decimal("3.33"))


def health(base: str) -> dict:
    try:
        with urllib.request.urlopen(f"{base}/healthz", timeout=5) as response:  # noqa: S310 - loopback
            return orjson.loads(response.read())
    except urllib.error.HTTPError as error:
        return orjson.loads(error.read())
    except OSError:
        return {}


def watchers(base: str, count: int, *, per_punter: int = 5) -> list[WatchClient]:
    """``count`` clients, ``per_punter`` of them logged in as the same punter (a few tabs each,
    well under the per-user connection cap)."""
    rng = random.Random(count)
    sessions = [session_for(base, user_create(balance="0")) for _ in range(-(-count // per_punter))]
    return [WatchClient(sessions[i // per_punter], rng.sample(MARKETS, 8)) for i in range(count)]


def assert_clients_hold_the_last_prices(clients: list[WatchClient], publisher: Publisher) -> None:
    wait_for(
        lambda: all(c.markets.get(m) == publisher.last[m] for c in clients for m in c.watch),
        timeout=30,
        what="every client to hold the last price of each market it watches",
    )


def test_redis_restart_the_edge_and_its_clients_recover_on_their_own(stack, web):
    base, _ = web
    publisher = Publisher(stack.redis, rate=200)
    for market in MARKETS:
        publisher.publish(market, Decimal("2.00"))
    clients = watchers(base, 20)
    loop = Loop()
    loop.start(list(clients))
    try:
        loop.wait_ready(list(clients))
        publisher.start()
        time.sleep(2)
        stack.service("redis", "stop")
        time.sleep(2)
        stack.service("redis", "start")
        restarted = time.monotonic()
        wait_for(
            lambda: health(base).get("components", {}).get("redis", {}).get("ok"),
            timeout=20,
            what="/healthz to report Redis healthy again",
        )
        recovered_s = time.monotonic() - restarted
        time.sleep(3)
        publisher.finish()
        assert_clients_hold_the_last_prices(clients, publisher)
    finally:
        loop.stop(list(clients))
    assert publisher.failures > 0, "the publisher never saw Redis away: the restart did not happen"
    assert recovered_s < 15


def test_broker_restart_idempotent_producer_loses_and_duplicates_nothing(stack, web):
    from odds.core.kafka import producer_create

    base, _ = web
    session = session_for(base, user_create(balance="0"))
    topic = topics.prices()
    producer = producer_create(**{"bootstrap.servers": stack.kafka, "linger.ms": 5})
    failed: list[str] = []
    produced: dict[int, int] = defaultdict(int)
    stopped = threading.Event()

    def delivered(err: object, msg: object) -> None:
        if err is not None:
            failed.append(str(err))

    def produce() -> None:
        rng = random.Random(9)
        while not stopped.is_set():
            market = rng.choice(MARKETS)
            produced[market] += 1
            value = orjson.dumps({"market_id": market, "seq": produced[market]})
            producer.produce(topic, key=str(market).encode(), value=value, on_delivery=delivered)
            producer.poll(0)
            time.sleep(0.002)

    thread = threading.Thread(target=produce, daemon=True)
    thread.start()
    time.sleep(2)
    stack.service("kafka", "stop")
    status_down, body_down = session.call("POST", "/api/streams", {"view": "markets", "markets": [1]})
    time.sleep(1)
    stack.service("kafka", "start")
    restarted = time.monotonic()

    def subscribed() -> bool:
        return session.call("POST", "/api/streams", {"view": "markets", "markets": [1]})[0] == 201

    wait_for(subscribed, timeout=30, interval=0.5, what="the control API to reach Kafka again")
    recovered_s = time.monotonic() - restarted
    time.sleep(2)
    stopped.set()
    thread.join(10)
    assert producer.flush(60) == 0
    assert failed == []

    consumer = Consumer(
        {"bootstrap.servers": stack.kafka, "group.id": "reliability-count", "enable.auto.commit": False}
    )
    partitions = consumer.list_topics(topic, timeout=10).topics[topic].partitions
    ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in partitions}
    consumer.assign([TopicPartition(topic, p, 0) for p in partitions])
    seen: dict[tuple[int, int], int] = defaultdict(int)
    done: set[int] = {p for p, end in ends.items() if end == 0}
    deadline = time.monotonic() + 60
    while len(done) < len(partitions) and time.monotonic() < deadline:
        message = consumer.poll(1.0)
        if message is None or message.error() is not None:
            continue
        value, offset, partition = message.value(), message.offset(), message.partition()
        assert value is not None
        assert offset is not None
        assert partition is not None
        record = orjson.loads(value)
        seen[(record["market_id"], record["seq"])] += 1
        if offset + 1 >= ends[partition]:
            done.add(partition)
    consumer.close()

    expected = {(m, s) for m, n in produced.items() for s in range(1, n + 1)}
    assert set(seen) == expected, f"lost: {len(expected - set(seen))}"
    assert [k for k, n in seen.items() if n > 1] == []
    assert sum(produced.values()) > 1000
    assert status_down in (201, 503)
    if status_down == 503:
        assert body_down["error"]["code"] == "command_not_sent"
    assert recovered_s < 20


def test_asgi_restart_clients_reconnect_and_resume(stack, web):
    base, process = web
    publisher = Publisher(stack.redis, rate=200)
    for market in MARKETS:
        publisher.publish(market, Decimal("2.00"))
    clients = watchers(base, 20)
    loop = Loop()
    loop.start(list(clients))
    try:
        loop.wait_ready(list(clients))
        publisher.start()
        time.sleep(2)
        process.kill()
        time.sleep(1)
        process.start()
        restarted = time.monotonic()
        wait_web(base, process)
        wait_for(lambda: all(c.connects >= 2 for c in clients), timeout=20, what="every client to reconnect")
        reconnected_s = time.monotonic() - restarted
        time.sleep(2)
        publisher.finish()
        assert_clients_hold_the_last_prices(clients, publisher)
    finally:
        loop.stop(list(clients))
    assert reconnected_s < 15


def test_celery_worker_crash_tasks_queued_meanwhile_run_when_it_returns(stack):
    from celery import Celery

    client = redis_lib.Redis.from_url(stack.redis)
    # Not the process's current app: the shared tasks of later tests must still find the project's.
    sender = Celery("reliability", broker=stack.redis.rsplit("/", 1)[0] + "/1", set_as_current=False)
    sender.conf.broker_transport_options = {"global_keyprefix": keys.celery_prefix(stack.namespace)}
    worker = stack.celery_worker()
    worker.start()
    try:
        sender.send_task("odds.tasks.worker_heartbeat")
        wait_for(lambda: client.get(keys.heartbeat("celery")), timeout=60, what="the worker to run a task")
        worker.kill()
        client.delete(keys.heartbeat("celery"))
        sender.send_task("odds.tasks.worker_heartbeat")
        time.sleep(1)
        assert client.get(keys.heartbeat("celery")) is None
        worker.start()
        restarted = time.monotonic()
        wait_for(lambda: client.get(keys.heartbeat("celery")), timeout=60, what="the queued task to run")
        recovered_s = time.monotonic() - restarted
    finally:
        worker.stop()
        sender.close()
    assert recovered_s < 30
