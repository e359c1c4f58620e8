"""The in-play predictor game (seed 000's third variation): its questions and every punter's
points, as plain data and decisions.

Questions open from match events (``reducers.schemas.GameEvent``) and close on time (the match
clock's minute) or on the event that decides them; match events settle them; a trader can void
one. A punter answers each question once; an answer counts only if the API took it before the
question closed. A correct answer scores its option's points and a bonus for the punter's streak
of correct answers; no money moves.

The game reducer (``spark/jobs/game.py``) keeps the question book and the punters' states in
Spark's state store, in buckets of punters: every bucket applies every match event to its own
copy of the book (the broadcast role of the match-event topic) and the answers of its own
punters (the data role of the answer topic). ``game_step`` is what one bucket does with one
batch, over the bucket's punters as its state holds them (``PunterTable``, changed in place);
nothing here reads or writes anything else. The store (``store/game.py``) writes what a step
changed to Redis: questions, punters' states, leaderboards, and the frames of the game channels.
"""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any, Literal, NamedTuple

import numpy as np
import orjson

from reducers.frames import GameNews, GamePunter, GameQuestion, QuestionStatus
from reducers.schemas import GameAnswer, GameEvent

# --- the questions ---

NEXT_GOAL = "next_goal"
CARD = "card"
HALF_TIME_RESULT = "half_time_result"
NEXT_SCORE = "next_score"
QUESTION_KINDS = (NEXT_GOAL, CARD, HALF_TIME_RESULT, NEXT_SCORE)
# The options each kind offers, in the order a page shows them.
OPTIONS: dict[str, tuple[str, ...]] = {
    NEXT_GOAL: ("home", "away", "none"),
    CARD: ("yes", "no"),
    HALF_TIME_RESULT: ("home", "draw", "away"),
    NEXT_SCORE: ("home", "away"),
}
# Points for a correct answer, by kind and option (the likelier outcome pays less).
POINTS: dict[str, dict[str, int]] = {
    NEXT_GOAL: {"home": 10, "away": 10, "none": 5},
    CARD: {"yes": 6, "no": 3},
    HALF_TIME_RESULT: {"home": 15, "draw": 15, "away": 15},
    NEXT_SCORE: {"home": 4, "away": 4},
}
# A correct answer's bonus: this much for each correct answer in a row before it, up to the cap.
STREAK_BONUS = 2
STREAK_BONUS_CAP = 5
# A next-goal question runs to the next quarter hour at least GOAL_MIN_WINDOW minutes away; a
# card question for CARD_WINDOW minutes; answers to the half-time result close at its minute.
GOAL_STEP = 15
GOAL_MIN_WINDOW = 10
CARD_WINDOW = 10
HALF_TIME_CLOSE_MINUTE = 30
FULL_TIME_MINUTE = 90
# Question ids are the event's id times this plus the question's number within the event.
QUESTIONS_PER_EVENT = 1000
# A finished match's questions stay in the book this long after full time (event time), for
# answers still on their way and for the pages; then the book and the punters let them go.
BOOK_KEEP_MS = 3600_000
# Days of points a punter's state keeps (the day leaderboards of today and yesterday).
DAYS_KEPT = 2
# A game's questions, its leaderboard and top, and a day's leaderboard stay in the store this long
# after their last change (the leaderboard page lists the games of the last week); then the store
# lets them go by itself.
RESULTS_KEEP_S = 7 * 86_400

OPEN: QuestionStatus = "open"
CLOSED: QuestionStatus = "closed"
SETTLED: QuestionStatus = "settled"
VOID: QuestionStatus = "void"
# An answer's result: ``pending`` until its question settles.
PENDING = "pending"
WON = "won"
LOST = "lost"
ANSWER_RESULTS = (PENDING, WON, LOST, "void")

# Why an answer is refused (docs/protocol.md, ``game.delta``).
UNKNOWN_QUESTION = "unknown_question"
QUESTION_CLOSED = "question_closed"
QUESTION_VOID = "question_void"
ALREADY_ANSWERED = "already_answered"
BAD_CHOICE = "bad_choice"
REFUSALS = (UNKNOWN_QUESTION, QUESTION_CLOSED, QUESTION_VOID, ALREADY_ANSWERED, BAD_CHOICE)
# The reason a question is voided by the game itself.
MATCH_ENDED = "the match ended before anyone scored again"

IN_PLAY = "in_play"
FINISHED = "finished"


def day_of(at_ms: int) -> str:
    """The UTC day of an epoch-ms time, as the day leaderboards name it (``2026-11-28``)."""
    return datetime.fromtimestamp(at_ms / 1000, UTC).strftime("%Y-%m-%d")


