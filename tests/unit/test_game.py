"""The predictor game's decisions (reducers/game.py): questions opened, closed, settled and voided
by match events; answers counted once, before their question closed; points and streaks; one
bucket's batch. No Spark, no store."""

from __future__ import annotations

import dataclasses
import itertools
import random
import struct
from array import array

import orjson
import pytest

from reducers import game
from reducers.game import (
    BOOK_KEEP_MS,
    Book,
    PunterTable,
    Question,
    book_apply,
    book_from_json,
    book_to_json,
    game_step,
    punter_from_raw,
    punter_to_raw,
)
from reducers.schemas import GameAnswer, GameEvent

EVENT = 7
T0 = 1_795_000_000_000  # 2026-11-18, epoch ms


class Feed:
    """Game events of one match, numbered as the feed numbers them."""

    def __init__(self, event_id: int = EVENT, sport: str = "football") -> None:
        self.event_id = event_id
        self.sport = sport
        self.seq = 0
        self.score = [0, 0]

    def __call__(self, kind: str, *, minute: int = 0, side: str = "", at: int | None = None) -> GameEvent:
        self.seq += 1
        if kind == "score":
            self.score[0 if side == "home" else 1] += 1
        return GameEvent(
            kind=kind,
            event_id=self.event_id,
            seq=self.seq,
            sport=self.sport,
            minute=minute,
            side=side,
            score=(self.score[0], self.score[1]),
            at=at if at is not None else T0 + minute * 60_000,
        )


def apply_all(*events: GameEvent, book: Book | None = None) -> Book:
    current = book or Book()
    for event in events:
        current = book_apply(current, event).book
    return current


def open_question(book: Book, kind: str) -> Question:
    return next(q for q in book.questions.values() if q.kind == kind and q.status == game.OPEN)


def answer(user: int, question: Question, choice: str, *, ts: int, answer_id: str | None = None) -> GameAnswer:
    return GameAnswer(
        answer_id=answer_id or f"{user:08d}{question.id:012d}{ts:016d}"[:40],
        user_id=user,
        event_id=question.event_id,
        question_id=question.id,
        choice=choice,
        ts=ts,
    )


# --- questions ---


def test_kick_off_opens_next_goal_a_card_and_the_half_time_result():
    feed = Feed()
    change = book_apply(Book(), feed("kick_off"))
    kinds = {q.kind: q for q in change.changed}
    assert set(kinds) == {game.NEXT_GOAL, game.CARD, game.HALF_TIME_RESULT}
    assert kinds[game.NEXT_GOAL].until_minute == 15
    assert kinds[game.CARD].until_minute == 10
    assert kinds[game.HALF_TIME_RESULT].close_minute == 30
    assert all(q.status == game.OPEN for q in change.changed)
    assert game.question_title(kinds[game.NEXT_GOAL]) == "Who scores next, before 15'?"


def test_a_goal_settles_the_next_goal_question_with_its_side_and_opens_the_next():
    feed = Feed()
    book = apply_all(feed("kick_off"))
    goal = open_question(book, game.NEXT_GOAL)
    change = book_apply(book, feed("score", minute=12, side="away"))
    settled = next(q for q in change.changed if q.id == goal.id)
    assert (settled.status, settled.outcome, settled.closed_at) == (game.SETTLED, "away", T0 + 12 * 60_000)
    following = open_question(change.book, game.NEXT_GOAL)
    assert following.id == goal.id + 3  # after the card and half-time questions of the kick-off
    assert following.until_minute == 30  # the next quarter hour at least ten minutes away


def test_the_clock_reaching_a_windows_minute_settles_none_and_opens_the_next_window():
    feed = Feed()
    book = apply_all(feed("kick_off"), feed("minute", minute=9))
    assert open_question(book, game.CARD).until_minute == 10
    change = book_apply(book, feed("minute", minute=10))
    card = next(q for q in change.changed if q.kind == game.CARD and q.status == game.SETTLED)
    assert card.outcome == "no"
    assert open_question(change.book, game.CARD).until_minute == 20
    assert open_question(change.book, game.NEXT_GOAL).until_minute == 15  # its window is still open


