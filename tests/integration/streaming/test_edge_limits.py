"""Bounded edge resources: the resume log by bytes, the stream control API per punter (rate and
live channels), websocket connections per user and address, client frames per second, images
per minute, oversized frames at uvicorn, and Redis refusing writes at maxmemory instead of
evicting state."""

from __future__ import annotations

import asyncio
import os
import subprocess
import time

import orjson
import pytest
import redis
import websockets
from channels.testing import WebsocketCommunicator
from django.test import Client
from websockets.typing import Origin

from bench.harness import ROOT, free_port
from store import keys
from store.channels import LOG_MAX_BYTES, LOG_SIZE, ChannelStore
from tests.factories import user_create
from tests.integration.reliability.clients import session_for
from webapp.asgi import application

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

ORIGIN = (b"origin", b"http://127.0.0.1:8000")
SPEC = {"view": "markets", "markets": [320_001]}


def _logged_in(user) -> Client:
    client = Client(enforce_csrf_checks=False)
    client.force_login(user)
    return client


def _subscribe(client: Client):
    return client.post("/api/streams", SPEC, content_type="application/json")


async def _socket(headers: list[tuple[bytes, bytes]], *, address: str | None = None) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(application, "/ws/odds/", headers=[ORIGIN, *headers])
    if address is not None:
        communicator.scope["client"] = [address, 40_000]
    connected, _ = await communicator.connect()
    assert connected
    return communicator


def _cookie(client: Client) -> tuple[bytes, bytes]:
    return (b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode())


# --- the resume log ---------------------------------------------------------------------------


def test_the_resume_log_keeps_at_most_its_byte_budget_dropping_the_oldest_frames(redis_client):
    channel = "b" * 32
    redis_client.hset(keys.channel_meta(channel), mapping={"user": 1, "status": "streaming", "seq": 0})
    store = ChannelStore(redis_client)
    image = orjson.dumps({"type": "view.image", "pad": "x" * 100_000})
    for _ in range(12):
        store.publish(channel, image, only_streaming=True)
    log = redis_client.lrange(keys.channel_log(channel), 0, -1)
    assert sum(len(frame) for frame in log) <= LOG_MAX_BYTES
    assert len(log) == LOG_MAX_BYTES // len(log[0])
    assert log[0].startswith(b'{"seq":12,')
    assert int(redis_client.hget(keys.channel_meta(channel), "logbytes")) == sum(len(frame) for frame in log)


def test_the_resume_log_still_keeps_its_last_frames_by_count(redis_client):
    channel = "c" * 32
    redis_client.hset(keys.channel_meta(channel), mapping={"user": 1, "status": "streaming", "seq": 0})
    store = ChannelStore(redis_client)
    for _ in range(LOG_SIZE + 10):
        store.publish(channel, b'{"type":"view.delta"}', only_streaming=True)
    log = redis_client.lrange(keys.channel_log(channel), 0, -1)
    assert len(log) == LOG_SIZE
    assert log[-1].startswith(b'{"seq":11,')


async def test_a_resume_from_a_frame_dropped_for_size_gets_a_resync(kafka_topics, redis_client):
    user = user_create(balance="0")
    client = _logged_in(user)
    channel = _subscribe(client).json()["channel"]
    # The channel as the reducers keep it; frames published through the store's script.
    redis_client.hset(keys.channel_meta(channel), mapping={"user": user.pk, "status": "streaming", "seq": 0})
    store = ChannelStore(redis_client)
    for _ in range(8):
        store.publish(channel, orjson.dumps({"type": "view.image", "pad": "x" * 100_000}), only_streaming=True)
    ws = await _socket([_cookie(client)])
    await ws.receive_json_from()
    await ws.send_json_to({"type": "attach", "channel": channel, "last_seq": 1})
    assert (await ws.receive_json_from(timeout=10))["type"] == "attached"
    resumed = await ws.receive_json_from(timeout=10)
    assert (resumed["type"], resumed["resync"]) == ("resumed", True)
    await ws.disconnect()


# --- the stream control API -------------------------------------------------------------------


def test_begin_and_change_above_the_rate_limit_get_a_429_with_retry_after(kafka_topics, settings):
    settings.STREAM_CONTROL_LIMIT = 4
    settings.STREAM_CONTROL_WINDOW_S = 10
    client = _logged_in(user_create(balance="0"))
    channel = _subscribe(client).json()["channel"]
    left_in_window = 10 - time.time() % 10
    if left_in_window < 4:
        time.sleep(left_in_window + 0.05)
    codes = [client.post(f"/api/streams/{channel}/begin?resync=1").status_code for _ in range(3)]
    codes.append(client.put(f"/api/streams/{channel}", SPEC, content_type="application/json").status_code)
    assert codes == [202, 202, 202, 202]
    refused = client.put(f"/api/streams/{channel}", SPEC, content_type="application/json")
    assert refused.status_code == 429
    error = refused.json()["error"]
    assert error["code"] == "rate_limited"
    assert error["message"]
    assert 1 <= int(refused["Retry-After"]) <= 10
    assert error["retry_after_s"] == int(refused["Retry-After"])
    assert client.post(f"/api/streams/{channel}/begin?resync=1").status_code == 429


