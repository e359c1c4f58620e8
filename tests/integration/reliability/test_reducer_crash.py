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
import time

import pytest

from store import keys
from tests.factories import user_create
from tests.integration.reliability.clients import ChannelClient, Loop, session_for
from tests.integration.reliability.streaming import MARKETS, Feed, settle, start_streaming

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True), pytest.mark.timeout(300)]

CLIENTS = 12


def test_reducer_crashes_leave_every_channel_client_without_a_silent_gap(shared_namespace, tmp_path):
    streaming = start_streaming(shared_namespace, tmp_path / "checkpoints")
    client, reducers, producer, base = streaming.client, streaming.reducers, streaming.producer, streaming.base()

    rng = random.Random(2)
    sessions = [session_for(base, user_create(balance="0")) for _ in range(3)]
    clients = [ChannelClient(sessions[i % 3], rng.sample(MARKETS, 6)) for i in range(CLIENTS)]
    loop = Loop()
    loop.start(list(clients))
    feed = Feed(producer, rate=150)
    try:
        loop.wait_ready(list(clients), timeout=90)
        feed.start()
        for _ in range(2):
            time.sleep(6)
            reducers.kill()
            time.sleep(2)
            reducers.start()
        time.sleep(4)
        settle(client, clients, feed)
    finally:
        loop.stop(list(clients))

    for c in clients:
        assert c.silent_gaps() == [], f"channel {c.channel}: silent gaps {c.silent_gaps()}"
        assert c.frames[0].seq == 1
        assert c.drops == 0, f"channel {c.channel}: the connection dropped ({c.summary()})"
        assert c.last_seq == int(client.hget(keys.channel_meta(c.channel or ""), "seq") or 0)
    assert all(len(c.frames) >= 3 for c in clients), [len(c.frames) for c in clients]
    assert feed.sent > 1000
