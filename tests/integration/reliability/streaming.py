"""The price stream of the channel fault tests: primed markets, a feed producing until stopped,
and the wait for everything to settle on its last prices."""

from __future__ import annotations

import random
import threading
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import redis as redis_lib

from bench.harness import Process, free_port
from reducers import topics
from spark.jobs import commands
from store import keys
from store.clients import redis_client
from tests.conftest import wait_for
from tests.factories import market_ids_define, raw_price_update
from tests.integration.reliability.clients import ChannelClient, WatchClient
from tests.integration.reliability.conftest import Stack, wait_web

MARKETS = list(range(410_001, 410_031))


class Feed(threading.Thread):
    """Idempotent producer of price updates with per-market sequences, until stopped.

    ``primed``: every market was given seq 1 before (``prime``), so the feed goes on from 2;
    ``after``: the last (seq, price) of each market of an earlier feed, which this one goes on from."""

    def __init__(
        self,
        producer,
        rate: float,
        *,
        markets: list[int] = MARKETS,
        primed: bool = True,
        seed: int = 8,
        after: dict[int, tuple[int, str]] | None = None,
    ) -> None:
        super().__init__(daemon=True)
        self.producer = producer
        self.rate = rate
        self.markets = markets
        self.primed = primed
        self.seed = seed
        self.last: dict[int, tuple[int, str]] = dict.fromkeys(markets, (1, "2.00")) if primed else {}
        if after is not None:
            self.last = dict(after)
        self.sent = 0
        self.stopped = threading.Event()

    def run(self) -> None:
        rng = random.Random(self.seed)
        seqs: dict[int, int] = defaultdict(lambda: 1 if self.primed else 0)
        seqs.update((market, seq) for market, (seq, _) in self.last.items())
        while not self.stopped.is_set():
            market = rng.choice(self.markets)
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


def prime(client: redis_lib.Redis, producer) -> None:
    """Give every market its first price (seq 1, 2.00) and wait until the reducers applied it."""
    for market in MARKETS:
        update = raw_price_update(market_id=market, seq=1, prices=((1, "2.00"),))
        producer.produce(topics.prices(), key=update.key(), value=update.encode())
    producer.flush(10)
    wait_for(lambda: all(stored(client, m) for m in MARKETS), timeout=90, what="first prices")


def settle(
    client: redis_lib.Redis, clients: Sequence[ChannelClient | WatchClient], feed: Feed, *, timeout: float = 180
) -> None:
    """Stop the feed and wait until Redis, then every client, holds its last price of each market."""
    feed.stopped.set()
    feed.join(30)
    wait_for(
        lambda: all(stored(client, m) == feed.last[m] for m in MARKETS),
        timeout=timeout,
        what="Redis to hold the last produced price of every market",
    )

    def behind() -> list[str]:
        return [
            f"{type(c).__name__} {index} market {m}: {c.markets.get(m)} not {feed.last[m]}"
            for index, c in enumerate(clients)
            for m in c.watch
            if c.markets.get(m) != feed.last[m]
        ]

    def channels_then() -> list[str]:
        # Where each channel client is against its channel in Redis: a client behind a channel
        # that moved on was not sent its frames; a channel that stopped was not written.
        return [
            f"{c.channel}: client seq {c.last_seq} ({c.connects} connects, {len(c.resumes)} resumes), "
            f"stored seq {client.hget(keys.channel_meta(c.channel), 'seq')}, "
            f"status {client.hget(keys.channel_meta(c.channel), 'status')}"
            for c in clients
            if isinstance(c, ChannelClient) and c.channel
        ]

    wait_for(
        lambda: not behind(),
        timeout=60,
        what="every client to hold the last price of each of its markets",
        detail=lambda: [*behind()[:12], *channels_then()],
    )


@dataclass
class Streaming:
    """The reducers and web hosts of a channel fault test, on its stack, with primed markets."""

    client: redis_lib.Redis
    reducers: Process
    hosts: list[tuple[int, Process]]
    producer: Any

    def base(self, host: int = 0) -> str:
        return f"http://127.0.0.1:{self.hosts[host][0]}"


def start_streaming(
    stack: Stack, checkpoints: Path, *, web_hosts: int = 1, reducers_env: dict[str, str] | None = None
) -> Streaming:
    """Define the markets, start the reducers and ``web_hosts`` uvicorn servers, wait until all
    run, and prime every market with its first price."""
    from odds.core.kafka import producer_create

    client = redis_client(stack.redis)
    market_ids_define(client, *MARKETS)
    reducers = stack.reducers(checkpoints, **(reducers_env or {}))
    reducers.start()
    hosts = []
    for _ in range(web_hosts):
        port = free_port()
        web = stack.uvicorn(port)
        web.start()
        hosts.append((port, web))
    for port, web in hosts:
        wait_web(f"http://127.0.0.1:{port}", web)
    wait_for(lambda: client.get(keys.heartbeat("reducers")), timeout=150, what="reducers running")
    # A new query fixes where it starts reading (the end of its topic) at its first trigger, which
    # reports progress: a channel subscribed before the command query's first trigger would never
    # be read. The markets can be primed before then (the store is rebuilt from Kafka at start).
    wait_for(
        lambda: client.exists(keys.reducer_progress(commands.QUERY_NAME)),
        timeout=150,
        what="the command query's first trigger",
    )
    producer = producer_create(**{"linger.ms": 5})
    prime(client, producer)  # every market has a state before the channels begin
    return Streaming(client=client, reducers=reducers, hosts=hosts, producer=producer)


def channel_and_market_clients(base: str) -> tuple[list[ChannelClient], list[WatchClient]]:
    """Four channel clients (six markets each, overlapping) and three market watchers (every
    third market) of two punters, for the Redis fault tests."""
    from tests.factories import user_create
    from tests.integration.reliability.clients import session_for

    sessions = [session_for(base, user_create(balance="0")) for _ in range(2)]
    channels = [ChannelClient(sessions[i % 2], MARKETS[i * 5 : i * 5 + 6]) for i in range(4)]
    watchers = [WatchClient(sessions[i % 2], MARKETS[i::3]) for i in range(3)]
    return channels, watchers
