"""Redis comes back empty: the reducers rebuild the store from Kafka, without a human.

Prices stream to websocket clients; the feed stops; Redis is stopped, its data deleted, and
started again empty. Nothing new is produced until the store is back, so only the rebuild can
bring back the markets table and the last price of every market (spark/rebuild.py). Channels
lived only in Redis: their websockets are told they were lost, and the clients subscribe again,
as the browser does. Then the feed goes on, and every client follows it to its last price.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import orjson
import pytest

from bench.harness import free_port
from reducers import topics
from store import keys
from tests.conftest import wait_for
from tests.factories import definition_build
from tests.integration.reliability.clients import ChannelClient, Loop, WatchClient
from tests.integration.reliability.conftest import Stack, namespace_on_shared_kafka
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
def stack(services, monkeypatch, tmp_path) -> Iterator[Stack]:
    """The shared Kafka in a fresh namespace; a Redis of the test's own, which it may empty."""
    redis = f"redis://127.0.0.1:{free_port()}/0"
    with namespace_on_shared_kafka(monkeypatch, tmp_path, redis=redis, prefix="r") as stack:
        stack.service("redis", "start")
        try:
            yield stack
        finally:
            stack.stop_processes()
            stack.service("redis", "stop")


def definitions_produce(producer) -> None:
    """The markets, as the outbox relay publishes them: on the compacted markets topic."""
    for market in MARKETS:
        definition = definition_build(market)
        producer.produce(topics.markets(), key=definition.key(), value=definition.encode())
    producer.flush(10)


def test_redis_that_comes_back_empty_is_rebuilt_from_kafka_and_clients_subscribe_again(stack, tmp_path):
    from odds.core.kafka import producer_create

    definitions_produce(producer_create(**{"linger.ms": 5}))
    streaming = start_streaming(
        stack,
        tmp_path / "checkpoints",
        # The queries meet Redis away while it restarts: restarted within seconds, not a minute.
        reducers_env={"SPARK_QUERY_RESTART_BASE_S": "0.5", "SPARK_QUERY_RESTART_MAX_S": "2"},
    )
    client = streaming.client
    first_mark = orjson.loads(
        wait_for(lambda: client.get(keys.store_mark()), timeout=60, what="the store's first mark")
    )
    base = streaming.base()
    loop = Loop()
    channels, watchers = channel_and_market_clients(base)
    clients: list[ChannelClient | WatchClient] = [*channels, *watchers]
    try:
        loop.start(clients)
        loop.wait_ready(clients, timeout=90)
        before = Feed(streaming.producer, rate=100)
        before.start()
        time.sleep(4)
        settle(client, clients, before, timeout=120)

        stack.service("redis", "stop")
        for path in sorted((stack.var / "redis").rglob("*"), reverse=True):
            path.unlink() if path.is_file() else path.rmdir()
        assert not any((stack.var / "redis").rglob("*")), "Redis's data is deleted before it starts again"
        stack.service("redis", "start")
        emptied_at = time.monotonic()

        wait_for(
            lambda: all(stored(client, m) == before.last[m] for m in MARKETS),
            timeout=120,
            interval=0.2,
            what="the last price of every market rebuilt from Kafka",
        )
        rebuilt_s = time.monotonic() - emptied_at
        assert all(client.hget(keys.market_definition(m), "version") for m in MARKETS), "the markets table is back"
        # The reducers may rebuild the store within a second of Redis starting, before a check of
        # emptiness could run; a new mark shows they found it empty (a mark is written only then).
        mark = wait_for(lambda: client.get(keys.store_mark()), timeout=30, what="the store's mark")
        rebuild = orjson.loads(mark)
        assert rebuild["rebuilt_at"] > first_mark["rebuilt_at"], "the store was found empty and rebuilt"

        wait_for(
            lambda: all(c.lost and c.channel and c.frames for c in channels),
            timeout=60,
            what="every channel client to subscribe again and get its new channel's image",
        )
        resubscribed_s = time.monotonic() - emptied_at
        after = Feed(streaming.producer, rate=100, seed=9, after=before.last)
        after.start()
        time.sleep(3)
        settle(client, clients, after, timeout=120)
    finally:
        loop.stop(clients)

    assert rebuild["markets"] >= len(MARKETS)
    assert rebuild["prices"] >= before.sent
    for c in channels:
        assert [reason for reason in c.errors if reason.startswith("lost")] == ["lost: lost"], c.summary()
        assert c.silent_gaps() == [], f"channel {c.channel}: silent gaps {c.silent_gaps()}"
    assert after.sent > 150
    print(
        f"\nredis rebuild: Redis restarted empty; {rebuild['markets']} definitions and {rebuild['prices']} price "
        f"records re-read in {rebuild['ms']} ms; every market back on its last price {rebuilt_s:.1f} s after the "
        f"restart; every channel client subscribed again within {resubscribed_s:.1f} s; all clients follow the "
        "feed to its last price"
    )
