"""The predictor game through the real topics, the Spark game query (transformWithStateInPandas on
the RocksDB state store), Redis and the websocket: a visitor sees the questions and the top, a
punter answers through the API and their game channel brings the answer's fate, points and rank."""

from __future__ import annotations

import time
import uuid

import orjson
import pytest
from channels.testing import WebsocketCommunicator
from django.test import Client

from reducers import game, topics
from reducers.frames import GameQuestion
from reducers.schemas import GameAnswer, GameEvent
from store import keys
from store.game import GameStore
from tests.conftest import wait_for
from tests.integration.streaming.dead_letters import dead_letter_of
from tests.integration.streaming.test_streams import ORIGIN, logged_in, websocket
from webapp.asgi import application

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def now_ms() -> int:
    return int(time.time() * 1000)


class Match:
    """One football match's game events, produced as the feed produces them."""

    def __init__(self, producer, event_id: int) -> None:
        self.producer = producer
        self.event_id = event_id
        self.seq = 0
        self.score = [0, 0]

    def __call__(self, kind: str, *, minute: int = 0, side: str = "") -> GameEvent:
        self.seq += 1
        if kind == "score":
            self.score[0 if side == "home" else 1] += 1
        event = GameEvent(
            kind=kind,
            event_id=self.event_id,
            seq=self.seq,
            sport="football",
            minute=minute,
            side=side,
            score=(self.score[0], self.score[1]),
            at=now_ms(),
        )
        self.producer.produce(topics.game_events(), key=event.key(), value=event.encode())
        self.producer.flush(10)
        return event


def open_question(redis_client, event_id: int, kind: str) -> GameQuestion:
    def found() -> GameQuestion | None:
        return next(
            (q for q in GameStore(redis_client).questions(event_id) if q["kind"] == kind and q["status"] == "open"),
            None,
        )

    return wait_for(found, timeout=120, what=f"an open {kind} question of event {event_id}")


@pytest.fixture(scope="module")
def game_running(reducers_running, spark, producer, redis_client, tmp_path_factory):
    """The game query, started for the module's tests (and stopped after them) once it has run a
    batch; started again when its first batch's planning failed: the Python worker that tells
    Spark the query's state schemas must connect back within ten seconds (Spark's own limit, not
    a setting), which a loaded two-core machine can miss; the reducers' supervisor restarts the
    query the same way (spark/jobs/reducers.py)."""
    from django.conf import settings

    from spark.jobs import game as job

    Match(producer, 720_000)("kick_off")
    checkpoint = str(tmp_path_factory.mktemp("game-checkpoint"))
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if "game" in reducers_running and GameStore(redis_client).questions(720_000):
            break
        if "game" not in reducers_running or not reducers_running["game"].isActive:
            reducers_running["game"] = job.start(
                spark,
                bootstrap=settings.KAFKA_BOOTSTRAP_SERVERS,
                redis_url=settings.REDIS_URL,
                checkpoint_dir=checkpoint,
            )
        time.sleep(0.5)
    else:
        query = reducers_running.get("game")
        pytest.fail(f"the game query ran no batch: {query.exception() if query is not None else 'not started'}")
    yield reducers_running["game"]
    # Started for this module's tests only (``ON_DEMAND_QUERIES``).
    reducers_running.pop("game").stop()


