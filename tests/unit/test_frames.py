"""Every websocket frame round-trips through its one definition (``reducers/frames.py``), the
edge routes frames by their decoded head, and the browser knows the same frame types."""

from __future__ import annotations

import re
import typing
from decimal import Decimal
from pathlib import Path

import orjson
import pytest
from pydantic import ValidationError

from odds.core import events
from odds.streaming.consumers import _refusal
from reducers import frames
from reducers.matchstate import ConflatedMatch, encode_match, match_message
from reducers.prices import Conflated, market_state, status_change
from reducers.schemas import Incident, MatchClock, MatchStateUpdate, PriceUpdate, SelectionPrice
from reducers.subscriptions import SlipLeg, SubscriptionSpec, ended_frame
from reducers.views import (
    game_questions_frame,
    game_top_frame,
    game_view_frame,
    match_frame,
    query_frame,
    view_frame,
)
from store.game import game_state_texts

ROOT = Path(__file__).resolve().parents[2]
CHANNEL = "c" * 24
SHARED = "q" + "0" * 39


def _market() -> frames.MarketFrame:
    update = PriceUpdate(
        42, 17, "open", (SelectionPrice(101, Decimal("2.50")), SelectionPrice(102, Decimal("1.57"))), 1, 2
    )
    return market_state(item=Conflated(update, 3, 4), reducer_ts=5)


def _match() -> frames.MatchMessage:
    update = MatchStateUpdate(
        event_id=9,
        seq=3,
        sport="football",
        status="in_play",
        period=1,
        score={"home": 1, "away": 0},
        clock=MatchClock(running=True, elapsed_s=60, at=1),
        incidents=(Incident(kind="goal", side="home", period=1, at=1),),
        event_ts=1,
        produce_ts=2,
    )
    return match_message(item=ConflatedMatch(update, 1, 3), reducer_ts=4)


def _game() -> tuple[frames.GameQuestion, frames.GamePunter, frames.GameNews, frames.GameLeader]:
    from reducers import game
    from reducers.schemas import GameAnswer, GameEvent

    opened = game.book_apply(
        game.Book(), GameEvent(kind="kick_off", event_id=9, seq=1, sport="football", at=1_795_000_000_000)
    )
    question = opened.changed[0]
    answer = GameAnswer(answer_id="a" * 32, user_id=5, event_id=9, question_id=question.id, choice="home", ts=2)
    punter, news = game.punter_answer(None, answer, question)
    return (
        game.question_frame(question),
        game.punter_doc(punter),
        news[0].to_json(),
        {"rank": 1, "name": "alice", "points": 10},
    )


def stamped(body: bytes, seq: int) -> bytes:
    """A channel frame as the publishing script stamps it (``store/channels.py``)."""
    return b'{"seq":%d,' % seq + body[1:]


def every_server_frame() -> list[bytes]:
    market = _market()
    slip = SubscriptionSpec(view="slip", slip=(SlipLeg(101, 42),), stake=Decimal("10.00"))
    settled = events.BetSettled(
        bet_id=7,
        status="won",
        title="Arsenal",
        stake=Decimal("5"),
        payout=Decimal("12.5"),
        currency="GBP",
        balance=Decimal("1007.5"),
    )
    legs = events.BetLegsDecided(bet_id=7, legs=((101, "won"), (102, "void")))
    decided: frames.BetDecidedFrame = {
        "type": "bet.decided",
        "bet": {"id": 7, "status": "rejected", "reject": {"code": "market_suspended", "message": "suspended"}},
    }
    offered: frames.BetOfferedFrame = {
        "type": "bet.offered",
        "bet": {"id": 7, "stake": "10.00", "price": "1.90", "potential_return": "19.00", "until": 1, "seconds": 30},
    }
    return [
        legs.to_json(),
        events.session_ended(reason="logged_out").encode(),
        events.hello(user=None).encode(),
        events.hello(user="alice").encode(),
        events.image(markets=[frames.encode(market).decode()]).encode(),
        frames.encode(market),
        events.markets_batch(items=[frames.encode(market).decode()] * 2).encode(),
        frames.encode(status_change(state=market)),
        events.conflated(merged=4).encode(),
        events.pong(ts=1).encode(),
        events.heartbeat(ts=1).encode(),
        events.error(code="bad_json", message="frame is not valid JSON").encode(),
        events.attached(channel=CHANNEL).encode(),
        events.resumed(channel=CHANNEL, after=17, count=3, resync=False).encode(),
        ended_frame(channel_id=CHANNEL, reason="expired"),
        frames.encode(decided),
        frames.encode(offered),
        settled.to_json(),
        stamped(
            view_frame(
                kind="image",
                channel_id=CHANNEL,
                spec=slip,
                changed=[market],
                states={42: market},
                resync=True,
                matches=[_match()],
                since=True,
            ),
            1,
        ),
        stamped(view_frame(kind="delta", channel_id=CHANNEL, spec=slip, changed=[market], states={}), 2),
        stamped(match_frame(channel_id=CHANNEL, matches=[_match()]), 3),
        encode_match(_match()),
        events.matches(items=[encode_match(_match()).decode()]).encode(),
        stamped(query_frame(channel_id=SHARED, markets=[42, 57]), 4),
        stamped(query_frame(channel_id=SHARED, added=[61], removed=[42], changed=[57]), 5),
        events.attached(channel=SHARED, query={"in_play": True, "headline": True}).encode(),
        *game_frames(),
        *desk_frames(),
    ]


