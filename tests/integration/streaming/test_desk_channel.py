"""The trading desk's staff channel end to end: bet events on the real bets topic → the Spark
liability query → the books in Redis → a staff websocket receives the ticker and liability
frames; a punter's socket asking for the channel is refused and hears nothing of it."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from decimal import Decimal

import orjson
import pytest
from channels.testing import WebsocketCommunicator
from django.test import Client

from reducers import topics
from reducers.schemas import BetEvent, BetLeg
from store import keys
from tests.factories import definition_build, definitions_write, sign_in, user_create
from webapp.asgi import application

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

ORIGIN = (b"origin", b"http://127.0.0.1:8000")
HOME, AWAY = 700_101, 700_102
DELAY_HOME, DELAY_AWAY = 700_201, 700_202


def _cookie(user, *, second_factor: bool = True) -> tuple[bytes, bytes]:
    """A session cookie of ``user``; a staff member signs in with a TOTP code unless
    ``second_factor`` is False (the password alone)."""
    client = Client()
    if second_factor:
        sign_in(client, user)
    else:
        client.force_login(user)
    return (b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode())


async def _socket(cookie: tuple[bytes, bytes]) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(application, "/ws/odds/", headers=[ORIGIN, cookie])
    connected, _ = await communicator.connect()
    assert connected
    assert (await communicator.receive_json_from())["type"] == "hello"
    return communicator


async def _frames_until(ws: WebsocketCommunicator, done, *, timeout: float = 60.0) -> list[dict]:
    seen: list[dict] = []
    give_up = time.monotonic() + timeout
    while not done(seen):
        left = give_up - time.monotonic()
        assert left > 0, f"only these frames arrived: {[f['type'] for f in seen]}"
        frame = await ws.receive_json_from(timeout=left)
        if frame["type"] != "heartbeat":
            seen.append(frame)
    return seen


async def _trader_following(
    redis_client, market: int, event_name: str, selections: tuple[tuple[int, str], ...]
) -> WebsocketCommunicator:
    """A market named in the markets table, and a trader's socket following the desk."""
    definitions_write(
        redis_client, dataclasses.replace(definition_build(market), event_name=event_name, selections=selections)
    )
    trader = await asyncio.to_thread(user_create, balance="0", staff=True)
    ws = await _socket(await asyncio.to_thread(_cookie, trader))
    await ws.send_json_to({"type": "desk"})
    assert (await ws.receive_json_from())["type"] == "desk.followed"
    return ws


def _bet(kind: str, *, bet_id: int, market_id: int, selection_id: int, stake: str, price: str) -> BetEvent:
    return BetEvent(
        event_id=f"{bet_id}:{kind}",
        type=kind,
        bet_id=bet_id,
        user_id=42,
        stake=Decimal(stake),
        potential_return=(Decimal(stake) * Decimal(price)).quantize(Decimal("0.01")),
        legs=(BetLeg(selection_id=selection_id, market_id=market_id, event_id=market_id, price=Decimal(price)),),
        ts=int(time.time() * 1000),
    )


async def test_a_staff_socket_receives_every_bet_once_and_the_books_they_moved(
    reducers_running, producer, redis_client
):
    market = 700_100
    ws = await _trader_following(
        redis_client, market, "Desk FC v Ticker Town", ((HOME, "Desk FC"), (AWAY, "Ticker Town"))
    )

    first = _bet("placed", bet_id=9_700_001, market_id=market, selection_id=HOME, stake="10.00", price="3.00")
    second = _bet("placed", bet_id=9_700_002, market_id=market, selection_id=AWAY, stake="4.00", price="2.00")
    for event in (first, first, second):  # the first redelivered: counted and shown once
        producer.produce(topics.bets(), key=event.key(), value=event.encode())
    producer.flush(10)

    def books_show_both(seen: list[dict]) -> bool:
        books = [m for f in seen if f["type"] == "desk.liability" for m in f["markets"] if m["market_id"] == market]
        return bool(books) and books[-1]["bets"] == 2

    seen = await _frames_until(ws, books_show_both)
    # This test's bets only: the session's liability reducer also counts other tests' bet events.
    ours = {first.bet_id, second.bet_id}
    tickers = [f for f in seen if f["type"] == "desk.bet" and f["bet_id"] in ours]
    # Two bets, keyed by bet id, may sit on two partitions: each once, in either order.
    assert sorted((t["id"], t["kind"], t["stake"]) for t in tickers) == [
        ("9700001:placed", "placed", "10.00"),
        ("9700002:placed", "placed", "4.00"),
    ]
    [leg] = next(t for t in tickers if t["bet_id"] == first.bet_id)["legs"]
    assert (leg["event"], leg["selection"], leg["sport"]) == ("Desk FC v Ticker Town", "Desk FC", "football")
    book = [m for f in seen if f["type"] == "desk.liability" for m in f["markets"] if m["market_id"] == market][-1]
    # Stakes 1400p kept; Desk FC pays 3000p, Ticker Town 800p.
    assert [(o["name"], o["pl"]) for o in book["outcomes"]] == [("Desk FC", -1600), ("Ticker Town", 600)]
    assert (book["staked"], book["worst"], book["worst_selection"], book["event_worst"]) == (1400, -1600, HOME, -1600)
    assert redis_client.zscore(keys.event_books_index(), str(market)) == 1600

    voided = dataclasses.replace(first, event_id="9700001:voided", type="voided")
    producer.produce(topics.bets(), key=voided.key(), value=voided.encode())
    producer.flush(10)
    seen = await _frames_until(
        ws,
        lambda s: any(
            m["market_id"] == market and m["bets"] == 1
            for f in s
            if f["type"] == "desk.liability"
            for m in f["markets"]
        ),
    )
    assert [f["kind"] for f in seen if f["type"] == "desk.bet"] == ["voided"]
    assert int(redis_client.hget(keys.market_book(market), "worst")) == 400 - 800
    await ws.disconnect()


