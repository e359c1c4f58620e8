"""Property tests (hypothesis) of the two doors a client can push anything through.

The websocket consumer, driven in process: whatever frame arrives (any text, any JSON value, a known
``type`` with random or wrong fields) it answers with the documented reply or an ``error`` frame
with a documented code and a message, never closes, and still answers a ping afterwards.

The REST bodies of the bet and stream endpoints: random JSON and near-valid bodies are accepted or
refused with a 4xx in JSON with a message, never a 5xx; a refused bet moves no money (balance and
ledger as before) and an accepted channel spec reads back as itself.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections import Counter
from decimal import Decimal
from typing import Any, TypeGuard

import orjson
import pytest
from channels.testing import WebsocketCommunicator
from django.conf import settings
from hypothesis import HealthCheck, example, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from odds.betting.models import Bet, LedgerEntry, Wallet
from odds.streaming import consumers
from odds.streaming.hub import Hub
from reducers.subscriptions import shared_channel_id, spec_from_json
from tests.factories import market_create
from tests.integration.betting.helpers import selections_of
from tests.integration.security.conftest import logged_in
from webapp.asgi import application

pytestmark = [pytest.mark.integration]

WS_EXAMPLES = int(os.environ.get("WS_PROPERTY_EXAMPLES", "150"))
REST_EXAMPLES = int(os.environ.get("REST_PROPERTY_EXAMPLES", "120"))
ORIGIN = (b"origin", b"http://127.0.0.1:8000")
ERROR_CODES = {
    "bad_json",
    "bad_message",
    "unknown_type",
    "bad_markets",
    "too_many_markets",
    "frame_too_large",
    "bad_channel",
    "bad_last_seq",
    "not_your_channel",
}
PROPERTY_SETTINGS = hypothesis_settings(
    deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)

# Any code point, lone surrogates included: valid in JSON as "\\ud800", not Unicode text.
TEXT = st.characters(exclude_categories=())
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(TEXT, max_size=30),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=10), inner, max_size=5),
    max_leaves=20,
)
market_ids = st.lists(st.integers(min_value=1, max_value=2**63 - 1), max_size=8)
channel_ids = st.text(min_size=16, max_size=64) | st.text(max_size=80)
known_frames = st.fixed_dictionaries(
    {"type": st.sampled_from(["watch", "unwatch", "attach", "ping", "Watch", "pong", ""])},
    optional={
        "markets": market_ids | json_values,
        "batch": json_values,
        "channel": channel_ids | json_values,
        "last_seq": st.integers(min_value=-5, max_value=2**40) | json_values,
        "extra": json_values,
    },
)


def _ids_ok(raw: Any) -> TypeGuard[list[int]]:
    return isinstance(raw, list) and all(isinstance(m, int) and not isinstance(m, bool) and m > 0 for m in raw)


def expected_reply(frame: str | bytes) -> str | None:
    """What the consumer answers (``docs/protocol.md``): a frame type, ``error:<code>``, or None
    when the documented answer is silence (a valid ``unwatch``). Anonymous: attach is refused."""
    if len(frame) > settings.WS_MAX_FRAME_BYTES:
        return "error:frame_too_large"
    try:
        message = orjson.loads(frame)
    except orjson.JSONDecodeError:
        return "error:bad_json"
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        return "error:bad_message"
    kind = message["type"]
    if kind == "ping":
        return "pong"
    if kind in ("watch", "unwatch"):
        markets = message.get("markets")
        if not _ids_ok(markets):
            return "error:bad_markets"
        if kind == "unwatch":
            return None
        return "error:too_many_markets" if len(set(markets)) > settings.WS_MAX_MARKETS else "image"
    if kind == "attach":
        channel, last_seq = message.get("channel"), message.get("last_seq")
        if not isinstance(channel, str) or not 16 <= len(channel) <= 64:
            return "error:bad_channel"
        if last_seq is not None and (isinstance(last_seq, bool) or not isinstance(last_seq, int) or last_seq < 0):
            return "error:bad_last_seq"
        return "error:not_your_channel"
    return "error:unknown_type"


oversized_frames = st.tuples(st.text(TEXT, max_size=50), st.integers(1, 4000)).map(
    lambda parts: parts[0] + " " * (settings.WS_MAX_FRAME_BYTES + parts[1])
)


async def _answer_of(frame: str | bytes) -> None:
    """Send one frame on a fresh connection; the reply is the expected one and a ping still works."""
    communicator = WebsocketCommunicator(application, "/ws/odds/", headers=[ORIGIN])
    connected, _ = await communicator.connect()
    assert connected
    assert (await communicator.receive_json_from(timeout=5))["type"] == "hello"
    try:
        # send_input, not send_to: the test communicator refuses an empty frame, a browser does not.
        key = "bytes" if isinstance(frame, bytes) else "text"
        await communicator.send_input({"type": "websocket.receive", key: frame})
        expected = expected_reply(frame)
        if expected is not None:
            output = await communicator.receive_output(timeout=5)
            assert output["type"] == "websocket.send", f"the consumer closed: {output}"
            reply = json.loads(output["text"])
            if expected.startswith("error:"):
                assert reply["type"] == "error", reply
                assert reply["code"] in ERROR_CODES
                assert f"error:{reply['code']}" == expected, (frame[:200], reply)
                assert reply["message"].strip()
            else:
                assert reply["type"] == expected, (frame[:200], reply)
        else:
            assert await communicator.receive_nothing(timeout=0.05), "an answer where silence is documented"
        await communicator.send_json_to({"type": "ping"})
        output = await communicator.receive_output(timeout=5)
        assert output["type"] == "websocket.send", f"the consumer closed: {output}"
        assert json.loads(output["text"])["type"] == "pong"
    finally:
        await communicator.disconnect()


@given(frame=st.text(TEXT, max_size=200) | oversized_frames)
# Numbers the parser reads but strict JSON has not: bad_json, not bad_message.
@example(frame="NaN")
@example(frame="-Infinity")
@hypothesis_settings(max_examples=WS_EXAMPLES, parent=PROPERTY_SETTINGS)
async def test_any_text_frame_gets_the_documented_answer_and_the_socket_stays_usable(redis_client, frame):
    await _answer_of(frame)


@given(frame=st.binary(max_size=200))
@hypothesis_settings(max_examples=WS_EXAMPLES, parent=PROPERTY_SETTINGS)
async def test_any_binary_frame_gets_the_documented_answer_and_the_socket_stays_usable(redis_client, frame):
    await _answer_of(frame)


@given(value=json_values)
@hypothesis_settings(max_examples=WS_EXAMPLES, parent=PROPERTY_SETTINGS)
async def test_any_json_value_gets_the_documented_answer_and_the_socket_stays_usable(redis_client, value):
    await _answer_of(json.dumps(value))


@given(message=known_frames)
@hypothesis_settings(max_examples=WS_EXAMPLES, parent=PROPERTY_SETTINGS)
async def test_known_types_with_random_fields_get_the_documented_answer(redis_client, message):
    await _answer_of(json.dumps(message))


async def test_watching_no_markets_leaves_the_hub_reader_running(redis_client, monkeypatch):
    """Regression: ``{"type": "watch", "markets": []}`` as a process's first subscription started
    the hub's reader on a pub-sub without a connection; the reader task died with a RuntimeError."""
    hub = Hub(settings.REDIS_URL)
    monkeypatch.setattr(consumers, "get_hub", lambda: hub)
    communicator = WebsocketCommunicator(application, "/ws/odds/", headers=[ORIGIN])
    assert (await communicator.connect())[0]
    await communicator.receive_json_from(timeout=5)
    await communicator.send_json_to({"type": "watch", "markets": []})
    assert (await communicator.receive_json_from(timeout=5)) == {"type": "image", "v": 1, "markets": []}
    await asyncio.sleep(0.2)
    reader = hub._reader  # the task is the hub's own; no public view of its health exists
    assert reader is None or not reader.done(), reader.exception()
    await communicator.disconnect()