def desk_frames() -> list[bytes]:
    from reducers.liability import MarketNames, books_of, liability_frame, market_book_frame, ticker_frame
    from reducers.movers import movers_frame
    from tests.factories import bet_event_build

    placed = bet_event_build("placed", event_id="1:placed", legs=((101, "2.50"), (202, "1.50")))
    names = {101: MarketNames(sport="football", event="A v B", market="Match result", selections=((101, "A"),))}
    book = books_of([placed])[101]
    followed: frames.DeskFollowedFrame = {
        "type": "desk.followed",
        "v": 1,
        "channels": ["ticker", "liability", "movers"],
    }
    return [
        movers_frame([60_000], ts=9),
        frames.encode(ticker_frame(placed, names=names, reducer_ts=9, rates={})),
        frames.encode(liability_frame([market_book_frame(book, names=names[101], event_worst=-2750, rates={})], ts=9)),
        frames.encode_text(followed).encode(),
    ]


def game_frames() -> list[bytes]:
    question, me, news, leader = _game()
    rank: frames.GameRank = {"match": 1, "day": 3, "players": 10, "day_players": 40}
    return [
        stamped(
            game_view_frame(
                kind="image",
                channel_id=CHANNEL,
                event_id=9,
                me=me,
                rank=rank,
                questions=[question],
                top=[leader],
                resync=True,
            ),
            6,
        ),
        stamped(game_view_frame(kind="delta", channel_id=CHANNEL, event_id=9, me=me, news=[news], rank=rank), 7),
        game_questions_frame(event_id=9, questions=[question], batch=3),
        game_top_frame(event_id=9, top=[leader], players=10, batch=3),
        *(
            text.encode()
            for text in game_state_texts([9], [[orjson.dumps(question)], [orjson.dumps([leader]), b"10", b"3"]])
        ),
    ]


@pytest.mark.parametrize("raw", every_server_frame(), ids=lambda raw: orjson.loads(raw)["type"])
def test_every_server_frame_round_trips_through_its_definition(raw):
    decoded = frames.SERVER_FRAME.validate_json(raw)
    assert decoded == orjson.loads(raw), "nothing added, dropped or converted"
    assert orjson.loads(frames.encode(decoded)) == orjson.loads(raw)
    assert frames.head(raw)["type"] == decoded["type"]


def test_every_frame_type_is_built_by_some_test_frame():
    built = {orjson.loads(raw)["type"] for raw in every_server_frame()}
    assert built == server_frame_types()


def server_frame_types() -> set[str]:
    (union, _) = typing.get_args(frames.ServerFrame)
    found: set[str] = set()
    for member in typing.get_args(union):
        found.update(typing.get_args(typing.get_type_hints(member)["type"]))
    return found