async def _refused_the_desk(ws: WebsocketCommunicator, redis_client, *, code: str) -> None:
    """Asking for the desk is refused with ``code``, and nothing of the desk reaches the socket."""
    await ws.send_json_to({"type": "desk"})
    refusal = await ws.receive_json_from()
    assert (refusal["type"], refusal["code"]) == ("error", code)
    redis_client.publish(keys.desk_ticker_channel(), b'{"type":"desk.bet","v":1}')
    await ws.send_json_to({"type": "ping"})
    assert (await ws.receive_json_from())["type"] == "pong", "nothing of the desk in between"
    await ws.disconnect()


async def test_a_punters_socket_asking_for_the_desk_is_refused_and_hears_nothing_of_it(services, redis_client):
    punter = await asyncio.to_thread(user_create, balance="0")
    ws = await _socket(await asyncio.to_thread(_cookie, punter))
    await _refused_the_desk(ws, redis_client, code="staff_only")


async def test_a_staff_session_without_its_second_factor_is_refused_the_desk(services, redis_client):
    """As staff pages are: a trader signed in with the password alone follows nothing of the desk."""
    trader = await asyncio.to_thread(user_create, balance="0", staff=True)
    ws = await _socket(await asyncio.to_thread(_cookie, trader, second_factor=False))
    await _refused_the_desk(ws, redis_client, code="second_factor_required")


async def test_an_anonymous_socket_asking_for_the_desk_is_refused(services):
    communicator = WebsocketCommunicator(application, "/ws/odds/", headers=[ORIGIN])
    connected, _ = await communicator.connect()
    assert connected
    assert (await communicator.receive_json_from())["type"] == "hello"
    await communicator.send_json_to({"type": "desk"})
    assert (await communicator.receive_json_from())["code"] == "staff_only"
    await communicator.disconnect()


async def test_a_held_and_a_refused_bet_reach_the_ticker_and_no_book(reducers_running, producer, redis_client):
    market = 700_200
    selections = ((DELAY_HOME, "Delay United"), (DELAY_AWAY, "Refusal Rovers"))
    ws = await _trader_following(redis_client, market, "Delay United v Refusal Rovers", selections)

    held = _bet("pending", bet_id=9_700_011, market_id=market, selection_id=DELAY_HOME, stake="25.00", price="3.00")
    held = dataclasses.replace(held, until=held.ts + 5_000)
    refused = dataclasses.replace(
        _bet("rejected", bet_id=9_700_012, market_id=market, selection_id=DELAY_AWAY, stake="8.00", price="2.00"),
        reason="the price moved from 2.00 to 1.80",
    )
    for event in (held, refused, refused):  # the refusal redelivered: shown once
        producer.produce(topics.bets(), key=event.key(), value=event.encode())
    producer.flush(10)

    ours = {held.bet_id, refused.bet_id}

    def both_shown(seen: list[dict]) -> bool:
        return {f["bet_id"] for f in seen if f["type"] == "desk.bet" and f["bet_id"] in ours} == ours

    seen = await _frames_until(ws, both_shown)
    tickers = {f["bet_id"]: f for f in seen if f["type"] == "desk.bet" and f["bet_id"] in ours}
    assert (tickers[held.bet_id]["kind"], tickers[held.bet_id]["until"]) == ("pending", held.until)
    assert (tickers[refused.bet_id]["kind"], tickers[refused.bet_id]["reason"]) == (
        "rejected",
        "the price moved from 2.00 to 1.80",
    )
    # Each frame is published by the script that counted its event: both have run, and neither
    # wrote a book, a liability or a ranking for the market.
    assert not redis_client.exists(keys.market_book(market), keys.liability(DELAY_HOME), keys.liability(DELAY_AWAY))
    assert redis_client.zscore(keys.event_books_index(), str(market)) is None
    assert not any(m["market_id"] == market for f in seen if f["type"] == "desk.liability" for m in f["markets"])
    # The ticker's log keeps them for the page's first image, the refusal once.
    logged = [f for f in map(orjson.loads, redis_client.lrange(keys.desk_ticker_log(), 0, -1)) if f["bet_id"] in ours]
    assert sorted(f["kind"] for f in logged) == ["pending", "rejected"]
    await ws.disconnect()
