"""The game reducer killed mid-settlement: after a goal's batch has written every punter's new
points to Redis and before Spark committed it. Restarted from its checkpoint, it settles that goal
again from the state before it (no double points), counts the answers that arrived while it was
down (no lost answer), and goes on from its state store (streaks carry over). A real Spark
process, real Kafka and Redis, on topics and keys of the test's own (the session's reducers'
game query never sees its records)."""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path

import pytest

from bench.harness import Process
from reducers import game, topics
from reducers.frames import GamePunter
from reducers.schemas import GameAnswer
from store import keys
from store.game import GameStore, stored_punter
from tests.conftest import wait_for
from tests.integration.reliability.game_query import CRASH_POINT
from tests.integration.streaming.test_game import Match, now_ms, open_question

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]

EVENT = 730_001
PUNTERS = range(1, 101)


def answer_all(producer, question_id: int, choice_of) -> None:
    for user in PUNTERS:
        record = GameAnswer(
            answer_id=uuid.uuid4().hex,
            user_id=user,
            event_id=EVENT,
            question_id=question_id,
            choice=choice_of(user),
            ts=now_ms(),
        )
        producer.produce(topics.game_answers(), key=record.key(), value=record.encode())
    producer.flush(30)


def docs(redis_client) -> dict[int, GamePunter]:
    raw = redis_client.mget([keys.game_punter(user) for user in PUNTERS])
    return {user: stored_punter(r) for user, r in zip(PUNTERS, raw, strict=True) if r is not None}


def game_process(tmp_path: Path, *, crash: bool) -> Process:
    env = {**os.environ, "SPARK_GAME_BUCKETS": "4", "SPARK_MASTER": "local[2]", "SPARK_DRIVER_METRICS": "off"}
    command = [sys.executable, "-m", "tests.integration.reliability.game_query", str(tmp_path / "checkpoint")]
    return Process("game", [*command, "crash" if crash else "run"], env=env, log=tmp_path / "game.log")


def test_a_crash_after_a_settlements_writes_scores_it_once_and_loses_no_answer(
    own_namespace, redis_client, producer, tmp_path
):
    running = game_process(tmp_path, crash=True).start()
    try:
        match = Match(producer, EVENT)
        match("kick_off")
        first = open_question(redis_client, EVENT, game.NEXT_GOAL)
        answer_all(producer, first["id"], lambda user: "home" if user <= 50 else "away")
        board = keys.game_board(f"ev:{EVENT}")
        wait_for(lambda: redis_client.zcard(board) == len(PUNTERS), timeout=120, what="every answer counted")

        match("score", minute=7, side="home")
        crash_point = f"{topics.namespace()}:{CRASH_POINT}"
        crashed_batch = int(
            wait_for(lambda: redis_client.get(crash_point), timeout=120, what="the goal's batch written")
        )
        written = docs(redis_client)
        assert written[1]["matches"] == {str(EVENT): 10}, "the settlement's writes were made before the crash"
        running.kill()
        redis_client.delete(crash_point)

        # While the reducer is down: every punter answers the question the goal opened.
        second = GameStore(redis_client).question(first["id"] + 3, event_id=EVENT)
        assert second is not None
        assert (second["kind"], second["status"]) == (game.NEXT_GOAL, "open")
        answer_all(producer, second["id"], lambda user: "away")

        running = game_process(tmp_path, crash=False).start()
        match("score", minute=20, side="away")

        def settled_twice() -> dict[int, GamePunter] | None:
            found = docs(redis_client)
            done = len(found) == len(PUNTERS) and all(
                str(second["id"]) in d["answers"] and d["answers"][str(second["id"])]["result"] in ("won", "lost")
                for d in found.values()
            )
            return found if done else None

        final = wait_for(settled_twice, timeout=240, what="the second goal settled for everyone", detail=running.tail)
        log = running.output()
    finally:
        running.stop()

    assert f"batch {crashed_batch}: " in log, "the restarted query ran the batch that was killed again"

    for user, doc in final.items():
        assert doc["answered"] == 2, f"punter {user}: each answer counted once"
        if user <= 50:
            # Right twice: 10, then 10 and a streak bonus of 2, the streak kept across the crash.
            assert (doc["matches"][str(EVENT)], doc["streak"], doc["correct"]) == (22, 2, 2), user
        else:
            assert (doc["matches"][str(EVENT)], doc["streak"], doc["correct"]) == (10, 1, 1), user
    scores = {int(member): score for member, score in redis_client.zrange(board, 0, -1, withscores=True)}
    assert scores == {user: (22 if user <= 50 else 10) for user in PUNTERS}
    day = final[1]["days"]
    assert list(day.values()) == [22]