def test_live_channels_are_capped_per_session_and_a_place_is_freed_when_one_ends(kafka_topics, settings):
    settings.STREAM_MAX_CHANNELS_PER_SESSION = 3
    client = _logged_in(user_create(balance="0"))
    channels = [_subscribe(client) for _ in range(3)]
    assert [r.status_code for r in channels] == [201, 201, 201]
    refused = _subscribe(client)
    assert refused.status_code == 409
    assert refused.json()["error"]["code"] == "too_many_channels"
    assert client.delete(f"/api/streams/{channels[0].json()['channel']}").status_code == 202
    assert _subscribe(client).status_code == 201


def test_live_channels_are_capped_per_punter_across_sessions(kafka_topics, settings):
    settings.STREAM_MAX_CHANNELS_PER_SESSION = 3
    settings.STREAM_MAX_CHANNELS_PER_USER = 4
    user = user_create(balance="0")
    first, second = _logged_in(user), _logged_in(user)
    assert [_subscribe(first).status_code for _ in range(3)] == [201, 201, 201]
    assert _subscribe(second).status_code == 201
    refused = _subscribe(second)
    assert refused.status_code == 409
    assert "per punter" in refused.json()["error"]["message"]


# --- websocket connections and frames ---------------------------------------------------------


async def test_connections_above_the_per_user_cap_are_refused_with_4429_until_one_closes(services, settings):
    settings.WS_MAX_CONNECTIONS_PER_USER = 2
    client = _logged_in(user_create(balance="0"))
    open_ = [await _socket([_cookie(client)]) for _ in range(2)]
    for ws in open_:
        assert (await ws.receive_json_from())["type"] == "hello"
    refused = await _socket([_cookie(client)])
    error = await refused.receive_json_from()
    assert (error["type"], error["code"]) == ("error", "too_many_connections")
    assert await refused.receive_output(timeout=5) == {"type": "websocket.close", "code": 4429}
    await refused.disconnect()

    await open_[0].disconnect()
    again = await _socket([_cookie(client)])
    assert (await again.receive_json_from())["type"] == "hello"
    for ws in (open_[1], again):
        await ws.disconnect()


async def test_anonymous_connections_are_capped_per_address(services, settings):
    settings.WS_MAX_ANONYMOUS_CONNECTIONS_PER_IP = 1
    first = await _socket([], address="192.0.2.7")
    assert (await first.receive_json_from())["type"] == "hello"
    refused = await _socket([], address="192.0.2.7")
    assert (await refused.receive_json_from())["code"] == "too_many_connections"
    assert (await refused.receive_output(timeout=5))["code"] == 4429
    elsewhere = await _socket([], address="192.0.2.8")
    assert (await elsewhere.receive_json_from())["type"] == "hello"
    for ws in (first, refused, elsewhere):
        await ws.disconnect()


async def test_a_connection_entry_of_a_dead_process_lapses(services, redis_client, settings):
    settings.WS_MAX_ANONYMOUS_CONNECTIONS_PER_IP = 1
    key = keys.websocket_connections("anonymous", "192.0.2.9")
    redis_client.zadd(key, {"gone-with-its-process": int(time.time() * 1000) - 1})
    ws = await _socket([], address="192.0.2.9")
    assert (await ws.receive_json_from())["type"] == "hello"
    await ws.disconnect()
    assert redis_client.zcard(key) == 0


async def test_client_frames_above_the_rate_get_rate_limited_and_the_socket_stays_open(services, settings):
    settings.WS_MAX_FRAMES_PER_S = 5
    ws = await _socket([])
    await ws.receive_json_from()
    for _ in range(15):
        await ws.send_json_to({"type": "ping"})
    replies = [(await ws.receive_json_from(timeout=5)) for _ in range(15)]
    kinds = [r["type"] if r["type"] == "pong" else r["code"] for r in replies]
    assert kinds.count("pong") <= 10
    assert set(kinds) == {"pong", "rate_limited"}
    await asyncio.sleep(1.1)
    await ws.send_json_to({"type": "ping"})
    assert (await ws.receive_json_from(timeout=5))["type"] == "pong"
    await ws.disconnect()


