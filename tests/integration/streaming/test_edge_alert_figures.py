"""What the edge records for the alerts, through the real consumer and hub against Redis: the
age of a market frame as the hub hands it to a websocket (the ``frame`` latency stage), and each
websocket's close by its cause."""

from __future__ import annotations

import asyncio

import pytest
from channels.testing import WebsocketCommunicator

from odds.core.metrics import COUNTER_WEBSOCKET_CLOSES, latency_histograms
from odds.streaming.hub import get_hub
from reducers.prices import conflate
from store import keys
from store.markets import MarketStore
from tests.factories import raw_price_update
from webapp.asgi import application

pytestmark = pytest.mark.integration

ORIGIN = (b"origin", b"http://127.0.0.1:8000")


async def watching(market_id: int) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(application, "/ws/odds/", headers=[ORIGIN])
    connected, _ = await communicator.connect()
    assert connected
    assert (await communicator.receive_json_from())["type"] == "hello"
    await communicator.send_json_to({"type": "watch", "markets": [market_id]})
    assert (await communicator.receive_json_from(timeout=5))["type"] == "image"
    return communicator


async def test_a_market_frame_the_hub_relays_is_timed_from_its_source_event(redis_client):
    communicator = await watching(810_001)
    await asyncio.to_thread(get_hub().frame_ages.flush)  # ages the process's hub kept from earlier tests
    before = (await asyncio.to_thread(latency_histograms))["frame"].count
    update = raw_price_update(market_id=810_001, seq=1, prices=((1, "2.50"),))
    MarketStore(redis_client).apply(conflate([(update, 1)]))
    assert (await communicator.receive_json_from(timeout=5))["market_id"] == 810_001
    assert await asyncio.to_thread(get_hub().frame_ages.flush) == 1
    after = (await asyncio.to_thread(latency_histograms))["frame"]
    assert after.count == before + 1
    await communicator.disconnect()


def closed(redis_client, cause: str) -> int:
    """Closes of that cause counted so far: reported to Redis, or held by the hub for its next
    report (the report moves them from one to the other)."""
    reported = redis_client.hget(keys.counter(COUNTER_WEBSOCKET_CLOSES), cause)
    return int(reported or 0) + get_hub().closes[cause]


async def test_a_websockets_close_is_counted_by_its_cause(redis_client):
    first = await watching(810_002)
    normal, other = closed(redis_client, "normal"), closed(redis_client, "other")
    await first.disconnect(code=1000)
    second = await watching(810_003)
    await second.disconnect(code=4321)
    assert (closed(redis_client, "normal"), closed(redis_client, "other")) == (normal + 1, other + 1)