@dataclass(frozen=True, slots=True)
class Question:
    """One question of an event's game. ``until_minute``: a window question (next goal, a card)
    settles ``none``/``no`` when the clock reaches it; ``close_minute``: answers stop counting
    when the clock reaches it, or when the question's event happens (``closed_at``, epoch ms)."""

    id: int
    event_id: int
    kind: str
    sport: str
    opened_at: int
    day: str
    until_minute: int | None = None
    close_minute: int | None = None
    status: QuestionStatus = OPEN
    closed_at: int | None = None
    outcome: str | None = None
    void_reason: str | None = None

    @property
    def options(self) -> tuple[str, ...]:
        return OPTIONS[self.kind]

    @property
    def decided(self) -> bool:
        """Settled or void: nothing changes it any more."""
        return self.status in (SETTLED, VOID)


def question_title(question: Question) -> str:
    """The question in words (the page puts the teams' names on ``home`` and ``away``)."""
    if question.kind == NEXT_GOAL:
        return f"Who scores next, before {question.until_minute}'?"
    if question.kind == CARD:
        return f"A card before {question.until_minute}'?"
    if question.kind == HALF_TIME_RESULT:
        return "Half-time result?"
    return "Who wins the next game?" if question.sport == "tennis" else "Who scores next?"


def question_frame(question: Question) -> GameQuestion:
    """A question as the game's frames carry it (docs/protocol.md)."""
    return {
        "id": question.id,
        "event_id": question.event_id,
        "kind": question.kind,
        "title": question_title(question),
        "options": list(question.options),
        "points": POINTS[question.kind],
        "status": question.status,
        "day": question.day,
        "opened_at": question.opened_at,
        "until_minute": question.until_minute,
        "close_minute": question.close_minute,
        "closed_at": question.closed_at,
        "outcome": question.outcome,
        "void_reason": question.void_reason,
    }


@dataclass(frozen=True, slots=True)
class Match:
    """The book's view of one event: where its clock and score were at the newest event applied."""

    event_id: int
    sport: str
    day: str
    seq: int = 0
    minute: int = 0
    score: tuple[int, int] = (0, 0)
    status: str = IN_PLAY
    finished_at: int | None = None
    # Questions numbered so far (the next one's number is one more).
    numbered: int = 0


@dataclass(frozen=True)
class Book:
    """Every live event's game: its match and its questions by id. ``now``: the newest event
    time applied (epoch ms); the book forgets finished matches by it, never by a clock of its own."""

    matches: Mapping[int, Match] = field(default_factory=dict)
    questions: Mapping[int, Question] = field(default_factory=dict)
    now: int = 0

    def of_event(self, event_id: int) -> list[Question]:
        return [q for q in self.questions.values() if q.event_id == event_id]


def book_to_json(book: Book) -> bytes:
    """The book as bytes (the game reducer's state)."""
    return orjson.dumps(
        {
            "now": book.now,
            "matches": [dataclasses.astuple(m) for m in book.matches.values()],
            "questions": [dataclasses.astuple(q) for q in book.questions.values()],
        }
    )


def book_from_json(raw: bytes | None) -> Book:
    """The book ``book_to_json`` wrote; an empty book for none."""
    if not raw:
        return Book()
    data = orjson.loads(raw)
    matches = {}
    for row in data["matches"]:
        match = Match(*row)
        home, away = match.score
        matches[match.event_id] = dataclasses.replace(match, score=(home, away))
    questions = {row[0]: Question(*row) for row in data["questions"]}
    return Book(matches=matches, questions=questions, now=data["now"])


@dataclass(frozen=True)
class BookChange:
    """A book after one event, and the questions the event opened, closed, settled or voided (each
    in its new state)."""

    book: Book
    changed: tuple[Question, ...] = ()