# --- REST bodies ------------------------------------------------------------------------------

prices = st.sampled_from(["2.10", "3.40", "1.01", "1000", "0.5", "2.105", "abc", ""]) | st.decimals(
    min_value=Decimal("-10"), max_value=Decimal("2000"), places=3
).map(str)
stakes = st.sampled_from(["10.00", "0.10", "0.09", "10000.00", "10000.01", "1E+1", " 5", "-1"]) | json_values


@st.composite
def placeable_bets(draw: st.DrawFn, books: list[list[tuple[int, str]]]) -> dict[str, Any]:
    """Well-formed bets on real selections, one per market, at their price or another valid one."""
    chosen = [draw(st.sampled_from(book)) for book in books]
    legs = draw(st.lists(st.sampled_from(chosen), min_size=1, max_size=len(chosen), unique=True))
    return {
        "idempotency_key": str(draw(st.uuids())),
        "stake": draw(st.sampled_from(["0.10", "5", "10.00", "60.00", "150.00"])),
        "price_policy": draw(st.sampled_from(["none", "any", "better"])),
        "selections": [
            {"selection_id": selection_id, "price": draw(st.sampled_from([price, "2.00", "1.50"]))}
            for selection_id, price in legs
        ],
    }


def _bet_bodies(selection_ids: list[int]) -> st.SearchStrategy[Any]:
    leg = st.fixed_dictionaries(
        {
            "selection_id": st.sampled_from(selection_ids) | st.integers(min_value=-3, max_value=2**64) | json_values,
            "price": prices | json_values,
        }
    )
    near_valid = st.fixed_dictionaries(
        {
            "idempotency_key": st.text(min_size=0, max_size=70) | json_values,
            "stake": stakes,
            "selections": st.lists(leg | json_values, max_size=4) | json_values,
        },
        optional={"v": st.sampled_from([1, 2, True, "1"]), "price_policy": st.sampled_from(["none", "any", "x", 1])},
    )
    return near_valid | json_values


