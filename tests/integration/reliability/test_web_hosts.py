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

from bench.harness import free_port
from store import keys
from tests.conftest import ROOT, wait_for
from tests.factories import user_create
from tests.integration.reliability.clients import ChannelClient, Loop, session_for
from tests.integration.reliability.conftest import Stack, wait_web
from tests.integration.reliability.streaming import MARKETS, Feed, settle, start_streaming

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
    stack = shared_namespace
    streaming = start_streaming(stack, tmp_path / "checkpoints", web_hosts=2)
    client, producer = streaming.client, streaming.producer
    ports = [port for port, _ in streaming.hosts]
    webs = [web for _, web in streaming.hosts]
    listen = f"127.0.0.1:{free_port()}"
    upstream = ",".join(f"127.0.0.1:{port}" for port in ports)
    proxy(stack, "start", listen=listen, upstream=upstream)
    base = f"http://{listen}"
    loop = Loop()
    clients: list[ChannelClient] = []
    try:
        wait_web(base, webs[0])

        rng = random.Random(3)
        sessions = [session_for(base, user_create(balance="0")) for _ in range(3)]
        clients = [ChannelClient(sessions[i % 3], rng.sample(MARKETS, 6)) for i in range(CLIENTS)]
        loop.start(list(clients))
        loop.wait_ready(list(clients), timeout=90)
        feed = Feed(producer, rate=100)
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
        settle(client, clients, feed, timeout=120)
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
