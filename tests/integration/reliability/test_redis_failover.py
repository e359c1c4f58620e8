"""Redis that can fail: a master, two replicas and three Sentinels; the master is SIGKILLed while
prices stream to websocket clients.

Every process is given ``REDIS_URL=redis+sentinel://…`` and asks the Sentinels where the master
is (store/clients.py). The reducers return from a batch only once the replica holds its
writes (``REDIS_REPLICAS_ACK=1``), so the promoted replica has the state of every batch whose
offsets Spark committed; a batch cut short by the failover is replayed on the new master. The
web host's hub reconnects its subscription to the new master and tells every socket to resync:
each channel's missed frames are read back from its log (a resync image if the log no longer
reaches back), market watchers get a fresh image.

Guarantees checked: the replica is promoted and the stream goes on by itself; Redis ends with
the last produced price of every market; every client ends on it too; channel frames have no
silent gap; no client saw a market's sequence go backwards.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
import redis as redis_lib

from store import keys
from tests.conftest import wait_for
from tests.integration.reliability.clients import ChannelClient, Loop, WatchClient
from tests.integration.reliability.conftest import Stack, namespace_on_shared_kafka
from tests.integration.reliability.redis_sentinel import RedisSentinel
from tests.integration.reliability.streaming import (
    MARKETS,
    Feed,
    channel_and_market_clients,
    settle,
    start_streaming,
    stored,
)

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True), pytest.mark.timeout(360)]


@pytest.fixture
def sentinel(tmp_path_factory) -> Iterator[RedisSentinel]:
    cluster = RedisSentinel(tmp_path_factory.mktemp("redis-sentinel"))
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def stack(services, sentinel, monkeypatch, tmp_path) -> Iterator[Stack]:
    """The shared Kafka in a fresh namespace; Redis is the Sentinel-managed master."""
    with namespace_on_shared_kafka(monkeypatch, tmp_path, redis=sentinel.url, prefix="s") as stack:
        yield stack


def seq_of(client, market_id: int) -> int:
    """The market's stored sequence (0 while the Sentinels are still agreeing on a master)."""
    try:
        return (stored(client, market_id) or (0, ""))[0]
    except redis_lib.RedisError:
        return 0


def test_a_redis_failover_mid_stream_loses_no_state_and_every_client_resyncs(stack, sentinel, tmp_path):
    streaming = start_streaming(stack, tmp_path / "checkpoints", reducers_env={"REDIS_REPLICAS_ACK": "1"})
    client = streaming.client
    base = streaming.base()
    loop = Loop()
    channels, watchers = channel_and_market_clients(base)
    clients: list[ChannelClient | WatchClient] = [*channels, *watchers]
    try:
        loop.start(clients)
        loop.wait_ready(clients, timeout=90)
        feed = Feed(streaming.producer, rate=100)
        feed.start()
        time.sleep(4)
        old_master = sentinel.master_port()
        sentinel.kill(old_master)
        killed_at = time.monotonic()
        wait_for(lambda: sentinel.master_port() != old_master, timeout=30, interval=0.1, what="a new master")
        promoted_s = time.monotonic() - killed_at
        sent_at_promotion = feed.sent
        # The stream goes on on the new master: some market moves past what it held at promotion.
        held = {m: seq_of(client, m) for m in MARKETS}
        wait_for(
            lambda: any(seq_of(client, m) > held[m] for m in MARKETS),
            timeout=60,
            interval=0.05,
            what="a price applied on the new master",
        )
        flowing_s = time.monotonic() - killed_at
        time.sleep(4)
        settle(client, clients, feed, timeout=150)
    finally:
        loop.stop(clients)

    assert sentinel.master_port() in sentinel.data_ports[1:], "a replica is the master now"
    assert feed.sent > sent_at_promotion > 300
    for c in channels:
        assert c.silent_gaps() == [], f"channel {c.channel}: silent gaps {c.silent_gaps()}"
        assert c.last_seq == int(client.hget(keys.channel_meta(c.channel or ""), "seq") or 0)
    # Channels are recovered from their logs (every sequence, in order) or, failing that, by a
    # resync image; either way on the clients' first connection.
    resynced = [c for c in channels if any(f.resync for f in c.frames[1:])]
    assert all(c.connects == 1 for c in channels), [c.summary() for c in channels]
    for w in watchers:
        # Still on their first connection: the images after the first are the hub's resyncs, not
        # a reconnect. There may be two: Sentinel drops the promoted replica's clients once more
        # as it reconfigures it, and the hub may have reached it just before.
        assert w.connects == 1, w.summary()
        assert w.images >= 2, w.summary()
    for m in MARKETS:
        assert stored(client, m) == feed.last[m]
    recovered = len(channels) - len(resynced)
    print(
        f"\nredis failover: master killed; replica promoted after {promoted_s:.1f} s; prices applied again "
        f"{flowing_s:.1f} s after the kill; {feed.sent} prices sent; {recovered} of {len(channels)} channels "
        "recovered from their logs, the others by a resync image; every market and client ends on its last "
        "price; 0 silent gaps"
    )