def _rate_limits_clear(redis_client) -> None:
    for key in redis_client.scan_iter(match=f"{os.environ['SPORTSBOOK_NAMESPACE']}:rl:*", count=1000):
        redis_client.delete(key)


def _money_of(user) -> tuple[Decimal, int]:
    return Wallet.objects.get(user=user).balance, LedgerEntry.objects.filter(wallet__user=user).count()


def _assert_clear_refusal(response) -> dict:
    assert response.status_code < 500, response.content[:300]
    assert response["Content-Type"] == "application/json"
    body = response.json()
    if response.status_code >= 400:
        assert body["error"]["code"]
        assert body["error"]["message"].strip()
    return body


@pytest.mark.django_db
def test_random_bet_bodies_are_placed_or_refused_in_json_and_a_refusal_moves_no_money(punter, redis_client):
    markets = [market_create() for _ in range(3)]
    books = [[(s.id, str(s.price)) for s in selections_of(m)] for m in markets]
    selection_ids = [selection_id for book in books for selection_id, _ in book]
    client = logged_in(punter)
    statuses: Counter[int] = Counter()

    @given(body=placeable_bets(books) | _bet_bodies(selection_ids))
    @hypothesis_settings(max_examples=REST_EXAMPLES, parent=PROPERTY_SETTINGS)
    def property_(body: Any) -> None:
        _rate_limits_clear(redis_client)
        before, bets_before = _money_of(punter), Bet.objects.filter(user=punter).count()
        response = client.post("/api/bets", data=json.dumps(body), content_type="application/json")
        _assert_clear_refusal(response)
        statuses[response.status_code] += 1
        if response.status_code not in (200, 201):
            assert _money_of(punter) == before, "a refused bet moved money"
        if response.status_code not in (201, 409):
            assert Bet.objects.filter(user=punter).count() == bets_before, "a refused request recorded a bet"

    property_()
    print(f"\nbet bodies: {sorted(statuses.items())}")
    assert {201, 400, 409} <= statuses.keys()


