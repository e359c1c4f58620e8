"""The websocket consumer against real Redis: image, deltas and every kind of bad frame."""

from __future__ import annotations

import asyncio
import json

import pytest
from channels.testing import WebsocketCommunicator
from django.conf import settings

from odds.streaming.hub import Hub
from reducers.prices import conflate
from store import keys
from store.markets import MarketStore
from tests.factories import raw_price_update
from webapp.asgi import application

pytestmark = pytest.mark.integration

ORIGIN = (b"origin", b"http://127.0.0.1:8000")


def apply(redis_client, *, market_id: int, seq: int, price: str, status: str = "open") -> None:
    update = raw_price_update(market_id=market_id, seq=seq, prices=((1, price),), status=status)
    MarketStore(redis_client).apply(conflate([(update, 1)]))


async def connect(app=application) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(app, "/ws/odds/", headers=[ORIGIN])
    connected, _ = await communicator.connect()
    assert connected
    hello = await communicator.receive_json_from()
    assert hello["type"] == "hello"
    return communicator


async def test_watch_sends_the_image_then_deltas(redis_client):
    apply(redis_client, market_id=800_001, seq=4, price="2.50")
    communicator = await connect()
    await communicator.send_json_to({"type": "watch", "markets": [800_001, 800_002]})
    image = await communicator.receive_json_from(timeout=5)
    assert image["type"] == "image"
    assert [(m["market_id"], m["seq"]) for m in image["markets"]] == [(800_001, 4)]

    apply(redis_client, market_id=800_001, seq=5, price="2.60")
    delta = await communicator.receive_json_from(timeout=5)
    assert (delta["type"], delta["market_id"], delta["seq"]) == ("market", 800_001, 5)
    assert delta["selections"][0]["price"] == "2.60"
    await communicator.disconnect()


async def test_watch_since_leaves_out_the_markets_the_client_already_holds(redis_client):
    apply(redis_client, market_id=800_011, seq=4, price="2.50")  # held at this state
    apply(redis_client, market_id=800_012, seq=7, price="1.90")  # moved after the snapshot (held at 6)
    apply(redis_client, market_id=800_013, seq=2, price="4.00")  # not held at all
    communicator = await connect()
    since = {"800011": [4, "open"], "800012": [6, "open"]}
    await communicator.send_json_to({"type": "watch", "markets": [800_011, 800_012, 800_013], "since": since})
    image = await communicator.receive_json_from(timeout=5)
    assert [(m["market_id"], m["seq"]) for m in image["markets"]] == [(800_012, 7), (800_013, 2)]

    apply(redis_client, market_id=800_011, seq=5, price="2.60")  # and held markets still stream
    delta = await communicator.receive_json_from(timeout=5)
    assert (delta["market_id"], delta["seq"]) == (800_011, 5)
    await communicator.disconnect()


async def test_watch_since_at_the_same_sequence_with_another_status_gets_the_market(redis_client):
    apply(redis_client, market_id=800_014, seq=4, price="2.50")
    communicator = await connect()
    await communicator.send_json_to({"type": "watch", "markets": [800_014], "since": {"800014": [4, "suspended"]}})
    image = await communicator.receive_json_from(timeout=5)
    assert [(m["market_id"], m["status"]) for m in image["markets"]] == [(800_014, "open")]
    await communicator.disconnect()


async def test_unwatched_market_stops_sending(redis_client):
    communicator = await connect()
    await communicator.send_json_to({"type": "watch", "markets": [800_003]})
    await communicator.receive_json_from(timeout=5)
    await communicator.send_json_to({"type": "unwatch", "markets": [800_003]})
    await communicator.send_json_to({"type": "ping"})
    assert (await communicator.receive_json_from(timeout=5))["type"] == "pong"
    apply(redis_client, market_id=800_003, seq=1, price="3.00")
    assert await communicator.receive_nothing(timeout=0.5)
    await communicator.disconnect()