async def test_images_are_capped_per_minute_per_connection(services, settings):
    settings.WS_MAX_IMAGE_MARKETS_PER_MIN = 10
    ws = await _socket([])
    await ws.receive_json_from()
    await ws.send_json_to({"type": "watch", "markets": [1, 2, 3, 4, 5, 6]})
    assert (await ws.receive_json_from(timeout=5))["type"] == "image"
    await ws.send_json_to({"type": "watch", "markets": [7, 8, 9, 10, 11]})
    refusal = await ws.receive_json_from(timeout=5)
    assert (refusal["type"], refusal["code"]) == ("error", "image_budget_exceeded")
    await ws.send_json_to({"type": "watch", "markets": [7, 8, 9, 10]})
    assert (await ws.receive_json_from(timeout=5))["type"] == "image"
    await ws.disconnect()


async def test_uvicorn_closes_a_connection_sending_a_1_mib_frame_with_1009(asgi_server):
    session = session_for(asgi_server, user_create(balance="0"))
    async with websockets.connect(
        asgi_server.replace("http://", "ws://") + "/ws/odds/",
        origin=Origin(asgi_server),
        additional_headers={"Cookie": session.cookie},
        max_size=None,
    ) as ws:
        assert orjson.loads(await ws.recv())["type"] == "hello"
        await ws.send('{"type":"ping","pad":"' + "x" * (1 << 20) + '"}')
        with pytest.raises(websockets.ConnectionClosed) as closed:
            await asyncio.wait_for(ws.recv(), timeout=10)
    assert closed.value.rcvd is not None
    assert closed.value.rcvd.code == 1009


# --- Redis at maxmemory -----------------------------------------------------------------------


def _fill(client: redis.Redis) -> tuple[int, str]:
    """Write 100 kB values until Redis refuses one, then small ones until it refuses those too
    (a big write is refused while its own buffer counts): (big values written, the refusal)."""
    written, refusal = 0, ""
    for size in (100_000, 100):
        for n in range(100_000):
            try:
                client.set(f"state:{size}:{n}", b"x" * size)
            except redis.ResponseError as exc:
                refusal = str(exc)
                break
            written += size == 100_000
        else:
            pytest.fail("Redis took writes far past a 4 MB maxmemory")
    return written, refusal