spec_ids = st.lists(st.integers(min_value=-1, max_value=2**64), max_size=4)
legs_of_slips = st.lists(
    st.fixed_dictionaries({"selection_id": st.integers(1, 99), "market_id": st.integers(1, 99)}),
    min_size=1,
    max_size=25,
)
valid_looking_specs = st.one_of(
    st.fixed_dictionaries({"view": st.just("markets"), "markets": st.lists(st.integers(1, 10**6), min_size=1)}),
    st.fixed_dictionaries(
        {"view": st.just("markets"), "query": st.fixed_dictionaries({"sport": st.sampled_from(["football", "tennis"])})}
    ),
    st.fixed_dictionaries({"view": st.just("slip"), "slip": legs_of_slips}, optional={"stake": stakes}),
)
spec_bodies = (
    valid_looking_specs
    | st.fixed_dictionaries(
        {},
        optional={
            "view": st.sampled_from(["markets", "slip", "bets", "odds"]) | json_values,
            "markets": spec_ids | json_values,
            "query": st.fixed_dictionaries(
                {},
                optional={
                    "sport": st.text(max_size=40) | json_values,
                    "in_play": st.booleans() | json_values,
                    "starting_within_minutes": st.integers(min_value=-1, max_value=20_000) | json_values,
                },
            )
            | json_values,
            "slip": st.lists(
                st.fixed_dictionaries({"selection_id": st.integers(0, 9), "market_id": st.integers(0, 9)}), max_size=25
            )
            | json_values,
            "stake": stakes,
            "bets": st.lists(
                st.fixed_dictionaries(
                    {
                        "bet_id": st.integers(0, 9) | json_values,
                        "stake": stakes,
                        "legs": st.lists(
                            st.fixed_dictionaries(
                                {"selection_id": st.integers(1, 9), "market_id": st.integers(1, 9), "price": prices}
                            ),
                            max_size=3,
                        )
                        | json_values,
                    }
                ),
                max_size=2,
            )
            | json_values,
        },
    )
    | json_values
)


@pytest.mark.django_db
def test_random_stream_specs_are_accepted_or_refused_in_json(punter, kafka_topics, redis_client):
    client = logged_in(punter)
    statuses: Counter[int] = Counter()

    @given(body=spec_bodies)
    @hypothesis_settings(max_examples=REST_EXAMPLES, parent=PROPERTY_SETTINGS)
    def property_(body: Any) -> None:
        _rate_limits_clear(redis_client)
        response = client.post("/api/streams", data=json.dumps(body), content_type="application/json")
        answer = _assert_clear_refusal(response)
        statuses[response.status_code] += 1
        if response.status_code == 201 and answer["shared"]:
            # A query's channel is everyone's: no punter changes or ends it.
            query = spec_from_json(answer["spec"]).query
            assert query is not None
            assert answer["channel"] == shared_channel_id(query)
            assert client.delete(f"/api/streams/{answer['channel']}").status_code == 404
        elif response.status_code == 201:
            assert spec_from_json(answer["spec"]).to_json() == answer["spec"]
            channel = answer["channel"]
            changed = client.put(f"/api/streams/{channel}", data=json.dumps(body), content_type="application/json")
            assert changed.status_code == 202, changed.content[:300]
            # Ended again, so the punter's live channels stay under the per-session cap.
            assert client.delete(f"/api/streams/{channel}").status_code == 202

    property_()
    print(f"\nstream specs: {sorted(statuses.items())}")
    assert {201, 400} <= statuses.keys()