@pytest.mark.parametrize(
    ("frame", "code"),
    [
        ("{not json", "bad_json"),
        ("[1, 2]", "bad_message"),
        (json.dumps({"type": "launch"}), "unknown_type"),
        (json.dumps({"type": "watch", "markets": "all"}), "bad_markets"),
        (json.dumps({"type": "watch", "markets": [1, -2]}), "bad_markets"),
        (json.dumps({"type": "watch", "markets": list(range(1, 600))}), "too_many_markets"),
        (json.dumps({"type": "watch", "markets": [1], "since": [[1, 4, "open"]]}), "bad_since"),
        (json.dumps({"type": "watch", "markets": [1], "since": {"1": 4}}), "bad_since"),
        (json.dumps({"type": "watch", "markets": [1], "since": {"x": [4, "open"]}}), "bad_since"),
        (json.dumps({"type": "watch", "markets": [1], "since": {"1": [-1, "open"]}}), "bad_since"),
        ("x" * 20_000, "frame_too_large"),
    ],
)
async def test_bad_frame_gets_a_clear_error_and_the_connection_stays_usable(redis_client, frame, code):
    communicator = await connect()
    await communicator.send_to(text_data=frame)
    error = await communicator.receive_json_from(timeout=5)
    assert error["type"] == "error"
    assert error["code"] == code
    assert error["message"]
    await communicator.send_json_to({"type": "ping"})
    assert (await communicator.receive_json_from(timeout=5))["type"] == "pong"
    await communicator.disconnect()


async def test_foreign_origin_is_refused():
    communicator = WebsocketCommunicator(application, "/ws/odds/", headers=[(b"origin", b"http://evil.example")])
    connected, _ = await communicator.connect()
    assert not connected


async def test_batched_watch_gets_a_ticks_updates_in_one_frame(redis_client):
    communicator = await connect()
    await communicator.send_json_to({"type": "watch", "markets": [800_101, 800_102], "batch": True})
    await communicator.receive_json_from(timeout=5)
    apply(redis_client, market_id=800_101, seq=1, price="2.00")
    apply(redis_client, market_id=800_102, seq=1, price="3.00")
    frame = await communicator.receive_json_from(timeout=5)
    assert frame["type"] == "markets"
    assert sorted(i["market_id"] for i in frame["items"]) == [800_101, 800_102]
    await communicator.disconnect()


async def test_the_benchmarks_plain_channels_path_delivers_through_group_send(redis_client):
    """The edge benchmark's baseline (bench/plain_edge.py): the same consumer, fed by group_send."""
    from bench.plain_edge import application as plain
    from bench.plain_edge import relay

    relay_task = asyncio.create_task(relay())
    try:
        communicator = await connect(plain)
        await communicator.send_json_to({"type": "watch", "markets": [800_201]})
        await communicator.receive_json_from(timeout=5)
        await asyncio.sleep(0.3)  # the relay's pattern subscription is live
        apply(redis_client, market_id=800_201, seq=1, price="4.50")
        frame = await communicator.receive_json_from(timeout=5)
        assert (frame["type"], frame["market_id"], frame["selections"][0]["price"]) == ("market", 800_201, "4.50")
        await communicator.disconnect()
    finally:
        relay_task.cancel()


async def test_batched_sockets_watching_the_same_markets_get_the_same_frame(redis_client):
    """One tick's frame is built once for every socket that gets the same markets."""
    sockets = [await connect() for _ in range(3)]
    for communicator, markets in zip(sockets, ([800_401, 800_402], [800_402, 800_401], [800_401]), strict=True):
        await communicator.send_json_to({"type": "watch", "markets": markets, "batch": True})
        await communicator.receive_json_from(timeout=5)
    apply(redis_client, market_id=800_401, seq=1, price="2.00")
    apply(redis_client, market_id=800_402, seq=1, price="3.00")
    frames = [await communicator.receive_from(timeout=5) for communicator in sockets]
    assert frames[0] == frames[1], "the same markets in the same tick: the same bytes"
    assert json.loads(frames[0])["type"] == "markets"
    assert [i["market_id"] for i in json.loads(frames[0])["items"]] == [800_401, 800_402]
    only = json.loads(frames[2])
    assert (only["type"], only["market_id"]) == ("market", 800_401)
    for communicator in sockets:
        await communicator.disconnect()