def browser_frame_types() -> set[str]:
    """The ``type``s of the ``ServerFrame`` the browser handles: frontend/src/protocol.ts takes it
    from the generated frontend/src/contract/frames.ts (whose currency tests/unit/test_contract.py
    checks), where each member is an interface naming its ``type``s."""
    protocol = (ROOT / "frontend" / "src" / "protocol.ts").read_text()
    exported = re.search(r"export type \{([^}]*)\} from \"./contract/frames\";", protocol)
    assert exported is not None
    assert "ServerFrame" in re.findall(r"\w+", exported.group(1))
    generated = (ROOT / "frontend" / "src" / "contract" / "frames.ts").read_text()
    union = re.search(r"export type ServerFrame =(.*?);\n", generated, re.S)
    assert union is not None
    found: set[str] = set()
    for name in (m.strip() for m in union.group(1).split("|") if m.strip()):
        interface = re.search(rf"export interface {name} \{{(.*?)\n\}}", generated, re.S)
        assert interface is not None, name
        kinds = re.search(r'^  type: ((?:"[^"]+"(?:\s*\|\s*)?)+);', interface.group(1), re.M)
        assert kinds is not None, name
        found.update(re.findall(r'"([^"]+)"', kinds.group(1)))
    return found


def test_the_browser_handles_the_same_frame_types_the_server_defines():
    assert browser_frame_types() == server_frame_types()


def test_a_channel_frames_sequence_is_read_by_decoding_whatever_its_key_order():
    assert frames.frame_seq(b'{"type":"view.delta","v":1,"channel":"x","markets":[],"seq":12}') == 12
    assert frames.frame_seq('{"seq":13,"type":"view.match","v":1,"channel":"x","matches":[]}') == 13
    with pytest.raises(ValueError, match="no seq"):
        frames.frame_seq(ended_frame(channel_id=CHANNEL, reason="expired"))


def test_text_that_is_not_a_frame_has_no_kind():
    assert frames.kind("hello") is None
    assert frames.kind("[1]") is None
    assert frames.kind('{"type":"market.status","v":1}') == "market.status"


@pytest.mark.parametrize(
    ("raw", "decoded"),
    [
        ('{"type": "watch", "markets": [42, 43]}', {"type": "watch", "markets": [42, 43]}),
        (
            '{"type": "watch", "markets": [42], "batch": true, "since": {"42": [17, "open"]}}',
            {"type": "watch", "markets": [42], "batch": True, "since": {42: (17, "open")}},
        ),
        ('{"type": "watch", "markets": [42], "batch": "yes"}', {"type": "watch", "markets": [42], "batch": False}),
        ('{"type": "unwatch", "markets": [42]}', {"type": "unwatch", "markets": [42]}),
        (orjson.dumps({"type": "attach", "channel": CHANNEL}).decode(), {"type": "attach", "channel": CHANNEL}),
        (
            orjson.dumps({"type": "attach", "channel": CHANNEL, "last_seq": 0}).decode(),
            {"type": "attach", "channel": CHANNEL, "last_seq": 0},
        ),
        ('{"type": "ping"}', {"type": "ping"}),
        ('{"type": "desk"}', {"type": "desk"}),
    ],
)
def test_every_client_message_decodes_through_its_definition(raw, decoded):
    assert frames.CLIENT_MESSAGE.validate_json(raw) == decoded


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        ("{not json", "bad_json"),
        ("[1, 2]", "bad_message"),
        ('{"markets": [1]}', "bad_message"),
        ('{"type": 5}', "bad_message"),
        ('{"type": "launch"}', "unknown_type"),
        ('{"type": "watch"}', "bad_markets"),
        ('{"type": "watch", "markets": [true]}', "bad_markets"),
        ('{"type": "watch", "markets": [1.0]}', "bad_markets"),
        ('{"type": "watch", "markets": [18446744073709551616]}', "bad_markets"),
        ('{"type": "unwatch", "markets": [0]}', "bad_markets"),
        ('{"type": "watch", "markets": [1], "since": {"1": [true, "open"]}}', "bad_since"),
        ('{"type": "attach", "channel": 5}', "bad_channel"),
        (orjson.dumps({"type": "attach", "channel": CHANNEL, "last_seq": -1}).decode(), "bad_last_seq"),
        (orjson.dumps({"type": "attach", "channel": CHANNEL, "last_seq": False}).decode(), "bad_last_seq"),
    ],
)
def test_a_malformed_client_message_is_refused_with_the_documented_code(raw, code):
    with pytest.raises(ValidationError) as refused:
        frames.CLIENT_MESSAGE.validate_json(raw)
    assert _refusal(refused.value, raw)[0] == code