def test_a_card_settles_the_card_question_yes():
    feed = Feed()
    book = apply_all(feed("kick_off"))
    change = book_apply(book, feed("card", minute=4, side="home"))
    settled = [q for q in change.changed if q.status == game.SETTLED]
    assert [(q.kind, q.outcome) for q in settled] == [(game.CARD, "yes")]


def test_answers_to_the_half_time_result_close_at_thirty_minutes_and_it_settles_at_half_time():
    feed = Feed()
    book = apply_all(feed("kick_off"), feed("score", minute=20, side="home"), feed("minute", minute=30))
    half = next(q for q in book.questions.values() if q.kind == game.HALF_TIME_RESULT)
    assert (half.status, half.closed_at) == (game.CLOSED, T0 + 30 * 60_000)
    book = apply_all(feed("half_time", minute=45), book=book)
    assert (book.questions[half.id].status, book.questions[half.id].outcome) == (game.SETTLED, "home")


def test_full_time_decides_every_question_left():
    feed = Feed()
    book = apply_all(feed("kick_off"), feed("half_time", minute=45), feed("minute", minute=76))
    assert open_question(book, game.NEXT_GOAL).until_minute == 90
    change = book_apply(book, feed("full_time", minute=90))
    assert {(q.kind, q.outcome) for q in change.changed} == {(game.NEXT_GOAL, "none"), (game.CARD, "no")}
    assert all(q.decided for q in change.book.questions.values())
    assert change.book.matches[EVENT].status == game.FINISHED


def test_other_sports_ask_who_scores_next_and_void_it_at_full_time():
    feed = Feed(sport="tennis")
    book = apply_all(feed("kick_off"))
    first = open_question(book, game.NEXT_SCORE)
    assert game.question_title(first) == "Who wins the next game?"
    book = apply_all(feed("score", side="home"), book=book)
    assert book.questions[first.id].outcome == "home"
    change = book_apply(book, feed("full_time"))
    assert [(q.status, q.void_reason) for q in change.changed] == [(game.VOID, game.MATCH_ENDED)]


def test_an_event_at_or_below_the_applied_sequence_changes_nothing():
    feed = Feed()
    kick_off = feed("kick_off")
    goal = feed("score", minute=3, side="home")
    book = apply_all(kick_off, goal)
    assert book_apply(book, goal).changed == ()
    assert book_apply(book, kick_off).book == book


def test_a_void_voids_an_undecided_question_once_and_a_decided_one_not_at_all():
    feed = Feed()
    book = apply_all(feed("kick_off"))
    card = open_question(book, game.CARD)
    void = GameEvent(kind="void", event_id=EVENT, seq=1, sport="football", at=T0 + 1, question_id=card.id, reason="x")
    change = book_apply(book, void)
    assert [(q.id, q.status, q.void_reason) for q in change.changed] == [(card.id, game.VOID, "x")]
    assert book_apply(change.book, void).changed == ()
    settled = apply_all(feed("card", minute=2, side="away"), book=book)
    assert book_apply(settled, void).changed == ()


def test_a_finished_match_is_let_go_an_hour_after_full_time():
    feed, other = Feed(), Feed(event_id=8)
    book = apply_all(feed("kick_off"), feed("full_time", minute=90))
    end = book.matches[EVENT].finished_at
    assert end is not None
    kept, gone = game.book_prune(apply_all(other("kick_off", at=end + BOOK_KEEP_MS), book=book))
    assert gone == frozenset()
    assert EVENT in kept.matches
    pruned, gone = game.book_prune(apply_all(other("minute", minute=1, at=end + BOOK_KEEP_MS + 1), book=kept))
    assert gone == {EVENT}
    assert all(q.event_id == 8 for q in pruned.questions.values())


