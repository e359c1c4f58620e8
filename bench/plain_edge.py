"""The plain Channels edge, the baseline the edge benchmark measures the hub against.

Every websocket joins one channel-layer group per market it watches, and a relay sends every
market update with one ``group_send``: one channel-layer message per client per update. The
same consumer as the product's otherwise (origin check, session, watch, image, limits), served by
this module's ASGI application:

    uvicorn bench.plain_edge:application        # the server
    python -m bench.plain_edge                  # the relay (Redis pub-sub → group_send)
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")

from django.core.asgi import get_asgi_application

# Django set up before anything imports models: the imports below come after it (E402 on each).
get_asgi_application()

from channels import DEFAULT_CHANNEL_LAYER  # noqa: E402
from channels.layers import get_channel_layer  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.conf import settings  # noqa: E402
from django.urls import path  # noqa: E402

from odds.streaming.consumers import OddsConsumer  # noqa: E402
from store import keys  # noqa: E402
from store.clients import async_redis_client  # noqa: E402
from webapp.origins import OriginValidator  # noqa: E402
from webapp.wsauth import WebsocketAuthStack  # noqa: E402


def market_group(market_id: int) -> str:
    return f"mkt.{market_id}"


class GroupSendConsumer(OddsConsumer):
    """Market prices through channel-layer groups instead of the hub."""

    channel_layer_alias = DEFAULT_CHANNEL_LAYER  # the product's consumer takes none

    async def market_channels_add(self, market_ids: list[int]) -> None:
        for market_id in market_ids:
            await self.channel_layer.group_add(market_group(market_id), self.channel_name)

    async def market_channels_remove(self, market_ids: list[int]) -> None:
        for market_id in market_ids:
            await self.channel_layer.group_discard(market_group(market_id), self.channel_name)

    async def odds_update(self, event: dict[str, Any]) -> None:
        await self.send(text_data=event["text"])


application = ProtocolTypeRouter(
    {
        "websocket": OriginValidator(WebsocketAuthStack(URLRouter([path("ws/odds/", GroupSendConsumer.as_asgi())]))),
    }
)


async def relay() -> None:
    """Every market update in the namespace, sent to its market's group."""
    layer = get_channel_layer()
    assert layer is not None
    pubsub = async_redis_client(settings.REDIS_URL).pubsub(ignore_subscribe_messages=True)
    await pubsub.psubscribe(keys.market_channel_pattern())
    prefix = len(keys.market_channel(0)) - 1
    async for message in pubsub.listen():
        if message["type"] != "pmessage":
            continue
        market_id = int(message["channel"][prefix:])
        await layer.group_send(market_group(market_id), {"type": "odds.update", "text": message["data"].decode()})


if __name__ == "__main__":
    asyncio.run(relay())
