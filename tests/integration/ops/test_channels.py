"""The subscriptions page's API: live channels with the partitions serving them; staff end one."""

from __future__ import annotations

import time

import orjson
import pytest
from django.urls import reverse

from odds.ops.selectors.ops import price_partitioner
from reducers.partitioning import market_partition
from store import keys

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def _channel(redis_client, channel_id: str, user_id: int, markets: list[int]) -> None:
    now = int(time.time() * 1000)
    redis_client.hset(
        keys.channel_meta(channel_id),
        mapping={
            "user": user_id,
            "spec": orjson.dumps({"view": "markets", "markets": markets}),
            "status": "streaming",
            "seq": 4,
            "created": now,
        },
    )
    redis_client.sadd(keys.channel_markets(channel_id), *markets)
    redis_client.zadd(keys.channels_index(), {channel_id: now})
    redis_client.set(keys.channel_owner(channel_id), f"{user_id}:session")


def test_channels_list_user_markets_sequence_and_partitions(staff_client, punter, kafka_topics, redis_client):
    _channel(redis_client, "chan-list-1", punter.id, [11, 12, 13])
    rows = staff_client.get(reverse("trading-api-channels")).json()["channels"]
    row = next(r for r in rows if r["channel"] == "chan-list-1")
    assert (row["user"], row["markets"], row["seq"], row["status"]) == (punter.username, [11, 12, 13], 4, "streaming")
    expected: dict[str, int] = {}
    for m in (11, 12, 13):
        p = str(market_partition(m, 4, partitioner=price_partitioner()))
        expected[p] = expected.get(p, 0) + 1
    assert row["partitions"] == dict(sorted(expected.items()))


def test_staff_ends_any_channel_through_the_command_topic(staff_client, punter, kafka_topics, redis_client):
    _channel(redis_client, "chan-end-1", punter.id, [21])
    response = staff_client.post(reverse("trading-api-channel-end", kwargs={"channel_id": "chan-end-1"}))
    assert response.status_code == 202
    assert redis_client.get(keys.channel_owner("chan-end-1")) is None
    missing = staff_client.post(reverse("trading-api-channel-end", kwargs={"channel_id": "no-such"}))
    assert missing.status_code == 404