def test_the_book_round_trips_through_its_state_encoding():
    feed = Feed()
    book = apply_all(feed("kick_off"), feed("score", minute=5, side="home"), feed("minute", minute=31))
    assert book_from_json(book_to_json(book)) == book


# --- answers and points ---


def test_an_answer_before_the_close_counts_and_one_after_is_refused_as_closed():
    feed = Feed()
    book = apply_all(feed("kick_off"))
    goal = open_question(book, game.NEXT_GOAL)
    book = apply_all(feed("score", minute=8, side="home"), book=book)
    closed_at = book.questions[goal.id].closed_at
    assert closed_at is not None
    assert game.answer_refusal(book, None, answer(1, goal, "home", ts=closed_at - 1)) is None
    assert game.answer_refusal(book, None, answer(1, goal, "home", ts=closed_at)) == game.QUESTION_CLOSED


def test_a_punter_answers_each_question_once():
    feed = Feed()
    book = apply_all(feed("kick_off"))
    goal = open_question(book, game.NEXT_GOAL)
    first = answer(1, goal, "home", ts=T0 + 1)
    punter, news = game.punter_answer(None, first, goal)
    assert [n.kind for n in news] == ["accepted"]
    assert game.answer_duplicate(punter, first)  # the same record read again
    assert game.answer_refusal(book, punter, answer(1, goal, "away", ts=T0 + 2)) == game.ALREADY_ANSWERED


def test_unknown_questions_choices_it_does_not_offer_and_void_questions_are_refused():
    feed = Feed()
    book = apply_all(feed("kick_off"))
    card = open_question(book, game.CARD)
    assert game.answer_refusal(book, None, answer(1, card, "home", ts=T0)) == game.BAD_CHOICE
    stray = dataclasses.replace(card, id=card.id + 500)
    assert game.answer_refusal(book, None, answer(1, stray, "yes", ts=T0)) == game.UNKNOWN_QUESTION
    void = GameEvent(kind="void", event_id=EVENT, seq=9, sport="football", at=T0 + 5, question_id=card.id, reason="x")
    voided = apply_all(void, book=book)
    assert game.answer_refusal(voided, None, answer(1, card, "yes", ts=T0 + 1)) == game.QUESTION_VOID


def test_correct_answers_score_with_a_streak_bonus_and_a_wrong_one_ends_the_streak():
    feed = Feed()
    book = apply_all(feed("kick_off"))
    punter = None
    points = []
    for minute, side, choice in ((5, "home", "home"), (20, "away", "away"), (35, "home", "home"), (50, "home", "away")):
        question = open_question(book, game.NEXT_GOAL)
        punter, _ = game.punter_answer(punter, answer(1, question, choice, ts=T0 + minute * 60_000 - 1), question)
        book = apply_all(feed("score", minute=minute, side=side), book=book)
        settled = game.punter_settle(punter, book.questions[question.id])
        assert settled is not None
        punter, news = settled
        points.append(news.points)
    assert points == [10, 12, 14, 0]
    assert punter is not None
    # Each answer keeps its own result and points (the page's history and the settled frames).
    assert [(a.result, a.points) for a in punter.answers.values()] == [
        (game.WON, 10),
        (game.WON, 12),
        (game.WON, 14),
        (game.LOST, 0),
    ]
    assert punter.version == 8
    assert (punter.streak, punter.best_streak, punter.correct, punter.answered) == (0, 3, 3, 4)
    assert punter.matches[EVENT] == 36
    assert punter.days[game.day_of(T0)] == 36


def test_a_void_answer_scores_nothing_and_keeps_the_streak():
    feed = Feed()
    book = apply_all(feed("kick_off"))
    card = open_question(book, game.CARD)
    punter, _ = game.punter_answer(game.Punter(user_id=1, streak=2), answer(1, card, "yes", ts=T0), card)
    void = GameEvent(kind="void", event_id=EVENT, seq=9, sport="football", at=T0 + 5, question_id=card.id, reason="x")
    settled = game.punter_settle(punter, apply_all(void, book=book).questions[card.id])
    assert settled is not None
    assert (settled[1].result, settled[1].points, settled[0].streak) == ("void", 0, 2)


