"""The predictor game's writes: a punter's answer, a trader's void. Each becomes a record on its
Kafka topic; the game reducer decides what it does (docs/architecture.md, "The predictor game").

The checks here answer at once what the reducer would decide anyway (a closed question, a
choice the question does not offer, a second answer); the reducer's decision is the last word:
an answer that raced the question's close is refused there, with its reason, on the punter's
game channel.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass

from django.conf import settings

from odds.catalogue.models import Event
from odds.core.kafka import producer_shared
from reducers import topics
from reducers.game import CLOSED, OPEN, SETTLED, VOID
from reducers.schemas import GAME_VOID_REASON_MAX, GameAnswer, GameEvent
from store.clients import redis_client
from store.game import GameStore

# How long the API holds a punter's claim on a question after sending the answer: long past the
# reducer's decision, which the punter's game channel carries.
ANSWER_CLAIM_S = 300


class GameRefused(Exception):
    """A game request refused: ``status`` for the API, ``code`` and ``message`` for the punter."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


@dataclass(frozen=True)
class AnswerTaken:
    answer_id: str
    question_id: int
    choice: str
    ts: int


def _store() -> GameStore:
    return GameStore(redis_client(settings.REDIS_URL))


def _now_ms() -> int:
    return int(time.time() * 1000)


def _send(topic: str, *, key: bytes, value: bytes) -> None:
    """Produce the record and wait for the broker's acknowledgement (acks=all)."""
    producer = producer_shared(linger_ms=0)
    errors: list[str] = []

    def delivered(err: object, msg: object) -> None:
        if err is not None:
            errors.append(str(err))

    producer.produce(topic, key=key, value=value, on_delivery=delivered)
    if producer.flush(10) or errors:
        raise GameRefused(503, "not_sent", "the game cannot take it now; try again")


def game_answer(*, user_id: int, name: str, event_id: int, question_id: int, choice: str) -> AnswerTaken:
    """Send the punter's answer to the game reducer. Refused at once when the question is not
    open, does not offer ``choice``, or the punter answered it already."""
    store = _store()
    question = store.question(question_id, event_id=event_id)
    if question is None:
        raise GameRefused(404, "unknown_question", "no such question in this event's game")
    if choice not in question["options"]:
        raise GameRefused(400, "bad_choice", f"choose one of {', '.join(question['options'])}")
    if question["status"] == VOID:
        raise GameRefused(409, "question_void", "this question was voided")
    if question["status"] in (CLOSED, SETTLED) or question["status"] != OPEN:
        raise GameRefused(409, "question_closed", "this question has closed")
    punter = store.punter(user_id)
    if (punter is not None and str(question_id) in punter["answers"]) or not store.answer_claim(
        user_id=user_id, question_id=question_id, keep_s=ANSWER_CLAIM_S
    ):
        raise GameRefused(409, "already_answered", "you have answered this question")
    store.name_set(user_id=user_id, name=name)
    answer = GameAnswer(
        answer_id=uuid.uuid4().hex,
        user_id=user_id,
        event_id=event_id,
        question_id=question_id,
        choice=choice,
        ts=_now_ms(),
    )
    try:
        _send(topics.game_answers(), key=answer.key(), value=answer.encode())
    except GameRefused:
        store.answer_release(user_id=user_id, question_id=question_id)
        raise
    return AnswerTaken(answer_id=answer.answer_id, question_id=question_id, choice=choice, ts=answer.ts)


def game_question_void(*, event_id: int, question_id: int, reason: str) -> None:
    """Void a question (a trader's call: the feed got the event wrong, the question is unfair):
    every answer to it scores nothing and leaves the punter's streak as it was. A question
    already settled or voided is refused."""
    reason = reason.strip()
    if not reason or len(reason) > GAME_VOID_REASON_MAX:
        raise GameRefused(400, "bad_reason", f"give a reason of at most {GAME_VOID_REASON_MAX} characters")
    question = _store().question(question_id, event_id=event_id)
    if question is None:
        raise GameRefused(404, "unknown_question", "no such question in this event's game")
    if question["status"] in (SETTLED, VOID):
        raise GameRefused(409, "question_decided", f"this question is {question['status']} already")
    try:
        sport = Event.objects.select_related("competition__sport").get(id=event_id).competition.sport.slug
    except Event.DoesNotExist as exc:
        raise GameRefused(404, "unknown_question", "no such event") from exc
    void = GameEvent(
        kind="void", event_id=event_id, seq=1, sport=sport, at=_now_ms(), question_id=question_id, reason=reason
    )
    _send(topics.game_events(), key=void.key(), value=void.encode())