async def test_updates_replaced_while_queued_are_counted_not_dropped_silently(redis_client):
    communicator = await connect()
    await communicator.send_json_to({"type": "watch", "markets": [800_301], "batch": True})
    await communicator.receive_json_from(timeout=5)
    for seq in range(1, 6):
        apply(redis_client, market_id=800_301, seq=seq, price=f"2.{seq}0")
    received: list[dict] = []
    while not any(f["type"] == "conflated" for f in received):
        received.append(await communicator.receive_json_from(timeout=5))
    markets = [f for f in received if f["type"] == "market"]
    merged = sum(f["merged"] for f in received if f["type"] == "conflated")
    assert markets[-1]["seq"] == 5, "the newest price is always sent"
    assert len(markets) + merged == 5, "every update is either sent or counted as merged"
    await communicator.disconnect()


async def test_server_sends_heartbeats_on_a_quiet_connection(monkeypatch):
    from odds.streaming import consumers

    monkeypatch.setattr(consumers, "HEARTBEAT_S", 0.2)
    communicator = await connect()
    assert (await communicator.receive_json_from(timeout=5))["type"] == "heartbeat"
    await communicator.disconnect()


@pytest.mark.parametrize(
    ("frame", "code"),
    [
        ({"type": "attach", "channel": "short"}, "bad_channel"),
        ({"type": "attach", "channel": 12345}, "bad_channel"),
        ({"type": "attach", "channel": "c" * 32, "last_seq": -1}, "bad_last_seq"),
        ({"type": "attach", "channel": "c" * 32}, "not_your_channel"),
    ],
)
async def test_bad_attach_gets_a_clear_error(redis_client, frame, code):
    communicator = await connect()
    await communicator.send_json_to(frame)
    error = await communicator.receive_json_from(timeout=5)
    assert (error["type"], error["code"]) == ("error", code)
    await communicator.disconnect()


async def test_suspension_and_resumption_arrive_as_explicit_messages(redis_client):
    communicator = await connect()
    apply(redis_client, market_id=800_401, seq=1, price="2.00")
    await communicator.send_json_to({"type": "watch", "markets": [800_401]})
    await communicator.receive_json_from(timeout=5)
    apply(redis_client, market_id=800_401, seq=2, price="2.00", status="suspended")
    apply(redis_client, market_id=800_401, seq=3, price="2.10")
    frames: list[dict] = []
    while not any(f["type"] == "market" and f["seq"] == 3 for f in frames):
        frames.append(await communicator.receive_json_from(timeout=5))
    statuses = [(f["seq"], f["status"]) for f in frames if f["type"] == "market.status"]
    assert statuses == [(2, "suspended"), (3, "open")], "status changes are never conflated away"
    assert frames[-1]["status"] == "open"
    await communicator.disconnect()


class _Inbox:
    """A hub listener that keeps what it is handed."""

    def __init__(self) -> None:
        self.messages: asyncio.Queue[tuple[bytes, str]] = asyncio.Queue()
        self.resyncs = 0

    def deliver(self, channel: bytes, payload: str) -> None:
        self.messages.put_nowait((channel, payload))

    def resync(self) -> None:
        self.resyncs += 1

    def deliver_tick(self, frame: str, channels: tuple[bytes, ...], moved: dict[bytes, str], replaced: int) -> None:
        raise AssertionError("added unbatched: every message comes through deliver")