def test_the_punter_round_trips_through_its_state_encoding():
    feed = Feed()
    book = apply_all(feed("kick_off"))
    goal = open_question(book, game.NEXT_GOAL)
    punter, _ = game.punter_answer(None, answer(3, goal, "none", ts=T0), goal)
    assert punter_from_raw(3, punter_to_raw(punter)) == punter


def test_a_punter_keeps_the_points_of_the_two_newest_days():
    punter = None
    for day in range(3):
        feed = Feed(event_id=EVENT + day)
        start = T0 + day * 86_400_000
        book = apply_all(feed("kick_off", at=start))
        goal = open_question(book, game.NEXT_GOAL)
        punter, _ = game.punter_answer(punter, answer(1, goal, "home", ts=start + 1), goal)
        book = apply_all(feed("score", minute=3, side="home", at=start + 180_000), book=book)
        settled = game.punter_settle(punter, book.questions[goal.id])
        assert settled is not None
        punter = settled[0]
    assert punter is not None
    assert punter.days == {game.day_of(T0 + 86_400_000): 12, game.day_of(T0 + 2 * 86_400_000): 14}
    assert punter.matches == {EVENT: 10, EVENT + 1: 12, EVENT + 2: 14}


def test_settling_a_punter_read_leaves_the_punter_given_as_it_was():
    feed = Feed()
    book = apply_all(feed("kick_off"))
    goal = open_question(book, game.NEXT_GOAL)
    punter, _ = game.punter_answer(None, answer(1, goal, "home", ts=T0), goal)
    before = punter_to_raw(punter)
    settled = game.punter_settle(punter, apply_all(feed("score", minute=2, side="home"), book=book).questions[goal.id])
    assert settled is not None
    assert punter_to_raw(punter) == before
    assert settled[0].matches == {EVENT: 10}


def test_the_stored_state_reads_as_the_punters_document():
    feed = Feed()
    book = apply_all(feed("kick_off"))
    goal = open_question(book, game.NEXT_GOAL)
    punter, _ = game.punter_answer(None, answer(3, goal, "away", ts=T0), goal)
    doc = game.state_doc(punter_to_raw(punter))
    assert doc == game.punter_doc(punter)
    assert doc["matches"] == {str(EVENT): 0}
    assert doc["answers"] == {str(goal.id): {"event_id": EVENT, "choice": "away", "result": game.PENDING, "points": 0}}


# --- one bucket's batch ---


def test_a_bucket_settles_in_its_table_what_settling_each_punter_read_gives():
    feed = Feed()
    book = apply_all(feed("kick_off"))
    goal, card = open_question(book, game.NEXT_GOAL), open_question(book, game.CARD)
    table = PunterTable()
    streaks = {u: u % 4 for u in range(1, 61)}
    for user, streak in streaks.items():
        table.put(game.Punter(user_id=user, streak=streak, best_streak=streak))
    picks = [answer(u, goal, ("home", "away", "none")[u % 3], ts=T0 + u) for u in streaks]
    picks += [answer(u, card, "yes", ts=T0 + u) for u in streaks if u % 5 == 0]
    answered = game_step(book, table, [], picks)
    before = {u: table.get(u) for u in streaks}
    goal_event, card_event = feed("score", minute=4, side="away"), feed("card", minute=6, side="home")
    after = apply_all(goal_event, card_event, book=answered.book)
    step = game_step(answered.book, table, [goal_event, card_event], [])
    for user, punter in before.items():
        assert punter is not None
        expected, news = punter, []
        for question in (after.questions[goal.id], after.questions[card.id]):
            settled = game.punter_settle(expected, question)
            if settled is not None:
                expected, told = settled
                news.append(told)
        assert table.get(user) == expected
        assert step.news[user] == news
        assert step.boards(user) == {EVENT: (game.day_of(T0), expected.matches[EVENT], expected.days[game.day_of(T0)])}


