"""Several web hosts: two ASGI servers behind nginx (the reverse proxy from Debian, carrying
the websockets), the Spark reducers feeding both through Redis. One server is SIGKILLed with
clients attached: they reconnect through the proxy, which hands them to the other server, and
resume their subscriber channels from the last sequence they saw.

Guarantee (seed 004 terms): channel frames at-least-once, in order, gap-detectable across the
loss of a web host: every client receives every channel sequence number, or an explicit resync
image; zero silent gaps; every client ends on the last produced price of its markets.
"""

from __future__ import annotations

import random
import subprocess
import time

import pytest
import redis as redis_lib

from reducers import keys, topics
from tests.conftest import ROOT, wait_for
from tests.factories import market_ids_define, raw_price_update, user_create
from tests.integration.reliability.clients import ChannelClient, Loop, session_for
from tests.integration.reliability.conftest import Stack, free_port, wait_web
from tests.integration.reliability.test_reducer_crash import MARKETS, Feed, stored

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True), pytest.mark.timeout(300)]

CLIENTS = 12


def proxy(stack: Stack, action: str, *, listen: str, upstream: str) -> None:
    """``infra/bin/nginx.sh`` for this stack: its own configuration, pid and logs under the
    stack's directory."""
    result = subprocess.run(
        [str(ROOT / "infra" / "bin" / "nginx.sh"), action],
        env=stack.env(PROXY_LISTEN=listen, PROXY_UPSTREAM=upstream),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, f"nginx.sh {action}: {result.stdout}{result.stderr}"


def test_clients_of_a_killed_web_host_resume_their_channels_on_the_other_through_the_proxy(shared_namespace, tmp_path):
    from odds.services.kafka import producer_create

    stack = shared_namespace
    client = redis_lib.Redis.from_url(stack.redis)
    market_ids_define(client, *MARKETS)
    reducers = stack.reducers(tmp_path / "checkpoints")
    reducers.start()
    ports = [free_port(), free_port()]
    webs = [stack.uvicorn(port) for port in ports]
    for web in webs:
        web.start()
    for port, web in zip(ports, webs, strict=True):
        wait_web(f"http://127.0.0.1:{port}", web)
    listen = f"127.0.0.1:{free_port()}"
    upstream = ",".join(f"127.0.0.1:{port}" for port in ports)
    proxy(stack, "start", listen=listen, upstream=upstream)
    base = f"http://{listen}"
    loop = Loop()
    clients: list[ChannelClient] = []
    try:
        wait_web(base, webs[0])
        wait_for(lambda: client.get(keys.heartbeat("reducers")), timeout=150, what="reducers running")
        producer = producer_create(**{"linger.ms": 5})
        for market in MARKETS:
            update = raw_price_update(market_id=market, seq=1, prices=((1, "2.00"),))
            producer.produce(topics.prices(), key=update.key(), value=update.encode())
        producer.flush(10)
        wait_for(lambda: all(stored(client, m) for m in MARKETS), timeout=90, what="first prices")

        rng = random.Random(3)
        sessions = [session_for(base, user_create(balance="0")) for _ in range(3)]
        clients = [ChannelClient(sessions[i % 3], rng.sample(MARKETS, 6)) for i in range(CLIENTS)]
        loop.start(list(clients))
        loop.wait_ready(list(clients), timeout=90)
        feed = Feed(producer, rate=100)
        feed.last.update(dict.fromkeys(MARKETS, (1, "2.00")))
        feed.start()
        time.sleep(4)
        webs[0].kill()
        killed_at = time.monotonic()
        wait_for(
            lambda: any(c.drops for c in clients) and all(c.connects >= 2 for c in clients if c.drops),
            timeout=30,
            what="the clients of the killed host to reconnect",
        )
        reconnected_s = time.monotonic() - killed_at
        time.sleep(5)
        feed.stopped.set()
        feed.join(30)
        wait_for(
            lambda: all(stored(client, m) == feed.last[m] for m in MARKETS),
            timeout=120,
            what="Redis to hold the last produced price of every market",
        )
        wait_for(
            lambda: all(c.markets.get(m) == feed.last[m] for c in clients for m in c.watch),
            timeout=60,
            what="every client to hold the last price of each of its markets",
        )
    finally:
        loop.stop(list(clients))
        proxy(stack, "stop", listen=listen, upstream=upstream)

    moved = [c for c in clients if c.drops]
    # nginx spread the clients over both hosts, so the killed one had some of them
    assert 0 < len(moved) < CLIENTS, [c.summary() for c in clients]
    for c in clients:
        assert c.silent_gaps() == [], f"channel {c.channel}: silent gaps {c.silent_gaps()}"
        assert c.last_seq == int(client.hget(keys.channel_meta(c.channel or ""), "seq") or 0)
    assert feed.sent > 500
    print(
        f"\nweb hosts: {len(moved)} of {CLIENTS} clients were on the killed host; all reconnected through the "
        f"proxy within {reconnected_s:.1f} s; 0 silent gaps; {feed.sent} prices sent"
    )
