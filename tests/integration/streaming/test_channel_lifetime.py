"""A subscriber channel lives as long as a websocket is attached, whatever its traffic, and a
channel that ends tells its websockets so (``ended``), through the real reducers and uvicorn."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any

import pytest
import websockets
from channels.testing import WebsocketCommunicator
from django.test import Client
from websockets.typing import Origin

from odds.streaming.services.streams import stream_end, streams_expire
from reducers import topics
from store import keys
from tests.conftest import uvicorn_serving, wait_for
from tests.factories import market_ids_define, raw_price_update, user_create
from tests.integration.reliability.clients import session_for
from tests.integration.streaming.test_streams import websocket

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

# Shortened so the test stays short: the channel must outlive twice the expiry.
IDLE_EXPIRY_S = 6
SWEEP_INTERVAL_S = 1.0
STREAM_FOR_S = 15.0
BUSY_MARKETS = (310_001, 310_002, 310_003)


@pytest.fixture(scope="module")
def short_expiry_server(django_db_setup, django_db_blocker, tmp_path_factory):
    """uvicorn with the idle expiry shortened (the keep-alive interval follows it: 1 s)."""
    with uvicorn_serving(tmp_path_factory.mktemp("asgi-expiry"), STREAM_IDLE_EXPIRY_S=str(IDLE_EXPIRY_S)) as url:
        yield url


class Repeating(threading.Thread):
    """Runs ``step`` every ``interval`` seconds until stopped (the feed, the sweeper)."""

    def __init__(self, step, interval: float) -> None:
        super().__init__(daemon=True)
        self.step = step
        self.interval = interval
        self.stopped = threading.Event()
        self.failures: list[str] = []

    def run(self) -> None:
        while not self.stopped.wait(self.interval):
            try:
                self.step()
            except Exception as exc:  # recorded and asserted on by the test
                self.failures.append(repr(exc))


async def _stream_channel(base: str, session) -> tuple[str, list[tuple[float, dict[str, Any]]]]:
    """Subscribe, attach, begin, then record every frame for STREAM_FOR_S seconds."""
    frames: list[tuple[float, dict[str, Any]]] = []
    async with websockets.connect(
        base.replace("http://", "ws://") + "/ws/odds/",
        origin=Origin(base),
        additional_headers={"Cookie": session.cookie},
        max_queue=None,
    ) as ws:
        assert json.loads(await ws.recv())["type"] == "hello"
        status, body = await asyncio.to_thread(
            session.call, "POST", "/api/streams", {"view": "markets", "markets": list(BUSY_MARKETS)}
        )
        assert status == 201, body
        channel = body["channel"]
        await ws.send(json.dumps({"type": "attach", "channel": channel}))
        assert json.loads(await ws.recv())["type"] == "attached"
        status, body = await asyncio.to_thread(session.call, "POST", f"/api/streams/{channel}/begin")
        assert status == 202, body
        started = time.monotonic()
        while (left := STREAM_FOR_S - (time.monotonic() - started)) > 0:
            try:
                raw = await asyncio.wait_for(ws.recv(), timeout=left)
            except TimeoutError:
                break
            frames.append((time.monotonic() - started, json.loads(raw)))
    return channel, frames


def test_a_busy_channel_streams_without_gap_or_stall_past_twice_the_idle_expiry(
    short_expiry_server, reducers_running, producer, redis_client
):
    market_ids_define(redis_client, *BUSY_MARKETS)
    seqs = dict.fromkeys(BUSY_MARKETS, 0)

    def feed() -> None:
        for market_id in BUSY_MARKETS:
            seqs[market_id] += 1
            update = raw_price_update(
                market_id=market_id, seq=seqs[market_id], prices=((1, f"{2 + seqs[market_id] % 50 / 100:.2f}"),)
            )
            producer.produce(topics.prices(), key=update.key(), value=update.encode())
        producer.flush(5)

    feed()
    wait_for(lambda: all(redis_client.exists(keys.market_state(m)) for m in BUSY_MARKETS), what="first prices")
    # Celery beat's part, at the shortened interval and expiry.
    sweeper = Repeating(lambda: streams_expire(idle_ms=IDLE_EXPIRY_S * 1000), SWEEP_INTERVAL_S)
    feeder = Repeating(feed, 0.1)
    sweeper.start()
    feeder.start()
    try:
        session = session_for(short_expiry_server, user_create(balance="0"))
        channel, frames = asyncio.run(_stream_channel(short_expiry_server, session))
        alive_after = redis_client.exists(keys.channel_meta(channel))
    finally:
        feeder.stopped.set()
        sweeper.stopped.set()
        feeder.join(10)
        sweeper.join(10)
    assert (feeder.failures, sweeper.failures) == ([], [])

    assert [f for _, f in frames if f["type"] in ("ended", "error")] == []
    views = [(at, f) for at, f in frames if f["type"] in ("view.image", "view.delta")]
    assert views, "no channel frame at all"
    assert [f["seq"] for _, f in views] == list(range(1, len(views) + 1)), "channel sequence has a gap"
    times = [at for at, _ in views]
    longest_stall = max(b - a for a, b in zip([0.0, *times], [*times, STREAM_FOR_S], strict=True))
    print(
        f"\nbusy channel: {len(views)} frames over {STREAM_FOR_S:.0f} s (expiry {IDLE_EXPIRY_S} s), "
        f"seqs 1..{views[-1][1]['seq']} contiguous, longest stall {longest_stall:.2f} s"
    )
    assert longest_stall < 3.0, f"no channel frame for {longest_stall:.1f} s"
    assert times[-1] > 2 * IDLE_EXPIRY_S
    assert alive_after, "the channel was ended while a websocket was attached"


# --- the ended frame ---------------------------------------------------------------------------


def _logged_in(user) -> Client:
    client = Client(enforce_csrf_checks=False)
    client.force_login(user)
    return client


async def _next_of(communicator: WebsocketCommunicator, kind: str, timeout: float = 30) -> dict:
    while True:
        frame = await communicator.receive_json_from(timeout=timeout)
        if frame["type"] == kind:
            return frame


async def _streaming_channel(client: Client, market_id: int) -> tuple[str, WebsocketCommunicator]:
    channel = client.post(
        "/api/streams", {"view": "markets", "markets": [market_id]}, content_type="application/json"
    ).json()["channel"]
    ws = await websocket(client)
    await ws.send_json_to({"type": "attach", "channel": channel})
    await _next_of(ws, "attached")
    assert client.post(f"/api/streams/{channel}/begin").status_code == 202
    await _next_of(ws, "view.image")
    return channel, ws


async def test_unsubscribing_from_another_tab_sends_ended_to_the_attached_socket(reducers_running, redis_client):
    market_ids_define(redis_client, 310_011)
    client = _logged_in(user_create(balance="0"))
    channel, ws = await _streaming_channel(client, 310_011)
    assert client.delete(f"/api/streams/{channel}").status_code == 202
    assert await _next_of(ws, "ended") == {"type": "ended", "channel": channel, "reason": "unsubscribed"}
    await ws.disconnect()


async def test_a_channel_ended_by_staff_sends_ended_with_that_reason(reducers_running, redis_client):
    market_ids_define(redis_client, 310_021)
    client = _logged_in(user_create(balance="0"))
    channel, ws = await _streaming_channel(client, 310_021)
    assert stream_end(channel_id=channel)
    assert await _next_of(ws, "ended") == {"type": "ended", "channel": channel, "reason": "ended_by_staff"}
    await ws.disconnect()


async def test_attaching_to_an_expired_channel_answers_ended_not_silence(reducers_running, redis_client):
    client = _logged_in(user_create(balance="0"))
    channel = client.post(
        "/api/streams", {"view": "markets", "markets": [310_031]}, content_type="application/json"
    ).json()["channel"]
    wait_for(lambda: redis_client.exists(keys.channel_meta(channel)), what="channel stored")
    redis_client.zadd(keys.channels_index(), {channel: 1})  # last sign of life long ago, no socket
    assert channel in streams_expire(idle_ms=1000)
    wait_for(lambda: not redis_client.exists(keys.channel_meta(channel)), what="channel removed")

    ws = await websocket(client)
    await ws.send_json_to({"type": "attach", "channel": channel, "last_seq": 3})
    assert await ws.receive_json_from(timeout=10) == {"type": "ended", "channel": channel, "reason": "expired"}
    await ws.disconnect()


async def test_another_users_attach_to_an_ended_channel_learns_nothing(reducers_running, redis_client):
    owner = _logged_in(user_create(balance="0"))
    channel = owner.post(
        "/api/streams", {"view": "markets", "markets": [310_041]}, content_type="application/json"
    ).json()["channel"]
    assert owner.delete(f"/api/streams/{channel}").status_code == 202
    ws = await websocket(_logged_in(user_create(balance="0")))
    await ws.send_json_to({"type": "attach", "channel": channel})
    assert (await ws.receive_json_from(timeout=10))["code"] == "not_your_channel"
    await ws.disconnect()