def test_a_goal_settles_every_answer_of_the_bucket_at_once():
    feed = Feed()
    book = apply_all(feed("kick_off"))
    goal = open_question(book, game.NEXT_GOAL)
    table = PunterTable()
    answered = game_step(book, table, [], [answer(u, goal, ("home", "away")[u % 2], ts=T0 + u) for u in range(1, 201)])
    assert answered.changed == set(range(1, 201))
    step = game_step(answered.book, table, [feed("score", minute=9, side="home")], [])
    assert step.changed == set(range(1, 201))
    won = {u for u, news in step.news.items() if news[-1].result == game.WON}
    assert won == {u for u in range(1, 201) if u % 2 == 0}
    assert step.boards(2) == {EVENT: (game.day_of(T0), 10, 10)}
    assert step.boards(1) == {EVENT: (game.day_of(T0), 0, 0)}
    assert list(table.holders(goal.id)) == []  # every answer to it is decided now


def test_an_answer_taken_before_the_close_but_read_after_the_settlement_is_settled_on_arrival():
    feed = Feed()
    book = apply_all(feed("kick_off"))
    goal = open_question(book, game.NEXT_GOAL)
    late = answer(5, goal, "home", ts=T0 + 60_000)
    step = game_step(book, PunterTable(), [feed("score", minute=2, side="home")], [late])
    assert [n.kind for n in step.news[5]] == ["accepted", "settled"]
    punter = step.punter(5)
    assert punter is not None
    assert punter.matches[EVENT] == 10


def test_the_same_answer_read_twice_counts_once_and_a_second_answer_is_refused():
    feed = Feed()
    book = apply_all(feed("kick_off"))
    goal = open_question(book, game.NEXT_GOAL)
    first = answer(4, goal, "home", ts=T0 + 1)
    table = PunterTable()
    step = game_step(book, table, [], [first, first])
    assert [n.kind for n in step.news[4]] == ["accepted"]
    again = game_step(step.book, table, [], [first, answer(4, goal, "away", ts=T0 + 2)])
    assert [(n.kind, n.reason) for n in again.news[4]] == [("refused", game.ALREADY_ANSWERED)]
    assert 4 not in again.changed


def _run(batches: list[tuple[list[GameEvent], list[GameAnswer]]]) -> dict[str, list]:
    book, table = Book(), PunterTable()
    for events, answers in batches:
        step = game_step(book, table, events, answers)
        book = step.book
        table.prune(step.pruned)
    return dict(sorted(table.raw.items()))


@pytest.mark.parametrize("cut", [1, 2, 3])
def test_where_the_batches_are_cut_does_not_change_anyones_points(cut):
    feed = Feed()
    kick_off, goal_home, minute, goal_away = (
        feed("kick_off"),
        feed("score", minute=7, side="home"),
        feed("minute", minute=16),
        feed("score", minute=22, side="away"),
    )
    first = apply_all(kick_off)
    q1 = open_question(first, game.NEXT_GOAL)
    second = apply_all(goal_home, book=first)
    q2 = open_question(second, game.NEXT_GOAL)
    answers = [answer(u, q1, "home", ts=T0 + u) for u in range(1, 6)]
    answers += [answer(u, q2, "away", ts=T0 + 8 * 60_000 + u) for u in range(3, 9)]
    events = [kick_off, goal_home, minute, goal_away]
    whole = _run([(events, answers)])
    split = _run([(events[:cut], answers[: cut * 3]), (events[cut:], answers[cut * 3 :])])
    assert split == whole
    assert punter_from_raw(3, whole["3"]).matches[EVENT] == 22  # 10, then 10 + 2 for the streak