async def test_a_hub_asked_for_no_channels_starts_no_reader_and_delivers_once_asked(redis_client):
    """Regression: ``Hub.add`` with no channels, as a process's first call, started the reader on
    a pub-sub without a connection; the task died at once (RuntimeError: pubsub connection not set)."""
    hub = Hub(settings.REDIS_URL)
    inbox = _Inbox()
    await hub.add(inbox, [])
    await asyncio.sleep(0.1)
    # The reader is the hub's own task; no public view of its health exists.
    assert hub._reader is None or not hub._reader.done()
    channel = keys.market_channel(800_501)
    await hub.add(inbox, [channel])
    reader = hub._reader
    assert reader is not None
    try:
        while redis_client.pubsub_numsub(channel) != [(channel.encode(), 1)]:
            await asyncio.sleep(0.01)  # the subscribe is sent; the server takes it in its own time
        redis_client.publish(channel, "hello")
        assert await asyncio.wait_for(inbox.messages.get(), timeout=5) == (channel.encode(), "hello")
        assert not reader.done()
    finally:
        await hub.remove(inbox, [channel])
        reader.cancel()


async def test_a_hub_whose_redis_connection_drops_resubscribes_and_asks_its_listeners_to_resync(redis_client):
    """Whatever was published while the hub's pub-sub connection was down never reaches it: once
    the connection is made again, every listener is told to resync, and its channels are
    subscribed again."""
    hub = Hub(settings.REDIS_URL)
    inbox, other = _Inbox(), _Inbox()
    channel, second = keys.market_channel(800_502), keys.market_channel(800_503)
    await hub.add(inbox, [channel])
    await hub.add(other, [second])
    reader = hub._reader
    assert reader is not None
    assert hub._subscription is not None
    try:
        while redis_client.pubsub_numsub(channel) != [(channel.encode(), 1)]:
            await asyncio.sleep(0.01)
        address = hub._subscription.address
        assert address is not None
        host, port = address
        assert redis_client.client_kill_filter(_type="pubsub", addr=f"{host}:{port}") == 1
        for _ in range(200):
            if inbox.resyncs and other.resyncs:
                break
            await asyncio.sleep(0.05)
        assert (inbox.resyncs, other.resyncs) == (1, 1), "every listener of the process resyncs once"
        assert hub.reconnects == 1
        while redis_client.pubsub_numsub(channel) != [(channel.encode(), 1)]:
            await asyncio.sleep(0.01)  # subscribed again on the new connection
        redis_client.publish(channel, "after")
        assert await asyncio.wait_for(inbox.messages.get(), timeout=5) == (channel.encode(), "after")
    finally:
        await hub.remove(inbox, [channel])
        await hub.remove(other, [second])
        reader.cancel()


async def test_a_channel_the_hub_left_is_not_subscribed_again_when_its_connection_comes_back(redis_client):
    """A reconnect subscribes the channels the hub follows now, not every channel it ever
    followed."""
    hub = Hub(settings.REDIS_URL)
    inbox = _Inbox()
    kept, left = keys.market_channel(800_504), keys.market_channel(800_505)
    await hub.add(inbox, [kept, left])
    reader = hub._reader
    assert reader is not None
    assert hub._subscription is not None
    try:
        while redis_client.pubsub_numsub(kept, left) != [(kept.encode(), 1), (left.encode(), 1)]:
            await asyncio.sleep(0.01)
        await hub.remove(inbox, [left])
        redis_client.publish(kept, "before")  # read after the unsubscribe's confirmation
        assert await asyncio.wait_for(inbox.messages.get(), timeout=5) == (kept.encode(), "before")
        address = hub._subscription.address
        assert address is not None
        host, port = address
        assert redis_client.client_kill_filter(_type="pubsub", addr=f"{host}:{port}") == 1
        for _ in range(200):
            if inbox.resyncs and redis_client.pubsub_numsub(kept) == [(kept.encode(), 1)]:
                break
            await asyncio.sleep(0.05)
        assert inbox.resyncs == 1
        assert redis_client.pubsub_numsub(kept, left) == [(kept.encode(), 1), (left.encode(), 0)]
        redis_client.publish(kept, "after")
        assert await asyncio.wait_for(inbox.messages.get(), timeout=5) == (kept.encode(), "after")
    finally:
        await hub.remove(inbox, [kept])
        reader.cancel()


