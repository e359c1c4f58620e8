"""The plain Channels edge path: relay every market update with one ``group_send``.

Only needed with ``ODDS_EDGE=channel_layer``, the baseline the benchmark compares the
per-process hub against.
"""

from __future__ import annotations

import asyncio
from typing import Any

import redis.asyncio as aioredis
from channels.layers import get_channel_layer
from django.conf import settings
from django.core.management.base import BaseCommand

from odds.consumers import market_group
from reducers import keys


async def relay() -> None:
    layer = get_channel_layer()
    assert layer is not None
    pubsub = aioredis.Redis.from_url(settings.REDIS_URL).pubsub(ignore_subscribe_messages=True)
    await pubsub.psubscribe(keys.market_channel_pattern())
    prefix = len(keys.market_channel(0)) - 1
    async for message in pubsub.listen():
        if message["type"] != "pmessage":
            continue
        market_id = int(message["channel"][prefix:])
        await layer.group_send(market_group(market_id), {"type": "odds.update", "text": message["data"].decode()})


class Command(BaseCommand):
    help = "Relay market updates from Redis pub-sub to Channels groups (the plain edge path)."

    def handle(self, *args: Any, **options: Any) -> None:
        asyncio.run(relay())
