"""The stream control API and the websocket's attach/resume, with the real reducers."""

from __future__ import annotations

import pytest
from channels.testing import WebsocketCommunicator
from django.test import Client

from reducers import topics
from store import keys
from tests.conftest import wait_for
from tests.factories import market_ids_define, raw_price_update
from webapp.asgi import application

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

ORIGIN = (b"origin", b"http://127.0.0.1:8000")


def logged_in(django_user_model, username: str) -> Client:
    user = django_user_model.objects.create_user(username=username, password="pw-for-tests-only")
    client = Client(enforce_csrf_checks=False)
    client.force_login(user)
    return client


async def websocket(client: Client) -> WebsocketCommunicator:
    cookie = f"sessionid={client.cookies['sessionid'].value}".encode()
    communicator = WebsocketCommunicator(application, "/ws/odds/", headers=[ORIGIN, (b"cookie", cookie)])
    connected, _ = await communicator.connect()
    assert connected
    assert (await communicator.receive_json_from())["type"] == "hello"
    return communicator


def price(producer, market_id: int, seq: int, value: str) -> None:
    update = raw_price_update(market_id=market_id, seq=seq, prices=((1, value),))
    producer.produce(topics.prices(), key=update.key(), value=update.encode())
    producer.flush(10)


async def streaming_one_market(
    django_user_model, redis_client, username: str, market_id: int
) -> tuple[Client, str, WebsocketCommunicator]:
    """A punter's channel of one market, attached and begun on a websocket (its image read)."""
    market_ids_define(redis_client, market_id)
    client = logged_in(django_user_model, username)
    channel = client.post(
        "/api/streams", {"view": "markets", "markets": [market_id]}, content_type="application/json"
    ).json()["channel"]
    ws = await websocket(client)
    await ws.send_json_to({"type": "attach", "channel": channel})
    await next_of(ws, "attached")
    client.post(f"/api/streams/{channel}/begin")
    await next_of(ws, "view.image")
    return client, channel, ws


async def next_of(communicator: WebsocketCommunicator, kind: str, timeout: float = 30) -> dict:
    while True:
        frame = await communicator.receive_json_from(timeout=timeout)
        if frame["type"] == kind:
            return frame