def _past_the_limit(client: redis.Redis) -> None:
    """Hold Redis past its limit for as long as the test runs (a filled Redis drifts back under
    it as client buffers are freed): the limit is lowered below what it holds."""
    client.set("state:ballast", b"x" * 1_000_000)
    client.config_set("maxmemory", client.info("memory")["used_memory"] // 2)


@pytest.fixture
def small_redis(tmp_path):
    """A Redis of our own started by the operators' script with a 4 MB limit; its URL."""
    port = free_port()
    env = {
        **os.environ,
        "SPORTSBOOK_VAR": str(tmp_path),
        "REDIS_URL": f"redis://127.0.0.1:{port}/0",
        "REDIS_MAXMEMORY": "4mb",
    }
    script = str(ROOT / "infra" / "bin" / "redis.sh")
    subprocess.run([script, "start"], check=True, capture_output=True, env=env)
    try:
        yield env["REDIS_URL"]
    finally:
        subprocess.run([script, "stop"], check=False, capture_output=True, env=env)


def test_redis_at_maxmemory_refuses_writes_and_evicts_nothing(small_redis):
    client = redis.Redis.from_url(small_redis)
    assert client.config_get("maxmemory-policy") == {"maxmemory-policy": "noeviction"}
    written, refusal = _fill(client)
    assert "maxmemory" in refusal
    assert written > 0
    assert all(client.exists(f"state:100000:{n}") for n in range(written))
    client.close()


def test_the_control_api_answers_503_when_redis_refuses_writes(small_redis, settings):
    client = _logged_in(user_create(balance="0"))
    _past_the_limit(redis.Redis.from_url(small_redis))
    settings.REDIS_URL = small_redis
    refused = _subscribe(client)
    assert refused.status_code == 503
    assert refused.json()["error"]["code"] == "state_unavailable"
    assert refused["Retry-After"] == "5"


def test_healthz_names_redis_failing_at_maxmemory(small_redis, settings):
    from odds.core.health import health_report

    _past_the_limit(redis.Redis.from_url(small_redis))
    settings.REDIS_URL = small_redis
    report = health_report()
    assert "redis" in report["failing"]
    assert "maxmemory" in report["components"]["redis"]["error"]
    assert report["components"]["redis"]["maxmemory_mb"] > 0


async def test_a_burst_of_admissions_beyond_the_hubs_redis_pool_queues_instead_of_failing(redis_client, settings):
    """Every logged-in socket's admission runs a script on the hub's pool: a reconnect storm larger
    than the pool (and than redis-py's default of 100 connections) waits for connections, each
    admitted, rather than failing with "too many connections"."""
    from odds.streaming.hub import Hub

    settings.EDGE_REDIS_MAX_CONNECTIONS = 4
    hub = Hub(settings.REDIS_URL)
    cap = (f"{os.environ['SPORTSBOOK_NAMESPACE']}:test:burst-cap", 1_000)
    storm = [f"burst-{n}" for n in range(150)]
    results = await asyncio.gather(*(hub.connection_admit(connection_id=c, caps=[cap]) for c in storm))
    assert results == [None] * len(storm)
    assert redis_client.zcard(cap[0]) == len(storm)
    await asyncio.gather(*(hub.connection_release(connection_id=c) for c in storm))
    assert redis_client.zcard(cap[0]) == 0


async def test_a_connections_place_is_kept_while_its_process_lives_and_lapses_when_it_stops(redis_client, settings):
    """A place under a connection cap is refreshed by its process's keep-alive; one no process
    refreshes any more (the process died) lapses, and the next connection takes it; a connection
    that closes gives its place back."""
    from odds.streaming.hub import CONNECTION_ENTRY_INTERVALS, Hub

    settings.STREAM_KEEPALIVE_S = 2
    hub = Hub(settings.REDIS_URL)
    cap = (f"{os.environ['SPORTSBOOK_NAMESPACE']}:test:keep-cap", 1)
    try:
        assert await hub.connection_admit(connection_id="first", caps=[cap]) is None
        admitted = redis_client.zscore(cap[0], "first")
        assert admitted is not None
        assert 0 < redis_client.pttl(cap[0]) <= CONNECTION_ENTRY_INTERVALS * 2_000
        assert await hub.connection_admit(connection_id="second", caps=[cap]) == cap[0]

        await asyncio.sleep(0.05)
        await hub.keep_alive_once()
        refreshed = redis_client.zscore(cap[0], "first")
        assert refreshed is not None
        assert refreshed > admitted

        # The first connection's process stops refreshing it: its place lapses.
        redis_client.zadd(cap[0], {"first": int(time.time() * 1000) - 1})
        assert await hub.connection_admit(connection_id="second", caps=[cap]) is None
        assert [m.decode() for m in redis_client.zrange(cap[0], 0, -1)] == ["second"]

        await hub.connection_release(connection_id="second")
        assert redis_client.zcard(cap[0]) == 0
    finally:
        if hub._keeper is not None:
            hub._keeper.cancel()
        redis_client.delete(cap[0])


async def test_the_keep_alive_refreshes_every_place_a_few_hundred_connections_a_pipeline(
    redis_client, settings, monkeypatch
):
    """Thousands of sockets on a process: their places are refreshed in pipelines of
    ``KEEP_ALIVE_CONNECTIONS_PER_PIPELINE`` connections, the event loop free between them (one
    pipeline of them all held the process for hundreds of ms), with one command per cap key for
    all its connections, and every one is refreshed."""
    from odds.streaming.hub import KEEP_ALIVE_CONNECTIONS_PER_PIPELINE, Hub

    hub = Hub(settings.REDIS_URL)
    namespace = os.environ["SPORTSBOOK_NAMESPACE"]
    caps = [(f"{namespace}:test:many-user", 10_000), (f"{namespace}:test:many-address", 10_000)]
    count = 2 * KEEP_ALIVE_CONNECTIONS_PER_PIPELINE + 7
    connections = [f"many-{n}" for n in range(count)]
    try:
        for connection_id in connections:
            assert await hub.connection_admit(connection_id=connection_id, caps=caps) is None
        for key, _ in caps:
            redis_client.zadd(key, dict.fromkeys(connections, 1))
        commands = []  # the commands of each pipeline sent
        client = hub.client()
        made = client.pipeline

        def counted(*args, **kwargs):
            pipe = made(*args, **kwargs)
            execute = pipe.execute

            async def sent(*args, **kwargs):
                commands.append([command[0][0] for command in pipe.command_stack])
                return await execute(*args, **kwargs)

            monkeypatch.setattr(pipe, "execute", sent)
            return pipe

        monkeypatch.setattr(client, "pipeline", counted)
        await hub.keep_alive_once()
        # Three pipelines, each one refresh and one expiry per cap key for all its connections.
        assert commands == [["ZADD", "PEXPIREAT", "ZADD", "PEXPIREAT"]] * 3
        for key, _ in caps:
            scores = [score for _, score in redis_client.zrange(key, 0, -1, withscores=True)]
            assert len(scores) == count
            assert min(scores) > time.time() * 1000, "every place refreshed to a lapse ahead"
    finally:
        if hub._keeper is not None:
            hub._keeper.cancel()
        redis_client.delete(*(key for key, _ in caps))
