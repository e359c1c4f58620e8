"""Event lists through the stream: a visitor's websocket follows a query's shared channel, made by
the real reducers from the command topic, and hears markets join and leave as the markets table
changes; the same query is the same channel for everyone."""

from __future__ import annotations

import time

import pytest
from channels.testing import WebsocketCommunicator

from reducers import topics
from reducers.schemas import MarketDefinition
from reducers.subscriptions import QuerySpec, shared_channel_id
from store import keys
from tests.conftest import wait_for
from webapp.asgi import application

pytestmark = pytest.mark.integration

ORIGIN = (b"origin", b"http://127.0.0.1:8000")


def define(producer, market_id: int, *, event_status: str, version: int = 1, sport: str = "darts") -> None:
    now = int(time.time() * 1000)
    record = MarketDefinition(
        market_id=market_id,
        version=version,
        event_id=market_id,
        sport=sport,
        competition="Test Masters",
        event_name=f"Player {market_id} v Player {market_id + 1}",
        kind="match_winner",
        name="Match winner",
        status="open",
        event_status=event_status,
        starts_at=now + 600_000,
        selections=((1, "Home"), (2, "Away")),
        ts=now,
    )
    producer.produce(topics.markets(), key=record.key(), value=record.encode())
    producer.flush(10)


async def visitor() -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(application, "/ws/odds/", headers=[ORIGIN])
    connected, _ = await communicator.connect()
    assert connected
    assert (await communicator.receive_json_from())["user"] is None
    return communicator


async def frame_of(communicator: WebsocketCommunicator, kind: str) -> dict:
    while True:
        frame = await communicator.receive_json_from(timeout=60)
        if frame["type"] == kind:
            return frame


@pytest.mark.django_db(transaction=True)
async def test_a_visitor_follows_a_query_and_hears_events_kick_off_and_finish(reducers_running, producer, redis_client):
    early, late = 712_001, 712_003
    define(producer, early, event_status="in_play")
    define(producer, late, event_status="scheduled")
    wait_for(lambda: redis_client.sismember(keys.market_definitions_index(), late), what="definitions in the table")
    query = {"sport": "darts", "in_play": True, "headline": True}
    channel = shared_channel_id(QuerySpec(sport="darts", in_play=True, headline=True))

    first = await visitor()
    await first.send_json_to({"type": "query", "query": query})
    attached = await frame_of(first, "attached")
    assert (attached["channel"], attached["query"]["sport"]) == (channel, "darts")
    image = await frame_of(first, "view.query")
    assert (image["image"], image["markets"]) == (True, [early])

    second = await visitor()  # the same query: the same channel, no second resolution
    await second.send_json_to({"type": "query", "query": {"headline": True, "in_play": True, "sport": "darts"}})
    assert (await frame_of(second, "attached"))["channel"] == channel
    again = await frame_of(second, "view.query")
    assert (again["seq"], again["markets"]) == (image["seq"], [early])

    define(producer, late, event_status="in_play", version=2)  # kick-off
    for communicator in (first, second):
        joined = await frame_of(communicator, "view.query")
        assert (joined["seq"], joined["added"], joined["removed"]) == (image["seq"] + 1, [late], [])
    define(producer, early, event_status="finished", version=2)
    left = await frame_of(first, "view.query")
    assert (left["added"], left["removed"]) == ([], [early])
    assert redis_client.scard(keys.query_channels()) >= 1
    await first.disconnect()
    await second.disconnect()


async def test_a_query_that_is_not_one_is_refused_in_the_socket(redis_client):
    communicator = await visitor()
    await communicator.send_json_to({"type": "query", "query": {"sport": "darts", "odds": 2}})
    refusal = await communicator.receive_json_from(timeout=5)
    assert (refusal["type"], refusal["code"]) == ("error", "bad_query")
    await communicator.disconnect()