async def frame_of(communicator: WebsocketCommunicator, match, timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        frame = await communicator.receive_json_from(timeout=max(0.1, deadline - time.monotonic()))
        if match(frame):
            return frame


async def visitor(event_id: int) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(application, "/ws/odds/", headers=[ORIGIN])
    connected, _ = await communicator.connect()
    assert connected
    assert (await communicator.receive_json_from())["type"] == "hello"
    await communicator.send_json_to({"type": "watch", "markets": [], "games": [event_id]})
    return communicator


async def punter_channel(client: Client, event_id: int) -> tuple[WebsocketCommunicator, str]:
    response = client.post("/api/streams", {"view": "game", "event": event_id}, content_type="application/json")
    assert response.status_code == 201, response.content
    channel = response.json()["channel"]
    communicator = await websocket(client)
    await communicator.send_json_to({"type": "attach", "channel": channel})
    assert (await communicator.receive_json_from())["type"] == "attached"
    assert client.post(f"/api/streams/{channel}/begin").status_code == 202
    return communicator, channel


async def test_a_punters_answer_is_settled_by_the_goal_and_the_punter_and_a_visitor_see_it_live(
    django_user_model, game_running, producer, redis_client
):
    event_id = 720_001
    match = Match(producer, event_id)
    match("kick_off")
    goal = open_question(redis_client, event_id, game.NEXT_GOAL)
    watcher = await visitor(event_id)
    state = await frame_of(watcher, lambda f: f["type"] == "game.state")
    assert goal["id"] in [q["id"] for q in state["questions"]]

    client = logged_in(django_user_model, "predictor")
    socket, _channel = await punter_channel(client, event_id)
    image = await frame_of(socket, lambda f: f["type"] == "game.image")
    assert image["me"] is None
    assert goal["id"] in [q["id"] for q in image["questions"]]

    answered = client.post(
        "/api/game/answers",
        {"event_id": event_id, "question_id": goal["id"], "choice": "away"},
        content_type="application/json",
    )
    assert answered.status_code == 202, answered.content
    accepted = await frame_of(socket, lambda f: f["type"] == "game.delta" and f.get("news"))
    assert [(n["kind"], n["choice"]) for n in accepted["news"]] == [("accepted", "away")]
    assert accepted["seq"] == image["seq"] + 1
    assert (accepted["rank"]["match"], accepted["rank"]["players"]) == (1, 1), "on the board once answered"

    match("score", minute=11, side="away")
    settled = await frame_of(socket, lambda f: any(n["kind"] == "settled" for n in f.get("news", [])))
    [news] = settled["news"]
    assert (news["result"], news["points"]) == ("won", 10)
    assert settled["me"]["matches"] == {str(event_id): 10}
    # The match board still has this punter first of one; the day's board holds every punter the
    # session's other games scored today, so the day rank may move with the points — and only then
    # is a rank sent.
    if "rank" in settled:
        assert (settled["rank"]["match"], settled["rank"]["players"]) == (1, 1)
        assert settled["rank"]["day"] != accepted["rank"]["day"], "a rank is sent only when it moved"
    questions = await frame_of(
        watcher,
        lambda f: f["type"] == "game.questions" and any(q["id"] == goal["id"] for q in f["questions"]),
    )
    assert next(q for q in questions["questions"] if q["id"] == goal["id"])["outcome"] == "away"
    top = await frame_of(watcher, lambda f: f["type"] == "game.top" and f["top"] and f["top"][0]["points"] == 10)
    assert top["top"][0]["name"] == "predictor"
    user = django_user_model.objects.get(username="predictor")
    assert redis_client.zscore(keys.game_board(f"ev:{event_id}"), str(user.pk)) == 10
    board = client.get(f"/api/game/leaderboard?event={event_id}")
    assert board.status_code == 200, board.content
    assert (board.json()["top"][0]["name"], board.json()["me"]) == ("predictor", {"rank": 1, "points": 10})
    public = Client().get(f"/api/game/events/{event_id}")
    assert public.status_code == 200, public.content
    assert next(q for q in public.json()["questions"] if q["id"] == goal["id"])["status"] == "settled"
    await socket.disconnect()
    await watcher.disconnect()


async def test_an_answer_that_raced_the_close_is_refused_with_its_reason_on_the_punters_channel(
    django_user_model, game_running, producer, redis_client
):
    event_id = 720_002
    match = Match(producer, event_id)
    match("kick_off")
    card = open_question(redis_client, event_id, game.CARD)
    client = logged_in(django_user_model, "late-predictor")
    user = django_user_model.objects.get(username="late-predictor")
    socket, _ = await punter_channel(client, event_id)
    await frame_of(socket, lambda f: f["type"] == "game.image")
    match("card", minute=4, side="home")
    wait_for(
        lambda: (q := GameStore(redis_client).question(card["id"], event_id=event_id)) and q["status"] == "settled",
        what="the card question settled",
    )

    refused_by_api = client.post(
        "/api/game/answers",
        {"event_id": event_id, "question_id": card["id"], "choice": "yes"},
        content_type="application/json",
    )
    assert refused_by_api.status_code == 409
    assert refused_by_api.json()["error"]["code"] == "question_closed"
    # One the API took just before the card, that reached Kafka after it (ts after the close).
    late = GameAnswer(
        answer_id=uuid.uuid4().hex,
        user_id=user.pk,
        event_id=event_id,
        question_id=card["id"],
        choice="yes",
        ts=now_ms(),
    )
    producer.produce(topics.game_answers(), key=late.key(), value=late.encode())
    producer.flush(10)
    refused = await frame_of(socket, lambda f: f["type"] == "game.delta" and f.get("news"))
    assert [(n["kind"], n["reason"]) for n in refused["news"]] == [("refused", game.QUESTION_CLOSED)]
    assert redis_client.zscore(keys.game_board(f"ev:{event_id}"), str(user.pk)) is None
    await socket.disconnect()


def test_a_second_answer_is_refused_by_the_api_and_a_bad_one_is_a_400(
    django_user_model, game_running, producer, redis_client
):
    event_id = 720_003
    Match(producer, event_id)("kick_off")
    goal = open_question(redis_client, event_id, game.NEXT_GOAL)
    client = logged_in(django_user_model, "eager")
    body = {"event_id": event_id, "question_id": goal["id"], "choice": "home"}
    assert client.post("/api/game/answers", body, content_type="application/json").status_code == 202
    again = client.post("/api/game/answers", {**body, "choice": "none"}, content_type="application/json")
    assert (again.status_code, again.json()["error"]["code"]) == (409, "already_answered")
    bad = client.post("/api/game/answers", {**body, "choice": "draw"}, content_type="application/json")
    assert (bad.status_code, bad.json()["error"]["code"]) == (400, "bad_choice")
    anonymous = Client().post("/api/game/answers", body, content_type="application/json")
    assert anonymous.status_code == 401


def test_bad_answers_and_bad_events_go_to_their_dead_letter_topics_with_the_reason(game_running, producer):
    bad_answer = orjson.dumps({"v": 1, "answer_id": "short", "user_id": 5})
    producer.produce(topics.game_answers(), key=b"5", value=bad_answer)
    bad_event = orjson.dumps({"v": 1, "kind": "penalty", "event_id": 720_004, "seq": 1, "sport": "football", "at": 1})
    producer.produce(topics.game_events(), key=b"720004", value=bad_event)
    producer.flush(10)
    answer_headers = dict(dead_letter_of(bad_answer, source=topics.game_answers()).headers())
    assert answer_headers["reason"] == b"bad_field"
    event_letter = dead_letter_of(bad_event, source=topics.game_events())
    assert dict(event_letter.headers())["reason"] == b"bad_field"
    assert dict(event_letter.headers())["origin"].startswith(topics.game_events().encode())


async def test_a_trader_voids_an_open_question_and_the_punters_answer_scores_nothing(
    django_user_model, game_running, producer, redis_client
):
    from django.test import Client as StaffClient

    from tests.factories import market_create, sign_in, user_create

    market = market_create()
    event_id = market.event_id
    match = Match(producer, event_id)
    match("kick_off")
    goal = open_question(redis_client, event_id, game.NEXT_GOAL)
    client = logged_in(django_user_model, "voided")
    user = django_user_model.objects.get(username="voided")
    socket, _ = await punter_channel(client, event_id)
    await frame_of(socket, lambda f: f["type"] == "game.image")
    body = {"event_id": event_id, "question_id": goal["id"], "choice": "home"}
    assert client.post("/api/game/answers", body, content_type="application/json").status_code == 202
    await frame_of(socket, lambda f: f["type"] == "game.delta" and f.get("news"))

    trader = StaffClient()
    sign_in(trader, user_create(balance="0", staff=True))
    voided = trader.post(
        f"/trading/api/game/questions/{goal['id']}/void",
        {"event_id": event_id, "reason": "the feed missed a goal"},
        content_type="application/json",
    )
    assert voided.status_code == 202, voided.content
    news = await frame_of(socket, lambda f: any(n["kind"] == "settled" for n in f.get("news", [])))
    assert [(n["result"], n["points"]) for n in news["news"]] == [("void", 0)]
    question = GameStore(redis_client).question(goal["id"], event_id=event_id)
    assert question is not None
    assert (question["status"], question["void_reason"]) == ("void", "the feed missed a goal")
    # A goal afterwards settles nothing of the voided question's.
    match("score", minute=8, side="home")
    wait_for(
        lambda: any(
            q["kind"] == game.NEXT_GOAL and q["status"] == "open" and q["id"] != goal["id"]
            for q in GameStore(redis_client).questions(event_id)
        ),
        what="the next next-goal question",
    )
    assert redis_client.zscore(keys.game_board(f"ev:{event_id}"), str(user.pk)) == 0
    again = trader.post(
        f"/trading/api/game/questions/{goal['id']}/void",
        {"event_id": event_id, "reason": "twice"},
        content_type="application/json",
    )
    assert (again.status_code, again.json()["error"]["code"]) == (409, "question_decided")
    await socket.disconnect()