def test_a_bucket_lets_go_of_the_answers_of_a_match_the_book_let_go():
    feed, other = Feed(), Feed(event_id=8)
    book = apply_all(feed("kick_off"))
    goal = open_question(book, game.NEXT_GOAL)
    table = PunterTable()
    step = game_step(book, table, [feed("full_time", minute=90)], [answer(1, goal, "none", ts=T0)])
    later = game_step(step.book, table, [other("kick_off", at=T0 + 90 * 60_000 + BOOK_KEEP_MS + 1)], [])
    assert later.pruned == {EVENT}
    table.prune(later.pruned)
    kept = table.get(1)
    assert kept is not None
    assert kept.answers == {}
    assert kept.matches == {}
    assert kept.days == {game.day_of(T0): 5}


def test_punter_table_holders_are_the_punters_with_an_undecided_answer():
    feed = Feed()
    book = apply_all(feed("kick_off"))
    goal, card = open_question(book, game.NEXT_GOAL), open_question(book, game.CARD)
    table = PunterTable()
    for user, question in itertools.product((1, 2), (goal,)):
        punter, _ = game.punter_answer(table.get(user), answer(user, question, "home", ts=T0), question)
        table.put(punter)
    assert sorted(table.holders(goal.id)) == [1, 2]
    assert list(table.holders(card.id)) == []
    assert PunterTable.decode(table.encode()).raw == table.raw


def test_punter_table_holders_follow_a_punter_put_after_they_were_read():
    feed = Feed()
    book = apply_all(feed("kick_off"))
    goal = open_question(book, game.NEXT_GOAL)
    table = PunterTable()
    for user in (1, 2):
        punter, _ = game.punter_answer(table.get(user), answer(user, goal, "home", ts=T0), goal)
        table.put(punter)
    assert sorted(table.holders(goal.id)) == [1, 2]
    decided = apply_all(feed("score", minute=3, side="home"), book=book).questions[goal.id]
    held = table.get(1)
    assert held is not None
    settled = game.punter_settle(held, decided)
    assert settled is not None
    table.put(settled[0])
    assert list(table.holders(goal.id)) == [2]


# --- the table as stored ---


def _stored_run(
    batches: list[tuple[list[GameEvent], list[GameAnswer]]], start: tuple[Book, bytes | None] = (Book(), None)
) -> tuple[Book, bytes | None]:
    """``_run``, with the table stored (encoded) after each batch and read from storage before
    the next, as the buckets keep it: the book and the stored table after the batches."""
    book, stored = start
    for events, answers in batches:
        table = PunterTable.decode(stored)
        step = game_step(book, table, events, answers)
        book = step.book
        table.prune(step.pruned)
        stored = table.encode()
    return book, stored


def _two_matches() -> list[tuple[list[GameEvent], list[GameAnswer]]]:
    """Two matches over four batches: many punters answer, goals settle them, the first match
    ends and is let go while the second plays on."""
    first, second = Feed(), Feed(event_id=8)
    one, two = first("kick_off"), second("kick_off", at=T0 + 60_000)
    book = apply_all(one, two)
    goal1 = next(q for q in book.questions.values() if q.event_id == EVENT and q.kind == game.NEXT_GOAL)
    goal2 = next(q for q in book.questions.values() if q.event_id == 8 and q.kind == game.NEXT_GOAL)
    card2 = next(q for q in book.questions.values() if q.event_id == 8 and q.kind == game.CARD)
    batches: list[tuple[list[GameEvent], list[GameAnswer]]] = [
        ([one, two], [answer(u, goal1, ("home", "away")[u % 2], ts=T0 + u) for u in range(1, 120)]),
        ([], [answer(u, goal2, "home", ts=T0 + 70_000 + u) for u in range(100, 200)]),
        (
            [first("score", minute=5, side="away"), first("full_time", minute=90)],
            [answer(u, card2, "yes", ts=T0 + 80_000 + u) for u in range(150, 160)],
        ),
        ([second("score", minute=95, side="home", at=T0 + 90 * 60_000 + BOOK_KEEP_MS + 1)], []),
    ]
    return batches


def test_a_table_stored_between_batches_ends_as_one_kept_in_memory():
    batches = _two_matches()
    whole = _run(batches)
    assert len(whole) == 199
    _, stored = _stored_run(batches)
    assert PunterTable.decode(stored).raw == whole
    for cut in range(1, len(batches)):
        # the batches before the cut in one stored step, the rest in another
        _, resumed = _stored_run(batches[cut:], start=_stored_run(batches[:cut]))
        assert PunterTable.decode(resumed).raw == whole