def test_subscribing_requires_a_login(client):
    response = client.post("/api/streams", {"view": "markets", "markets": [1]}, content_type="application/json")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"view": "markets"}, "spec"),
        ({"view": "markets", "markets": "all"}, "markets"),
        ({"view": "slip", "slip": [{"selection_id": 1, "market_id": 2}], "stake": 5}, "stake"),
        ({"view": "markets", "query": {"sport": "football", "odds": 2}}, "query"),
    ],
)
def test_a_bad_subscription_is_a_400_naming_the_field(django_user_model, kafka_topics, body, field):
    client = logged_in(django_user_model, "spec-checker")
    response = client.post("/api/streams", body, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"]["field"] == field


async def test_subscribe_attach_begin_streams_image_then_deltas_and_resumes_after_reconnect(
    django_user_model, reducers_running, producer, redis_client
):
    market_id = 300_001
    market_ids_define(redis_client, market_id)
    price(producer, market_id, 1, "2.00")
    wait_for(lambda: redis_client.hget(keys.market_state(market_id), "seq") == b"1", what="first price")
    client = logged_in(django_user_model, "punter")
    response = client.post("/api/streams", {"view": "markets", "markets": [market_id]}, content_type="application/json")
    assert response.status_code == 201
    channel = response.json()["channel"]
    assert len(channel) >= 32

    ws = await websocket(client)
    await ws.send_json_to({"type": "attach", "channel": channel})
    assert (await next_of(ws, "attached"))["channel"] == channel
    assert client.post(f"/api/streams/{channel}/begin").status_code == 202
    image = await next_of(ws, "view.image")
    assert image["seq"] == 1
    assert image["markets"][0]["selections"][0]["price"] == "2.00"

    price(producer, market_id, 2, "2.20")
    delta = await next_of(ws, "view.delta")
    assert (delta["seq"], delta["markets"][0]["seq"]) == (2, 2)
    await ws.disconnect()

    price(producer, market_id, 3, "2.40")
    price(producer, market_id, 4, "2.60")
    wait_for(lambda: b'"seq":4,' in redis_client.lindex(keys.channel_log(channel), 0), what="frames while away")
    # Two updates, one or two frames: the reducer may conflate them into one batch.
    last = int(redis_client.hget(keys.channel_meta(channel), "seq"))

    ws = await websocket(client)
    await ws.send_json_to({"type": "attach", "channel": channel, "last_seq": 2})
    resumed = await next_of(ws, "resumed")
    assert (resumed["count"], resumed["resync"]) == (last - 2, False)
    missed = [await next_of(ws, "view.delta") for _ in range(last - 2)]
    assert [f["seq"] for f in missed] == list(range(3, last + 1))
    assert missed[-1]["markets"][0]["selections"][0]["price"] == "2.60"
    await ws.disconnect()


async def test_a_begin_since_a_snapshot_gets_only_the_markets_that_moved_in_between(
    django_user_model, reducers_running, producer, redis_client
):
    still, moved, unheld = 300_041, 300_042, 300_043
    market_ids_define(redis_client, still, moved, unheld)
    for market_id in (still, moved, unheld):
        price(producer, market_id, 5, "2.00")
    wait_for(lambda: redis_client.hget(keys.market_state(unheld), "seq") == b"5", what="first prices")
    # The page's snapshot held all three at 5; one moves before the stream begins.
    price(producer, moved, 6, "2.20")
    wait_for(lambda: redis_client.hget(keys.market_state(moved), "seq") == b"6", what="the move")
    client = logged_in(django_user_model, "snapshot-punter")
    spec = {
        "view": "slip",
        "slip": [{"selection_id": 1, "market_id": m} for m in (still, moved, unheld)],
        "stake": "10.00",
    }
    channel = client.post("/api/streams", spec, content_type="application/json").json()["channel"]

    ws = await websocket(client)
    await ws.send_json_to({"type": "attach", "channel": channel})
    await next_of(ws, "attached")
    since = {str(still): [5, "open"], str(moved): [5, "open"]}
    answer = client.post(f"/api/streams/{channel}/begin", {"since": since}, content_type="application/json")
    assert answer.status_code == 202, answer.content
    image = await next_of(ws, "view.image")
    assert image["since"] is True
    # The held market at its current state is left out; the one that moved and the one not held are in.
    assert [(m["market_id"], m["seq"]) for m in image["markets"]] == [(moved, 6), (unheld, 5)]
    # The slip's summary still covers every leg, at the live prices.
    assert [(leg["market_id"], leg["price"]) for leg in image["slip"]["legs"]] == [
        (still, "2.00"),
        (moved, "2.20"),
        (unheld, "2.00"),
    ]
    assert image["slip"]["combined_odds"] == "8.80"

    price(producer, still, 6, "2.40")
    delta = await next_of(ws, "view.delta")
    assert [(m["market_id"], m["seq"]) for m in delta["markets"]] == [(still, 6)]
    await ws.disconnect()


@pytest.mark.parametrize(
    "body",
    [
        {"since": {"42": 17}},
        {"since": {"forty-two": [17, "open"]}},
        {"since": [[42, 17, "open"]]},
        {"since": {"42": [-1, "open"]}},
        {"since": {str(n): [1, "open"] for n in range(1, 502)}},
    ],
)
def test_a_malformed_since_on_begin_is_refused_and_nothing_is_sent(django_user_model, kafka_topics, body):
    client = logged_in(django_user_model, "since-checker")
    spec = {"view": "markets", "markets": [42]}
    channel = client.post("/api/streams", spec, content_type="application/json").json()["channel"]
    response = client.post(f"/api/streams/{channel}/begin", body, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "bad_since"
    assert response.json()["error"]["field"] == "since"


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("application/json", ""),
        ("multipart/form-data; boundary=BoUnDaRy", "--BoUnDaRy--\r\n"),
        ("text/plain", ""),
    ],
)
def test_a_begin_without_a_body_holds_nothing_and_is_taken(django_user_model, kafka_topics, content_type, body):
    client = logged_in(django_user_model, "plain-beginner")
    channel = client.post("/api/streams", {"view": "markets", "markets": [42]}, content_type="application/json").json()[
        "channel"
    ]
    response = client.generic("POST", f"/api/streams/{channel}/begin", body, content_type=content_type)
    assert response.status_code == 202, response.content


