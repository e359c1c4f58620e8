"""Scenario 1: the Spark reducers are SIGKILLed twice mid-stream and restarted, while websocket
clients stream their subscriber channels through a real uvicorn.

Guarantees (seed 004 terms):
- market state in Redis: exactly-once effect — the checkpointed Kafka source replays at least
  once, apply-if-newer by sequence drops the repeats; Redis ends on the last produced price.
- channel frames to a connected client: at-least-once, in order, gap-detectable — every client
  receives every channel sequence number, or an explicit resync image; zero silent gaps.

Runs on the shared Kafka and Redis under its own namespace: only this test's own reducer
process is killed, no shared service is touched.
"""

from __future__ import annotations

import random
import threading
import time
from collections import defaultdict

import orjson
import pytest
import redis as redis_lib

from reducers import keys, topics
from tests.conftest import wait_for
from tests.factories import market_ids_define, raw_price_update, user_create
from tests.integration.reliability.clients import ChannelClient, Loop, session_for
from tests.integration.reliability.conftest import free_port, wait_web

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True), pytest.mark.timeout(300)]

MARKETS = list(range(410_001, 410_031))
CLIENTS = 12


class Feed(threading.Thread):
    """Idempotent producer of price updates with per-market sequences, until stopped."""

    def __init__(self, producer, rate: float) -> None:
        super().__init__(daemon=True)
        self.producer = producer
        self.rate = rate
        self.last: dict[int, tuple[int, str]] = {}
        self.sent = 0
        self.stopped = threading.Event()

    def run(self) -> None:
        rng = random.Random(8)
        # Every market was primed with seq 1 before the channels began; the feed goes on from 2.
        seqs: dict[int, int] = defaultdict(lambda: 1)
        while not self.stopped.is_set():
            market = rng.choice(MARKETS)
            seqs[market] += 1
            price = f"{rng.randint(101, 999) / 100:.2f}"
            update = raw_price_update(market_id=market, seq=seqs[market], prices=((1, price),))
            self.producer.produce(topics.prices(), key=update.key(), value=update.encode())
            self.producer.poll(0)
            self.last[market] = (seqs[market], price)
            self.sent += 1
            time.sleep(1 / self.rate)
        self.producer.flush(30)


def stored(client: redis_lib.Redis, market_id: int) -> tuple[int, str] | None:
    raw = client.hget(keys.market_state(market_id), "state")
    if raw is None:
        return None
    state = orjson.loads(raw)
    return state["seq"], state["selections"][0]["price"]


def test_reducer_crashes_leave_every_channel_client_without_a_silent_gap(shared_namespace, tmp_path):
    from odds.services.kafka import producer_create

    stack = shared_namespace
    client = redis_lib.Redis.from_url(stack.redis)
    market_ids_define(client, *MARKETS)
    reducers = stack.reducers(tmp_path / "checkpoints")
    reducers.start()
    port = free_port()
    web = stack.uvicorn(port)
    web.start()
    base = f"http://127.0.0.1:{port}"
    wait_web(base, web)
    wait_for(lambda: client.get(keys.heartbeat("reducers")), timeout=150, what="reducers running")

    producer = producer_create(**{"linger.ms": 5})
    for market in MARKETS:  # every market has a state before the channels begin
        update = raw_price_update(market_id=market, seq=1, prices=((1, "2.00"),))
        producer.produce(topics.prices(), key=update.key(), value=update.encode())
    producer.flush(10)
    wait_for(lambda: all(stored(client, m) for m in MARKETS), timeout=90, what="first prices")

    rng = random.Random(2)
    sessions = [session_for(base, user_create(balance="0")) for _ in range(3)]
    clients = [ChannelClient(sessions[i % 3], rng.sample(MARKETS, 6)) for i in range(CLIENTS)]
    loop = Loop()
    loop.start(list(clients))
    feed = Feed(producer, rate=150)
    try:
        loop.wait_ready(list(clients), timeout=90)
        feed.last.update(dict.fromkeys(MARKETS, (1, "2.00")))
        feed.start()
        for _ in range(2):
            time.sleep(6)
            reducers.kill()
            time.sleep(2)
            reducers.start()
        time.sleep(4)
        feed.stopped.set()
        feed.join(30)

        wait_for(
            lambda: all(stored(client, m) == feed.last[m] for m in MARKETS),
            timeout=180,
            what="Redis to hold the last produced price of every market",
        )
        wait_for(
            lambda: all(c.markets.get(m) == feed.last[m] for c in clients for m in c.watch),
            timeout=60,
            what="every client to hold the last price of each of its markets",
        )
    finally:
        loop.stop(list(clients))

    for c in clients:
        assert c.silent_gaps() == [], f"channel {c.channel}: silent gaps {c.silent_gaps()}"
        assert c.frames[0].seq == 1
        assert c.drops == 0
        assert c.last_seq == int(client.hget(keys.channel_meta(c.channel or ""), "seq") or 0)
    assert all(len(c.frames) >= 3 for c in clients), [len(c.frames) for c in clients]
    assert feed.sent > 1000