def test_the_first_match_let_go_leaves_no_answers_and_the_second_keeps_its_own():
    table = PunterTable.decode(_stored_run(_two_matches())[1])
    states = {int(u): punter_from_raw(int(u), s) for u, s in table.raw.items()}
    assert all(EVENT not in p.matches and all(a.event_id != EVENT for a in p.answers.values()) for p in states.values())
    assert states[150].matches[8] == 10  # the goal of the second match, answered home
    assert states[1].days[game.day_of(T0)] == 10  # the first match's goal, answered away: its day points stay
    assert states[2].days[game.day_of(T0)] == 0


def test_a_batch_reads_only_the_punters_it_touches_and_copies_the_others_as_stored():
    feed = Feed()
    book = apply_all(feed("kick_off"))
    goal = open_question(book, game.NEXT_GOAL)
    table = PunterTable()
    game_step(book, table, [], [answer(u, goal, "home", ts=T0 + u) for u in range(1, 1001)])
    # A punter who never played this match, stored in a spelling of their own (with spaces): a
    # batch that does not read them must keep those very bytes.
    idle = b"[3, 1, 1, 4, 2, {}, {}, {}]"
    states = {int(u): orjson.dumps(state) for u, state in table.raw.items()}
    later = PunterTable.decode(_spelt({**states, 5000: idle}, players={EVENT: sorted(states)}))
    other = Feed(event_id=9)
    other_book = apply_all(other("kick_off"), book=book)
    question = next(q for q in other_book.questions.values() if q.event_id == 9 and q.kind == game.CARD)
    step = game_step(other_book, later, [], [answer(7, question, "yes", ts=T0 + 5)])
    assert step.changed == {7}
    again = later.encode()
    assert idle in again
    assert PunterTable.decode(again).get(5000) == punter_from_raw(5000, [3, 1, 1, 4, 2, {}, {}, {}])
    assert _punter(PunterTable.decode(again), 7).answered == 2


def test_a_goal_settles_the_players_of_its_match_and_reads_no_other_punter():
    feed, other = Feed(), Feed(event_id=9)
    book = apply_all(feed("kick_off"), other("kick_off"))
    goal = next(q for q in book.questions.values() if q.event_id == EVENT and q.kind == game.NEXT_GOAL)
    card = next(q for q in book.questions.values() if q.event_id == 9 and q.kind == game.CARD)
    table = PunterTable()
    step = game_step(book, table, [], [answer(u, goal, "away", ts=T0 + u) for u in range(1, 51)])
    game_step(step.book, table, [], [answer(u, card, "no", ts=T0 + u) for u in range(51, 201)])
    # The other match's punters (three in four of the table) are stored unreadable: settling this
    # match's goal must not read them.
    blob = table.encode()
    for user in range(51, 201):
        state = orjson.dumps(table.state(user))
        blob = blob.replace(state, b"!" * len(state))
    later = PunterTable.decode(blob)
    goal_step = game_step(step.book, later, [feed("score", minute=3, side="away")], [])
    assert goal_step.changed == set(range(1, 51))
    assert all(_punter(later, u).matches[EVENT] == 10 for u in range(1, 51))


def test_a_table_stored_as_one_document_is_read_whole_and_stored_in_parts_from_its_next_change():
    feed = Feed()
    book = apply_all(feed("kick_off"))
    goal = open_question(book, game.NEXT_GOAL)
    table = PunterTable()
    step = game_step(book, table, [], [answer(u, goal, "home", ts=T0 + u) for u in range(1, 21)])
    old = orjson.dumps(table.raw)  # as tables were stored before
    assert not old.startswith(game.TABLE_MAGIC)
    read = PunterTable.decode(old)
    assert read.raw == table.raw
    assert sorted(read.holders(goal.id)) == list(range(1, 21))
    settled = game_step(step.book, read, [feed("score", minute=2, side="home")], [])
    assert settled.changed == set(range(1, 21))
    stored = read.encode()
    assert stored.startswith(game.TABLE_MAGIC)
    assert _punter(PunterTable.decode(stored), 3).matches[EVENT] == 10