def apply_match(redis_client, *, event_id: int, seq: int, home: int) -> None:
    """A match state applied by the match-state reducer's own processor, as the feed sends it."""
    from reducers.schemas import MatchClock, MatchStateUpdate
    from spark.jobs.matches import MatchBatchProcessor
    from tests.fakes import FakeDeadLetters

    update = MatchStateUpdate(
        event_id=event_id,
        seq=seq,
        sport="football",
        status="in_play",
        period=1,
        score={"home": home, "away": 0},
        clock=MatchClock(running=True, elapsed_s=60 * seq, at=1_700_000_000_000),
        event_ts=1_700_000_000_000,
        produce_ts=1_700_000_000_001,
    )
    row = {"key": update.key(), "value": update.encode(), "partition": 0, "offset": seq, "kafka_ts": 1_700_000_000_002}
    MatchBatchProcessor(redis_client=redis_client, dead_letters=FakeDeadLetters()).process_rows([row])


async def test_a_visitor_follows_the_match_states_of_the_events_on_the_page(redis_client):
    apply_match(redis_client, event_id=800_101, seq=3, home=0)
    communicator = await connect()  # not logged in
    await communicator.send_json_to({"type": "watch", "markets": [], "events": [800_101, 800_102]})
    first = await communicator.receive_json_from(timeout=5)
    assert first["type"] == "matches"
    assert [(m["event_id"], m["seq"]) for m in first["items"]] == [(800_101, 3)]

    apply_match(redis_client, event_id=800_101, seq=4, home=1)
    goal = await communicator.receive_json_from(timeout=5)
    assert (goal["type"], goal["event_id"], goal["seq"], goal["score"]) == ("match", 800_101, 4, {"home": 1, "away": 0})

    await communicator.send_json_to({"type": "unwatch", "markets": [], "events": [800_101]})
    await communicator.send_json_to({"type": "ping"})
    assert (await communicator.receive_json_from(timeout=5))["type"] == "pong"  # the unwatch is done
    apply_match(redis_client, event_id=800_101, seq=5, home=2)
    assert await communicator.receive_nothing(timeout=0.5)
    await communicator.disconnect()


async def test_following_more_events_than_the_limit_is_refused(redis_client):
    communicator = await connect()
    events = list(range(900_001, 900_002 + settings.WS_MAX_EVENTS))
    await communicator.send_json_to({"type": "watch", "markets": [], "events": events})
    refusal = await communicator.receive_json_from(timeout=5)
    assert (refusal["type"], refusal["code"]) == ("error", "too_many_events")
    await communicator.disconnect()


async def test_a_socket_takes_no_channel_layer_channel_and_no_thread_hop_per_message(redis_client, monkeypatch):
    """Nothing reaches a socket through Channels' channel layer (the hub delivers): a socket
    subscribes to no channel of its own in Redis; and a client message is handled without
    Channels' ``close_old_connections`` hop to a thread (the consumer opens no database connection)."""

    async def hop() -> None:
        raise AssertionError("a client message went through close_old_connections")

    monkeypatch.setattr("channels.consumer.aclose_old_connections", hop)
    before = set(redis_client.pubsub_channels("*specific.*"))
    communicator = await connect()
    await communicator.send_json_to({"type": "ping"})
    assert (await communicator.receive_json_from())["type"] == "pong"
    assert set(redis_client.pubsub_channels("*specific.*")) == before
    await communicator.disconnect()