def _goal_until(minute: int) -> int | None:
    """The minute a next-goal question opened at ``minute`` runs to: the next quarter hour at
    least ``GOAL_MIN_WINDOW`` away; ``None`` when that is past full time."""
    until = ((minute + GOAL_MIN_WINDOW + GOAL_STEP - 1) // GOAL_STEP) * GOAL_STEP
    return until if until <= FULL_TIME_MINUTE else None


def _card_until(minute: int) -> int | None:
    until = minute + CARD_WINDOW
    return until if until <= FULL_TIME_MINUTE else None


def _result(score: tuple[int, int]) -> str:
    home, away = score
    return "home" if home > away else "away" if away > home else "draw"


class _Apply:
    """One event applied to one match of the book: the questions it changes, gathered."""

    def __init__(self, book: Book, match: Match, event: GameEvent) -> None:
        self.book = book
        self.match = match
        self.event = event
        self.changed: dict[int, Question] = {}

    def questions(self) -> list[Question]:
        """The match's questions as they stand now (changes of this event included)."""
        found = {q.id: q for q in self.book.of_event(self.match.event_id)}
        found.update(self.changed)
        return [found[i] for i in sorted(found)]

    def open_of(self, kind: str) -> Question | None:
        return next((q for q in self.questions() if q.kind == kind and q.status == OPEN), None)

    def put(self, question: Question) -> None:
        self.changed[question.id] = question

    def open(self, kind: str, *, until: int | None = None, close: int | None = None) -> None:
        if self.match.numbered + 1 >= QUESTIONS_PER_EVENT:
            return  # an event's questions are numbered within its block of ids
        number = self.match.numbered + 1
        self.match = dataclasses.replace(self.match, numbered=number)
        self.put(
            Question(
                id=self.match.event_id * QUESTIONS_PER_EVENT + number,
                event_id=self.match.event_id,
                kind=kind,
                sport=self.match.sport,
                opened_at=self.event.at,
                day=self.match.day,
                until_minute=until,
                close_minute=close if close is not None else until,
            )
        )

    def close(self, question: Question) -> Question:
        if question.status != OPEN:
            return question
        closed = dataclasses.replace(question, status=CLOSED, closed_at=self.event.at)
        self.put(closed)
        return closed

    def settle(self, question: Question, outcome: str) -> None:
        closed = self.close(question)
        self.put(dataclasses.replace(closed, status=SETTLED, outcome=outcome))

    def void(self, question: Question, reason: str) -> None:
        closed = self.close(question)
        self.put(dataclasses.replace(closed, status=VOID, void_reason=reason))


def _open_windows(change: _Apply, minute: int) -> None:
    """Open the window questions a football match lacks at ``minute``."""
    if change.open_of(NEXT_GOAL) is None and (until := _goal_until(minute)) is not None:
        change.open(NEXT_GOAL, until=until)
    if change.open_of(CARD) is None and (until := _card_until(minute)) is not None:
        change.open(CARD, until=until)


def _start(change: _Apply) -> None:
    """The questions of a match seen for the first time (at kick-off, or later when the game
    started after it)."""
    minute = change.event.minute
    if change.match.sport != "football":
        change.open(NEXT_SCORE)
        return
    _open_windows(change, minute)
    if minute < HALF_TIME_CLOSE_MINUTE:
        change.open(HALF_TIME_RESULT, close=HALF_TIME_CLOSE_MINUTE)


def _football(change: _Apply) -> None:
    event = change.event
    if event.kind == "score":
        goal = change.open_of(NEXT_GOAL)
        if goal is not None:
            change.settle(goal, event.side)
        if (until := _goal_until(event.minute)) is not None:
            change.open(NEXT_GOAL, until=until)
    elif event.kind == "card":
        card = change.open_of(CARD)
        if card is not None:
            change.settle(card, "yes")
        if (until := _card_until(event.minute)) is not None:
            change.open(CARD, until=until)
    elif event.kind == "minute":
        for question in change.questions():
            if question.status != OPEN:
                continue
            if question.kind in (NEXT_GOAL, CARD) and question.until_minute is not None:
                if event.minute >= question.until_minute:
                    change.settle(question, "none" if question.kind == NEXT_GOAL else "no")
            elif question.close_minute is not None and event.minute >= question.close_minute:
                change.close(question)
        _open_windows(change, event.minute)
    elif event.kind == "half_time":
        for question in change.questions():
            if question.kind == HALF_TIME_RESULT and not question.decided:
                change.settle(question, _result(event.score))


def _full_time(change: _Apply) -> None:
    """Every question still undecided is decided: a window's event never came (``none``, ``no``),
    the half-time result by the score, a next score can no longer happen (void)."""
    for question in change.questions():
        if question.decided:
            continue
        if question.kind == NEXT_GOAL:
            change.settle(question, "none")
        elif question.kind == CARD:
            change.settle(question, "no")
        elif question.kind == HALF_TIME_RESULT:
            change.settle(question, _result(change.event.score))
        else:
            change.void(question, MATCH_ENDED)


def _other_sports(change: _Apply) -> None:
    event = change.event
    if event.kind == "score":
        question = change.open_of(NEXT_SCORE)
        if question is not None:
            change.settle(question, event.side)
        change.open(NEXT_SCORE)


def _void(book: Book, event: GameEvent) -> BookChange:
    question = book.questions.get(event.question_id or 0)
    if question is None or question.event_id != event.event_id or question.decided:
        return BookChange(book)  # unknown, or decided already: a void changes nothing then
    closed_at = question.closed_at if question.closed_at is not None else event.at
    voided = dataclasses.replace(question, status=VOID, closed_at=closed_at, void_reason=event.reason)
    return BookChange(dataclasses.replace(book, questions={**book.questions, voided.id: voided}), (voided,))


def book_apply(book: Book, event: GameEvent) -> BookChange:
    """Apply one match event (or a trader's void) to the book. An event at or below the sequence
    its match has applied changes nothing (a replay, a duplicate), nor does anything after full
    time but a void."""
    if event.kind == "void":
        return _void(book, event)
    match = book.matches.get(event.event_id)
    if match is not None and (event.seq <= match.seq or match.status == FINISHED):
        return BookChange(book)
    new = match is None
    if new:
        match = Match(event_id=event.event_id, sport=event.sport, day=day_of(event.at))
    assert match is not None
    change = _Apply(book, match, event)
    if new and event.kind != "full_time":
        _start(change)
    if event.kind == "full_time":
        _full_time(change)
    elif match.sport == "football":
        _football(change)
    else:
        _other_sports(change)
    finished = event.kind == "full_time"
    applied = dataclasses.replace(
        change.match,
        seq=event.seq,
        minute=max(change.match.minute, event.minute),
        score=event.score,
        status=FINISHED if finished else IN_PLAY,
        finished_at=event.at if finished else None,
    )
    questions = {**book.questions, **change.changed}
    updated = Book(
        matches={**book.matches, applied.event_id: applied}, questions=questions, now=max(book.now, event.at)
    )
    return BookChange(updated, tuple(change.changed[i] for i in sorted(change.changed)))


def book_prune(book: Book) -> tuple[Book, frozenset[int]]:
    """The book without the matches finished more than ``BOOK_KEEP_MS`` before its newest event,
    and the events let go."""
    gone = frozenset(
        m.event_id
        for m in book.matches.values()
        if m.finished_at is not None and m.finished_at + BOOK_KEEP_MS < book.now
    )
    if not gone:
        return book, gone
    return (
        Book(
            matches={e: m for e, m in book.matches.items() if e not in gone},
            questions={i: q for i, q in book.questions.items() if q.event_id not in gone},
            now=book.now,
        ),
        gone,
    )


# --- the punters ---

# A punter's state is kept, read and changed in its encoding (``State``): a list of
# ``[version, streak, best streak, answered, correct, {day: points}, {event id: points},
# {question id: [event id, choice, answer id, result, points]}]``, ids as text. It is what the
# state store holds, and a goal changes every punter of its match: the rules below change the
# encoding in place rather than build objects for each punter and encode them again. ``Punter``
# and ``Answer`` are the same state read into named fields (for the functions that take one
# punter, the pages' documents and the tests).
State = list[Any]
VERSION, STREAK, BEST_STREAK, ANSWERED, CORRECT, DAYS, MATCHES, ANSWERS = range(8)
# A held answer's fields in the encoding.
HELD_EVENT, HELD_CHOICE, HELD_ID, HELD_RESULT, HELD_POINTS = range(5)
_EMPTY: Mapping[Any, Any] = MappingProxyType({})


def new_state() -> State:
    """The state of a punter who has not answered yet."""
    return [0, 0, 0, 0, 0, {}, {}, {}]


class Answer(NamedTuple):
    """A punter's answer as their state keeps it: the choice and, once its question is decided,
    its result and the points it scored."""

    question_id: int
    event_id: int
    choice: str
    answer_id: str
    result: str = PENDING
    points: int = 0


class Punter(NamedTuple):
    """One punter's game state, read. ``version`` rises by one with every change (frames carry
    it; a page keeps the highest). ``days``: points per day; ``matches``: points per event."""

    user_id: int
    version: int = 0
    streak: int = 0
    best_streak: int = 0
    answered: int = 0
    correct: int = 0
    days: Mapping[str, int] = _EMPTY
    matches: Mapping[int, int] = _EMPTY
    answers: Mapping[int, Answer] = _EMPTY


def punter_to_raw(punter: Punter) -> State:
    """A punter as its state's encoding (JSON values: compact, keys as strings)."""
    return [
        punter.version,
        punter.streak,
        punter.best_streak,
        punter.answered,
        punter.correct,
        dict(punter.days),
        {str(e): p for e, p in punter.matches.items()},
        {str(a.question_id): [a.event_id, a.choice, a.answer_id, a.result, a.points] for a in punter.answers.values()},
    ]


def punter_from_raw(user_id: int, raw: Sequence[Any]) -> Punter:
    version, streak, best, answered, correct, days, matches, answers = raw
    return Punter(
        user_id=user_id,
        version=version,
        streak=streak,
        best_streak=best,
        answered=answered,
        correct=correct,
        days=dict(days),
        matches={int(e): p for e, p in matches.items()},
        answers={int(q): Answer(int(q), *a) for q, a in answers.items()},
    )


class News(NamedTuple):
    """What happened to a punter's answer: ``accepted``, ``refused`` (with ``reason``) or
    ``settled`` (with ``result`` and ``points``)."""

    kind: Literal["accepted", "refused", "settled"]
    question_id: int
    event_id: int
    choice: str
    answer_id: str
    result: str | None = None
    points: int | None = None
    reason: str | None = None

    def to_json(self) -> GameNews:
        news: GameNews = {
            "kind": self.kind,
            "question_id": self.question_id,
            "event_id": self.event_id,
            "choice": self.choice,
            "answer_id": self.answer_id,
        }
        if self.result is not None:
            news["result"] = self.result
        if self.points is not None:
            news["points"] = self.points
        if self.reason is not None:
            news["reason"] = self.reason
        return news


def state_refusal(book: Book, state: State | None, answer: GameAnswer) -> str | None:
    """Why the answer does not count (``REFUSALS``), or ``None`` when it does. The punter's
    earlier answer to the same question refuses a new one; the same answer read again is for
    ``state_duplicate`` to spot first."""
    question = book.questions.get(answer.question_id)
    if question is None or question.event_id != answer.event_id:
        return UNKNOWN_QUESTION
    if state is not None and str(answer.question_id) in state[ANSWERS]:
        return ALREADY_ANSWERED
    if answer.choice not in question.options:
        return BAD_CHOICE
    if question.status == VOID:
        return QUESTION_VOID
    if question.closed_at is not None and answer.ts >= question.closed_at:
        return QUESTION_CLOSED
    return None


def state_duplicate(state: State | None, answer: GameAnswer) -> bool:
    """The punter's state holds this very answer already (a record read again)."""
    if state is None:
        return False
    held = state[ANSWERS].get(str(answer.question_id))
    return held is not None and held[HELD_ID] == answer.answer_id


def _add_points(state: State, question: Question, points: int) -> None:
    """``points`` more on the question's day and event (the days beyond ``DAYS_KEPT`` let go)."""
    days = state[DAYS]
    days[question.day] = days.get(question.day, 0) + points
    if len(days) > DAYS_KEPT:
        for old in sorted(days)[:-DAYS_KEPT]:
            del days[old]
    matches = state[MATCHES]
    event = str(question.event_id)
    matches[event] = matches.get(event, 0) + points


def state_answer(state: State | None, answer: GameAnswer, question: Question) -> tuple[State, list[News]]:
    """The punter's state (changed in place; a new one for ``None``) with an answer that counts
    (``state_refusal`` said so), and what to tell them. An answer taken before its question
    closed but read after it was decided (it was on its way) is settled at once."""
    current = state if state is not None else new_state()
    current[VERSION] += 1
    current[ANSWERED] += 1
    _add_points(current, question, 0)
    current[ANSWERS][str(answer.question_id)] = [answer.event_id, answer.choice, answer.answer_id, PENDING, 0]
    news = [News("accepted", answer.question_id, answer.event_id, answer.choice, answer.answer_id)]
    if question.decided:
        settled = state_settle(current, question)
        if settled is not None:
            news.append(settled)
    return current, news


def state_settle(state: State, question: Question) -> News | None:
    """Settle the punter's answer to ``question`` (settled or void) in the state, in place, and
    say what to tell them; ``None``, the state untouched, when the punter has no undecided answer
    to it. A correct answer scores its option's points and the streak's bonus; a void answer
    scores nothing and leaves the streak as it was."""
    held = state[ANSWERS].get(str(question.id))
    if held is None or held[HELD_RESULT] != PENDING or not question.decided:
        return None
    choice = held[HELD_CHOICE]
    if question.status == VOID:
        result, points = "void", 0
    elif choice == question.outcome:
        result = WON
        streak = state[STREAK]
        points = POINTS[question.kind][choice] + STREAK_BONUS * min(streak, STREAK_BONUS_CAP)
        _add_points(state, question, points)
        state[STREAK] = streak + 1
        if streak + 1 > state[BEST_STREAK]:
            state[BEST_STREAK] = streak + 1
        state[CORRECT] += 1
    else:
        result, points = LOST, 0
        state[STREAK] = 0
    held[HELD_RESULT] = result
    held[HELD_POINTS] = points
    state[VERSION] += 1
    return News("settled", question.id, question.event_id, choice, held[HELD_ID], result=result, points=points)


def answer_refusal(book: Book, punter: Punter | None, answer: GameAnswer) -> str | None:
    """``state_refusal`` of a punter read."""
    return state_refusal(book, None if punter is None else punter_to_raw(punter), answer)


def answer_duplicate(punter: Punter | None, answer: GameAnswer) -> bool:
    """``state_duplicate`` of a punter read."""
    return state_duplicate(None if punter is None else punter_to_raw(punter), answer)


def punter_answer(punter: Punter | None, answer: GameAnswer, question: Question) -> tuple[Punter, list[News]]:
    """``state_answer`` of a punter read: the new punter (the one given is left as it was)."""
    state, news = state_answer(None if punter is None else punter_to_raw(punter), answer, question)
    return punter_from_raw(answer.user_id, state), news


def punter_settle(punter: Punter, question: Question) -> tuple[Punter, News] | None:
    """``state_settle`` of a punter read: the new punter and the news, or ``None``."""
    state = punter_to_raw(punter)
    news = state_settle(state, question)
    return None if news is None else (punter_from_raw(punter.user_id, state), news)


def state_prune(state: State, events: frozenset[int]) -> bool:
    """Let go, in place, of the answers and match points of events the book let go (their day
    points stay); whether anything went."""
    gone = {str(e) for e in events}
    matches, answers = state[MATCHES], state[ANSWERS]
    stale_matches = [e for e in matches if e in gone]
    stale_answers = [q for q, held in answers.items() if held[HELD_EVENT] in events]
    for event in stale_matches:
        del matches[event]
    for question in stale_answers:
        del answers[question]
    return bool(stale_matches or stale_answers)


def punter_prune(punter: Punter, events: frozenset[int]) -> Punter:
    """``state_prune`` of a punter read (the same punter when nothing went)."""
    state = punter_to_raw(punter)
    return punter_from_raw(punter.user_id, state) if state_prune(state, events) else punter


def state_doc(state: State) -> GamePunter:
    """A punter's state as the frames and the store carry it (docs/protocol.md): every live
    event's points and answers; a page shows its own event's."""
    return {
        "version": state[VERSION],
        "streak": state[STREAK],
        "best_streak": state[BEST_STREAK],
        "answered": state[ANSWERED],
        "correct": state[CORRECT],
        "days": dict(state[DAYS]),
        "matches": dict(state[MATCHES]),
        "answers": {
            q: {"event_id": a[HELD_EVENT], "choice": a[HELD_CHOICE], "result": a[HELD_RESULT], "points": a[HELD_POINTS]}
            for q, a in state[ANSWERS].items()
        },
    }


def punter_doc(punter: Punter) -> GamePunter:
    """``state_doc`` of a punter read."""
    return state_doc(punter_to_raw(punter))


# --- one bucket's batch ---


# A bucket's punter table as stored (``PunterTable.encode``): this mark, the punters' count and the
# size of the players' index (two 32-bit numbers), then the punters' ids in ascending order and
# where each one's state ends in the body (64-bit numbers), the players' index (event id →
# punters), the states, each followed by a comma (so that the body read whole is a list's items);
# numbers little-endian.
TABLE_MAGIC = b"GPT2"
_TABLE_HEADER = struct.Struct("<II")
_NUMBERS = np.dtype("<i8")
# A batch that looks up more than this share of a table's stored punters (one in 32) maps their ids
# once rather than searching them for each (a map costs about as much as thirty searches a punter).
_MAPPED_SHARE = 32
# A batch that reads this share of them or more (a third) parses the stored states in one go.
_WHOLE_SHARE = 3


class PunterTable:
    """A bucket's punters as its state holds them: punter id → ``State``, changed in place by a
    batch's step, and which punters hold answers or points on each event (its players).

    A bucket keeps every punter who has played in it, and a batch touches few of them. So the
    table is stored with each punter's state encoded on its own (``encode``), and a batch decodes
    only the states it reads: the punters who answer, and the players of the events whose
    questions it settles or lets go. The others are copied as they were, byte for byte, so a
    batch costs what it touches and little more for every punter held. A table stored as one
    document (as it once was) is read whole, once, and stored this way from its next change."""

    def __init__(self, raw: Mapping[str, State] | None = None) -> None:
        # The states read or made so far.
        self._states: dict[int, State] = {int(user): state for user, state in (raw or {}).items()}
        # The stored table: the punters' ids and where each one's state ends in ``_body``, by place.
        self._users = np.zeros(0, _NUMBERS)
        self._ends = np.zeros(0, _NUMBERS)
        self._body = memoryview(b"")
        # Each stored punter's place and the ends as numbers, mapped once a batch looks up many
        # (``_find``, ``read``).
        self._place: dict[int, int] | None = None
        self._bounds: list[int] = []
        self._looked = 0
        # Every stored state has been read (``read``).
        self._whole = False
        # Punters not in the stored table, in the order they came.
        self._added: list[int] = list(self._states)
        # Event id → the punters holding an answer to one of its questions or points on it.
        self._players: dict[int, set[int]] = {}
        for user, state in self._states.items():
            self._note(user, state)

    @classmethod
    def decode(cls, blob: bytes | None) -> PunterTable:
        if not blob:
            return cls()
        if not blob.startswith(TABLE_MAGIC):
            return cls(orjson.loads(blob))  # the table as one document
        count, players_size = _TABLE_HEADER.unpack_from(blob, len(TABLE_MAGIC))
        at = len(TABLE_MAGIC) + _TABLE_HEADER.size
        table = cls()
        table._users = users = np.frombuffer(blob, _NUMBERS, count, at)
        table._ends = np.frombuffer(blob, _NUMBERS, count, at + 8 * count)
        at += 16 * count
        if count > 1 and not bool((users[1:] > users[:-1]).all()):
            table._map()  # not in order: mapped
        table._players = {int(e): set(u) for e, u in orjson.loads(blob[at : at + players_size]).items()}
        table._body = memoryview(blob)[at + players_size :]
        return table

    def players(self, events: Iterable[int]) -> set[int]:
        """The punters holding answers or points on any of the events."""
        found: set[int] = set()
        for event in events:
            found.update(self._players.get(event, ()))
        return found

    def read(self, users: Collection[int]) -> None:
        """The states of ``users`` are about to be read: when they are a third of the stored table
        or more, every stored state is decoded at once (one parse of the stored body: a state
        costs a third as much as decoded on its own); otherwise each is decoded when it is
        looked up."""
        stored = len(self._users)
        if self._whole or not stored:
            return
        if len(users) * _WHOLE_SHARE < stored:
            if len(users) * _MAPPED_SHARE > stored and self._place is None:
                self._map()  # cheaper than searching for each
            return
        self._whole = True
        states = self._states
        found = orjson.loads(b"[" + bytes(self._body[:-1]) + b"]")
        for user, state in zip(self._users.tolist(), found, strict=True):
            if user not in states:
                states[user] = state

    def encode(self, encoded: Mapping[int, bytes] = _EMPTY) -> bytes:
        """The table as stored (``TABLE_MAGIC``). The states read are encoded again (``encoded``:
        those the caller has encoded already, as they stand), the others copied as stored, and
        the punters added take their places in the order of the ids."""
        body, states, users, ends = self._body, self._states, self._users, self._ends

        def dumps(user: int) -> bytes:
            done = encoded.get(user)
            return done if done is not None else orjson.dumps(states[user])

        added = sorted(self._added)
        fresh = set(added)
        read = [user for user in states if user not in fresh]
        # The places of the states read, in order, and where each added punter goes in.
        if self._place is not None:
            places = np.array([self._place[user] for user in read], _NUMBERS)
        else:
            places = users.searchsorted(np.array(read, _NUMBERS))
        order = np.argsort(places, kind="stable")
        places = places[order]
        read = [read[i] for i in order.tolist()]
        inserts = users.searchsorted(np.array(added, _NUMBERS))
        before = np.concatenate([np.zeros(1, _NUMBERS), ends])  # where the state at each place starts
        read_starts, read_ends = before[places].tolist(), ends[places].tolist()
        insert_starts = before[inserts].tolist()
        read_places, insert_places = places.tolist(), inserts.tolist()
        new_lengths: list[int] = []
        added_lengths: list[int] = []
        pieces: list[bytes | memoryview] = []
        copied = i = j = 0
        while i < len(read) or j < len(added):
            if j < len(added) and (i == len(read) or insert_places[j] <= read_places[i]):
                start, user = insert_starts[j], added[j]
            else:
                start, user = read_starts[i], read[i]
            if start > copied:
                pieces.append(body[copied:start])
                copied = start
            new = dumps(user)
            pieces += (new, b",")
            if user in fresh:
                added_lengths.append(len(new) + 1)
                j += 1
            else:
                new_lengths.append(len(new) + 1)
                copied = read_ends[i]
                i += 1
        if copied < len(body):
            pieces.append(body[copied:])
        lengths = np.diff(ends, prepend=0)
        lengths[places] = np.array(new_lengths, _NUMBERS)
        lengths = np.insert(lengths, inserts, np.array(added_lengths, _NUMBERS))
        return self._stored(np.insert(users, inserts, np.array(added, _NUMBERS)), lengths, pieces)

    def _stored(self, users: np.ndarray, lengths: np.ndarray, body: list[bytes | memoryview]) -> bytes:
        """The stored table of ``users`` (in order), the length of each one's state (its comma
        included) and the body's pieces."""
        players = orjson.dumps({e: sorted(u) for e, u in self._players.items() if u}, option=orjson.OPT_NON_STR_KEYS)
        header = TABLE_MAGIC + _TABLE_HEADER.pack(len(users), len(players))
        ends = np.cumsum(lengths, dtype=_NUMBERS)
        return b"".join([header, users.tobytes(), ends.tobytes(), players, *body])

    def _find(self, user_id: int) -> int | None:
        """A stored punter's place, ``None`` for a punter not stored. A few look-ups search the
        ids (in order); once a batch has looked up ``_MAPPED_SHARE`` of them, they are mapped,
        once."""
        place = self._place
        if place is not None:
            return place.get(user_id)
        users = self._users
        self._looked += 1
        if self._looked * _MAPPED_SHARE > len(users):
            return self._map().get(user_id)
        at = int(users.searchsorted(user_id))
        return at if at < len(users) and int(users[at]) == user_id else None

    def _map(self) -> dict[int, int]:
        place = self._place = dict(zip(self._users.tolist(), range(len(self._users)), strict=True))
        self._bounds = self._ends.tolist()
        return place

    def _note(self, user_id: int, state: State) -> None:
        """Put the punter among the players of every event their state holds."""
        players = self._players
        for event in state[MATCHES]:
            players.setdefault(int(event), set()).add(user_id)
        for held in state[ANSWERS].values():
            players.setdefault(held[HELD_EVENT], set()).add(user_id)

    def state(self, user_id: int) -> State | None:
        state = self._states.get(user_id)
        if state is None:
            at = self._find(user_id)
            if at is None:
                return None
            ends = self._bounds or self._ends  # the ends as numbers once mapped
            start = int(ends[at - 1]) if at else 0
            state = self._states[user_id] = orjson.loads(self._body[start : int(ends[at]) - 1])
        return state

    @property
    def held(self) -> Mapping[int, State]:
        """The states read or made so far, by punter id (every punter a step changed is here)."""
        return self._states

    @property
    def raw(self) -> dict[str, State]:
        """Every punter's state (all of them read), by punter id as text: a new mapping of the
        table's own states."""
        for user in self._users.tolist():
            self.state(user)
        return {str(user): state for user, state in self._states.items()}

    def get(self, user_id: int) -> Punter | None:
        """The punter read (a copy: changing it changes nothing here)."""
        state = self.state(user_id)
        return None if state is None else punter_from_raw(user_id, state)

    def put(self, punter: Punter) -> None:
        user = punter.user_id
        if user not in self._states and self._find(user) is None:
            self._added.append(user)
        state = self._states[user] = punter_to_raw(punter)
        self._note(user, state)

    def holders(self, question_id: int) -> list[int]:
        """The punters holding an undecided answer to the question (among the players of its
        event: a question's id is its event's times ``QUESTIONS_PER_EVENT`` and its number)."""
        key = str(question_id)
        found = []
        for user in self._players.get(question_id // QUESTIONS_PER_EVENT, ()):
            state = self.state(user)
            held = None if state is None else state[ANSWERS].get(key)
            if held is not None and held[HELD_RESULT] == PENDING:
                found.append(user)
        return found

    def answer(self, answer: GameAnswer, question: Question) -> list[News]:
        """Take an answer that counts (``state_answer``) into the punter's state."""
        user = answer.user_id
        held = self._states.get(user)
        if held is None:
            held = self.state(user)
        state, news = state_answer(held, answer, question)
        if held is None:
            self._states[user] = state
            self._added.append(user)
        self._players.setdefault(answer.event_id, set()).add(user)
        return news

    def settle(self, question: Question) -> list[tuple[int, News]]:
        """Settle every undecided answer to a decided question (``state_settle``): the punters
        settled and what to tell each."""
        settled = []
        for user in self._players.get(question.event_id, ()):
            state = self.state(user)
            news = None if state is None else state_settle(state, question)
            if news is not None:
                settled.append((user, news))
        return settled

    def prune(self, events: frozenset[int]) -> set[int]:
        """Let go of the answers and match points of events the book let go, in every punter: the
        punters changed."""
        pruned = set()
        for event in events:
            for user in self._players.pop(event, ()):
                state = self.state(user)
                if state is not None and state_prune(state, events):
                    pruned.add(user)
        return pruned

    def __len__(self) -> int:
        return len(self._users) + len(self._added)


@dataclass
class Step:
    """What one bucket's batch changed: the book, the punters whose state changed (in
    ``table``), what to tell each punter, the events each punter's points moved on (with the
    event's day) and each changed question (newest state)."""

    book: Book
    table: PunterTable
    changed: set[int] = field(default_factory=set)
    news: dict[int, list[News]] = field(default_factory=dict)
    moved: dict[int, dict[int, str]] = field(default_factory=dict)
    questions: dict[int, Question] = field(default_factory=dict)
    pruned: frozenset[int] = frozenset()

    def punter(self, user_id: int) -> Punter | None:
        return self.table.get(user_id)

    def boards(self, user_id: int, state: State | None = None) -> dict[int, tuple[str, int, int]]:
        """Where the punter stands on the leaderboards the batch moved them on: per event, the
        event's day and the punter's points on the event's board and on the day's. ``state``: the
        punter's, when the caller has read it already."""
        if state is None:
            state = self.table.state(user_id)
        if state is None:
            return {}
        return board_points(state, self.moved.get(user_id, _EMPTY))

    def _told(self, user_id: int, news: News, question: Question) -> None:
        self.changed.add(user_id)
        self.news.setdefault(user_id, []).append(news)
        self.moved.setdefault(user_id, {})[question.event_id] = question.day


def board_points(state: State, moved: Mapping[int, str]) -> dict[int, tuple[str, int, int]]:
    """Per event the punter moved on (``moved``: event → its day), the event's day and the
    punter's points on the event's board and on the day's."""
    days, matches = state[DAYS], state[MATCHES]
    return {e: (day, matches.get(str(e), 0), days.get(day, 0)) for e, day in moved.items()}


def _answer_order(answer: GameAnswer) -> tuple[int, str]:
    return answer.ts, answer.answer_id


def game_step(book: Book, table: PunterTable, events: Sequence[GameEvent], answers: Sequence[GameAnswer]) -> Step:
    """One bucket's batch, changing the bucket's punters in ``table``: the match events in their
    order (each settles the answers its questions hold), then the answers in the order the API
    took them. Events go first: an answer counts by when it was taken, not when it is read, so
    the result is the same whichever batch an answer lands in."""
    step = Step(book=book, table=table)
    changes = []
    for event in events:
        change = book_apply(step.book, event)
        step.book = change.book
        changes.append(change.changed)
    # The players of every match whose questions the events decided, read at once (a goal in
    # each of ten matches reads every punter, a tenth at a time).
    table.read(table.players({q.event_id for changed in changes for q in changed if q.decided}))
    for changed in changes:
        for question in changed:
            step.questions[question.id] = question
            if question.decided:
                for user_id, news in table.settle(question):
                    step._told(user_id, news, question)
    table.read({answer.user_id for answer in answers})
    for answer in sorted(answers, key=_answer_order):
        state = table.state(answer.user_id)
        if state_duplicate(state, answer):
            continue
        refusal = state_refusal(step.book, state, answer)
        if refusal is not None:
            step.news.setdefault(answer.user_id, []).append(
                News("refused", answer.question_id, answer.event_id, answer.choice, answer.answer_id, reason=refusal)
            )
            continue
        question = step.book.questions[answer.question_id]
        for news in table.answer(answer, question):
            step._told(answer.user_id, news, question)
    step.book, step.pruned = book_prune(step.book)
    return step