def test_an_empty_table_and_a_table_with_nothing_read_store_as_they_were():
    assert PunterTable.decode(PunterTable().encode()).raw == {}
    table = PunterTable()
    table.put(game.Punter(user_id=1, streak=2))
    stored = table.encode()
    assert PunterTable.decode(stored).encode() == stored
    grown = PunterTable.decode(stored)
    grown.put(game.Punter(user_id=2, streak=5))
    again = PunterTable.decode(grown.encode())
    assert {u: p[game.STREAK] for u, p in again.raw.items()} == {"1": 2, "2": 5}


def test_a_batch_that_reads_most_of_the_table_reads_it_whole_and_stores_the_same():
    feed = Feed()
    book = apply_all(feed("kick_off"))
    goal, card = open_question(book, game.NEXT_GOAL), open_question(book, game.CARD)
    table = PunterTable()
    answered = game_step(book, table, [], [answer(u, goal, "home", ts=T0 + u) for u in range(1, 101)])
    in_memory = PunterTable(table.raw)
    stored = PunterTable.decode(table.encode())
    picks = [answer(u, card, "yes", ts=T0 + 10 + u) for u in range(1, 61)]  # most of the table
    events = [feed("score", minute=4, side="home")]
    kept = game_step(answered.book, in_memory, events, picks)
    read = game_step(answered.book, stored, events, picks)
    assert read.news == kept.news
    assert read.changed == kept.changed == set(range(1, 101))
    assert PunterTable.decode(stored.encode()).raw == in_memory.raw


def _spelt(states: dict[int, bytes], *, players: dict[int, list[int]]) -> bytes:
    """A stored table written out by hand (``reducers.game.TABLE_MAGIC``), each state as spelt."""
    users = array("q", states)
    ends = array("q", itertools.accumulate(len(state) + 1 for state in states.values()))
    index = orjson.dumps({str(e): u for e, u in players.items()})
    header = game.TABLE_MAGIC + struct.pack("<II", len(users), len(index))
    return header + users.tobytes() + ends.tobytes() + index + b"".join(state + b"," for state in states.values())


def _punter(table: PunterTable, user: int) -> game.Punter:
    punter = table.get(user)
    assert punter is not None, f"punter {user} is not in the table"
    return punter


def test_punters_added_in_any_order_are_stored_in_the_order_of_their_ids_and_read_back():
    rng = random.Random(52)
    feed = Feed()
    book = apply_all(feed("kick_off"))
    goal = open_question(book, game.NEXT_GOAL)
    kept = PunterTable()
    stored = None
    for round_ in range(6):
        users = rng.sample(range(1, 5000), 40)
        picks = [answer(u, goal, "home", ts=T0 + round_ * 100 + n) for n, u in enumerate(users)]
        table = PunterTable.decode(stored)
        game_step(book, table, [], picks)
        game_step(book, kept, [], picks)
        stored = table.encode()
        count = struct.unpack_from("<I", stored, len(game.TABLE_MAGIC))[0]
        ids = array("q", stored[12 : 12 + 8 * count])
        assert list(ids) == sorted(map(int, kept.raw)) == sorted(ids)
        assert PunterTable.decode(stored).raw == kept.raw


def test_a_table_stored_with_its_ids_out_of_order_still_finds_each_punter():
    states = {9: orjson.dumps([1, 0, 0, 1, 0, {}, {}, {}]), 3: orjson.dumps([2, 0, 0, 2, 0, {}, {}, {}])}
    table = PunterTable.decode(_spelt(states, players={}))
    assert _punter(table, 9).answered == 1
    assert _punter(table, 3).answered == 2
    assert table.get(4) is None
