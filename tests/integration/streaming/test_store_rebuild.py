"""The store rebuilt from what Kafka retains (spark/rebuild.py), without Spark: the markets
table from the compacted markets topic (a tombstone removes), the newest state of every market
from the price topic, a malformed record left out, and the mark written last."""

from __future__ import annotations

import random
import time
import uuid

import orjson
import pytest

from reducers import topics
from store import keys
from tests.factories import definition_build, raw_price_update

pytestmark = [pytest.mark.integration]

MARKETS = list(range(930_001, 930_401))
UPDATES = 20_000


@pytest.fixture
def namespace(services, monkeypatch, redis_client):
    from odds.core.kafka import admin_client, topics_ensure

    monkeypatch.setenv("SPORTSBOOK_NAMESPACE", f"b{uuid.uuid4().hex[:8]}")
    topics_ensure()
    yield
    for key in redis_client.scan_iter(match=f"{topics.namespace()}:*", count=1000):
        redis_client.delete(key)
    admin_client().delete_topics([t.name for t in topics.all_topics()], operation_timeout=30)


def test_the_store_is_rebuilt_from_the_topics_with_the_newest_state_of_every_market(namespace, redis_client):
    from odds.core.kafka import producer_create
    from spark.rebuild import StoreWatch, rebuild

    producer = producer_create(**{"linger.ms": 20})
    for market in MARKETS:
        definition = definition_build(market)
        producer.produce(topics.markets(), key=definition.key(), value=definition.encode())
    removed = MARKETS[-1]
    producer.produce(topics.markets(), key=str(removed).encode(), value=None)  # a tombstone
    rng = random.Random(5)
    last: dict[int, tuple[int, str]] = {}
    seqs = dict.fromkeys(MARKETS, 0)
    for _ in range(UPDATES):
        market = rng.choice(MARKETS[:-1])
        seqs[market] += 1
        price = f"{rng.randint(101, 999) / 100:.2f}"
        update = raw_price_update(market_id=market, seq=seqs[market], prices=((1, price),))
        producer.produce(topics.prices(), key=update.key(), value=update.encode())
        last[market] = (seqs[market], price)
        producer.poll(0)
    producer.produce(topics.prices(), key=b"1", value=b"{not json")
    # The newest record of one market is one the reducer rejects: the one before it is its state.
    spoiled = MARKETS[0]
    bad = raw_price_update(market_id=spoiled, seq=seqs[spoiled] + 1, prices=((1, "0.50"),))
    producer.produce(topics.prices(), key=bad.key(), value=bad.encode())
    assert producer.flush(30) == 0

    from django.conf import settings

    watch = StoreWatch(redis_url=settings.REDIS_URL, bootstrap=settings.KAFKA_BOOTSTRAP_SERVERS)
    started = time.perf_counter()
    counts = watch.check()
    took = time.perf_counter() - started
    assert counts is not None
    assert counts["markets"] == len(MARKETS) + 1
    assert counts["prices"] == UPDATES + 2
    assert counts["prices_applied"] == len(MARKETS) - 1, "only the newest of each market is applied"

    for market, (seq, price) in last.items():
        state = orjson.loads(redis_client.hget(keys.market_state(market), "state"))
        assert (state["seq"], state["selections"][0]["price"]) == (seq, price)
    assert redis_client.hget(keys.market_definition(removed), "version") is None, "the tombstone removed it"
    assert redis_client.hget(keys.market_definition(MARKETS[0]), "version") is not None
    assert orjson.loads(redis_client.get(keys.store_mark()))["prices"] == UPDATES + 2
    assert watch.check() is None, "a marked store is left alone"
    # Rebuilding a store that already holds it all changes nothing (apply-if-newer).
    rebuild(redis_client, bootstrap=settings.KAFKA_BOOTSTRAP_SERVERS)
    state = orjson.loads(redis_client.hget(keys.market_state(MARKETS[0]), "state"))
    assert state["seq"] == last[MARKETS[0]][0]
    print(
        f"\nstore rebuild: {UPDATES} prices of {len(MARKETS)} markets in {took:.2f} s ({UPDATES / took:,.0f} records/s)"
    )