def test_a_begin_body_with_an_unknown_field_is_refused(django_user_model, kafka_topics):
    client = logged_in(django_user_model, "begin-checker")
    channel = client.post("/api/streams", {"view": "markets", "markets": [42]}, content_type="application/json").json()[
        "channel"
    ]
    response = client.post(f"/api/streams/{channel}/begin", {"since_ts": 1}, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"]["field"] == "since_ts"


async def test_resume_from_too_far_back_gets_a_resync_image(
    django_user_model, reducers_running, producer, redis_client
):
    market_id = 300_011
    client, channel, ws = await streaming_one_market(django_user_model, redis_client, "returner", market_id)
    for seq in (1, 2, 3):
        price(producer, market_id, seq, f"3.{seq}0")
    wait_for(lambda: b'"seq":3,' in redis_client.lindex(keys.channel_log(channel), 0), what="deltas")
    last = int(redis_client.hget(keys.channel_meta(channel), "seq"))
    await ws.disconnect()
    redis_client.delete(keys.channel_log(channel))  # the log no longer reaches back to seq 2

    ws = await websocket(client)
    await ws.send_json_to({"type": "attach", "channel": channel, "last_seq": 1})
    assert (await next_of(ws, "resumed"))["resync"] is True
    image = await next_of(ws, "view.image")
    assert image["resync"] is True
    assert image["seq"] == last + 1
    assert image["markets"][0]["selections"][0]["price"] == "3.30"
    await ws.disconnect()


async def test_another_users_channel_cannot_be_attached_or_controlled(django_user_model, reducers_running):
    owner = logged_in(django_user_model, "owner")
    channel = owner.post("/api/streams", {"view": "markets", "markets": [1]}, content_type="application/json").json()[
        "channel"
    ]
    intruder = logged_in(django_user_model, "intruder")
    ws = await websocket(intruder)
    await ws.send_json_to({"type": "attach", "channel": channel})
    error = await next_of(ws, "error")
    assert error["code"] == "not_your_channel"
    await ws.disconnect()
    assert intruder.post(f"/api/streams/{channel}/begin").status_code == 404
    assert intruder.delete(f"/api/streams/{channel}").status_code == 404


def test_unsubscribe_through_the_api_removes_the_channel(django_user_model, reducers_running, redis_client):
    client = logged_in(django_user_model, "leaver")
    channel = client.post(
        "/api/streams", {"view": "markets", "markets": [300_021]}, content_type="application/json"
    ).json()["channel"]
    wait_for(lambda: redis_client.exists(keys.channel_meta(channel)), what="channel stored")
    assert client.delete(f"/api/streams/{channel}").status_code == 202
    wait_for(lambda: not redis_client.exists(keys.channel_meta(channel)), what="channel removed")
    assert not redis_client.sismember(keys.market_channels(300_021), channel)


def test_an_idle_channel_expires_and_leaves_both_maps(django_user_model, reducers_running, redis_client):
    from odds.tasks import streams_expire_idle

    client = logged_in(django_user_model, "sleeper")
    channel = client.post(
        "/api/streams", {"view": "markets", "markets": [300_031]}, content_type="application/json"
    ).json()["channel"]
    wait_for(lambda: redis_client.exists(keys.channel_meta(channel)), what="channel stored")
    redis_client.zadd(keys.channels_index(), {channel: 1})  # last sign of life long ago
    streams_expire_idle()
    wait_for(lambda: not redis_client.exists(keys.channel_meta(channel)), what="channel expired")
    assert not redis_client.sismember(keys.market_channels(300_031), channel)
    assert not redis_client.exists(keys.channel_owner(channel))


async def test_a_channel_numbered_back_by_a_failover_sends_an_image_numbered_past_the_client(
    django_user_model, reducers_running, producer, redis_client
):
    """A Redis failover can lose frames the client saw (the old master published them and died
    before its replica had them): the promoted replica numbers the next frames from below. The
    socket does not pass them on as repeats the client would drop; the client gets an image
    numbered past what it holds, with the newest price (docs/reliability.md)."""
    market_id = 300_012
    _, channel, ws = await streaming_one_market(django_user_model, redis_client, "failover", market_id)
    for seq in (1, 2, 3):
        price(producer, market_id, seq, f"4.{seq}0")
    seen = 0
    while seen < 4:  # the image, then the deltas of the three prices (conflated or not)
        frame = await ws.receive_json_from(timeout=30)
        if frame["type"] in ("view.delta", "view.image"):
            seen = frame["seq"]
            if frame["markets"] and frame["markets"][0]["selections"][0]["price"] == "4.30":
                break
    # What a failover does: the store's numbering goes back below what the client holds.
    redis_client.hset(keys.channel_meta(channel), "seq", seen - 2)
    price(producer, market_id, 4, "4.40")

    image = await next_of(ws, "view.image")
    assert image["resync"] is True
    assert image["seq"] > seen
    assert image["markets"][0]["selections"][0]["price"] == "4.40"
    assert int(redis_client.hget(keys.channel_meta(channel), "seq")) == image["seq"]
    await ws.disconnect()
