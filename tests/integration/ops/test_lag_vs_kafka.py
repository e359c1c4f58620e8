"""The dashboard's and /metrics' lag per partition equals what Kafka's own tools compute from the
consumer group's committed offsets and the log-end offsets, read at the same moment."""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer, TopicPartition
from django.conf import settings
from prometheus_client import CONTENT_TYPE_LATEST
from prometheus_client.parser import text_string_to_metric_families

from reducers import topics
from tests.conftest import wait_for
from tests.factories import market_create, markets_define, price_update

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def kafka_tool_offsets(query: str) -> dict[int, tuple[int, int]]:
    """What `kafka-consumer-groups --describe` shows: (committed, log end) per partition."""
    topic = topics.prices()
    consumer = Consumer(
        {"bootstrap.servers": settings.KAFKA_BOOTSTRAP_SERVERS, "group.id": topics.reducer_group(query)}
    )
    try:
        partitions = sorted(consumer.list_topics(topic, timeout=10).topics[topic].partitions)
        committed = consumer.committed([TopicPartition(topic, p) for p in partitions], timeout=10)
        result = {}
        for tp in committed:
            _, high = consumer.get_watermark_offsets(TopicPartition(topic, tp.partition), timeout=10, cached=False)
            result[tp.partition] = (tp.offset if tp.offset >= 0 else -1, high)
        return result
    finally:
        consumer.close()


def kafka_tool_lag(query: str) -> dict[int, int]:
    return {p: high - max(0, committed) for p, (committed, high) in kafka_tool_offsets(query).items()}


def test_dashboard_and_metrics_lag_match_the_consumer_group(price_query, producer, redis_client, client):
    from odds.core.metrics import reducer_lag

    markets = [market_create() for _ in range(6)]
    markets_define(redis_client, *markets)
    for seq in (1, 2, 3):
        for market in markets:
            update = price_update(market, seq=seq, prices=("2.10", "3.40", "3.50"))
            producer.produce(topics.prices(), key=update.key(), value=update.encode())
    producer.flush(10)
    # Once the reducers committed everything produced, the figures stand still and can be compared.
    wait_for(lambda: sum(kafka_tool_lag("prices").values()) == 0, timeout=90, what="the prices group to catch up")

    before = kafka_tool_offsets("prices")
    dashboard = reducer_lag(record=False)["prices"]
    after = kafka_tool_offsets("prices")
    assert before == after
    assert sum(high for _, high in before.values()) >= 18
    assert {p["partition"]: (p["committed"], p["log_end"]) for p in dashboard["partitions"]} == before
    assert {p["partition"]: p["lag"] for p in dashboard["partitions"]} == kafka_tool_lag("prices")

    text = client.get("/metrics", REMOTE_ADDR="127.0.0.1").content.decode()
    exposed = {
        int(sample.labels["partition"]): int(sample.value)
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == "sportsbook_reducer_lag_records"
        and sample.labels["query"] == "prices"
        and sample.labels["group"] == topics.reducer_group("prices")
        and sample.labels["topic"] == topics.prices()
    }
    assert exposed == kafka_tool_lag("prices")


def test_recent_progress_reports_hold_every_batch_newest_first(price_query, producer, redis_client):
    """A reader polling the query's progress misses no batch: the recent reports run without a
    gap in batch ids up to the latest one, and the list stays within its cap."""
    import orjson

    from spark.progress import PROGRESS_RECENT
    from store import keys

    markets = [market_create() for _ in range(3)]
    markets_define(redis_client, *markets)
    for seq in (1, 2, 3, 4):
        for market in markets:
            update = price_update(market, seq=seq, prices=("2.10", "3.40", "3.50"))
            producer.produce(topics.prices(), key=update.key(), value=update.encode())
        producer.flush(10)
    wait_for(lambda: sum(kafka_tool_lag("prices").values()) == 0, timeout=90, what="the prices group to catch up")

    recent = [orjson.loads(r) for r in redis_client.lrange(keys.reducer_progress_recent("prices"), 0, -1)]
    latest = orjson.loads(redis_client.get(keys.reducer_progress("prices")))
    ids = [r["batchId"] for r in recent]
    assert 0 < len(ids) <= PROGRESS_RECENT
    assert ids[0] == latest["batchId"]
    assert ids == list(range(ids[0], ids[0] - len(ids), -1))
    assert sum(r["numInputRows"] for r in recent) >= 12 or len(ids) == PROGRESS_RECENT


def test_metrics_needs_the_bearer_token_when_one_is_set(client, settings, services, redis_client, kafka_topics):
    settings.METRICS_TOKEN = "s3cret"
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 401
    response = client.get("/metrics", HTTP_AUTHORIZATION="Bearer s3cret")
    assert response.status_code == 200
    assert response["Content-Type"] == CONTENT_TYPE_LATEST


def test_metrics_without_a_token_answers_loopback_only(client, settings, services, redis_client, kafka_topics):
    settings.METRICS_TOKEN = ""
    assert client.get("/metrics", REMOTE_ADDR="10.1.2.3").status_code == 403
    assert client.get("/metrics", REMOTE_ADDR="127.0.0.1").status_code == 200


def test_every_query_is_heard_from_and_an_idle_one_keeps_being_heard_from(reducers_running, redis_client):
    """A query with nothing to read still gives a sign of life (Spark's idle events), so the
    dashboard tells a quiet query from a silent one."""
    from odds.core.metrics import QUERY_TOPICS
    from store import keys

    def seen() -> dict[str, int]:
        return {k.decode(): int(v) for k, v in redis_client.hgetall(keys.reducer_seen()).items()}

    # Every query the session runs (the game's runs only beside its own tests), each on the dashboard's list.
    running = set(reducers_running)
    assert running <= set(QUERY_TOPICS)
    wait_for(lambda: running <= set(seen()), timeout=60, what="every query's first sign of life")
    first = seen()["matches"]
    wait_for(lambda: seen()["matches"] > first, timeout=45, what="a later sign of life of the idle matches query")
