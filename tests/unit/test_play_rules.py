"""The play-session rules (odds/betting/play.py) on explicit clocks: time left of a session limit,
when a reality check is due and waits, the net result of a session's bets, what refuses a bet and
what a changed preference does to the session already running."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from odds.betting.play import (
    REALITY_CHECK,
    SESSION_LIMIT,
    PlayState,
    check_due_at,
    check_pending,
    duration_text,
    limit_for_running_session,
    net_result,
    play_refusal,
    session_ends_at,
    time_left,
    time_played,
)
from odds.betting.services.placement import BetInvalid, play_check, play_state_from_answer

LOGIN = datetime(2026, 11, 28, 18, 0, tzinfo=UTC)
MINUTE = timedelta(minutes=1)


def state(limit_min: int | None = None, check_min: int | None = None, acknowledged: datetime | None = None):
    return PlayState(
        started_at=LOGIN,
        time_limit=None if limit_min is None else limit_min * MINUTE,
        reality_check=None if check_min is None else check_min * MINUTE,
        acknowledged_at=acknowledged,
    )


def test_time_left_counts_down_from_the_login_and_stops_at_zero():
    session = state(limit_min=60)
    assert session_ends_at(state=session) == LOGIN + 60 * MINUTE
    assert time_left(state=session, now=LOGIN) == 60 * MINUTE
    assert time_left(state=session, now=LOGIN + 45 * MINUTE) == 15 * MINUTE
    assert time_left(state=session, now=LOGIN + 90 * MINUTE) == timedelta(0)
    assert time_played(state=session, now=LOGIN + 90 * MINUTE) == 90 * MINUTE


def test_a_session_without_a_limit_has_no_end_and_no_time_left():
    session = state()
    assert session_ends_at(state=session) is None
    assert time_left(state=session, now=LOGIN + 24 * 60 * MINUTE) is None
    assert play_refusal(state=session, now=LOGIN + 24 * 60 * MINUTE) is None


def test_bets_are_refused_from_the_instant_the_limit_is_reached_and_not_a_second_before():
    session = state(limit_min=30)
    assert play_refusal(state=session, now=LOGIN + 30 * MINUTE - timedelta(seconds=1)) is None
    refusal = play_refusal(state=session, now=LOGIN + 30 * MINUTE)
    assert refusal is not None
    assert refusal.code == SESSION_LIMIT
    assert "30 minutes was reached at 18:30 UTC" in refusal.message


def test_the_first_reality_check_is_due_an_interval_after_the_login():
    session = state(check_min=15)
    assert check_due_at(state=session) == LOGIN + 15 * MINUTE
    assert not check_pending(state=session, now=LOGIN + 15 * MINUTE - timedelta(seconds=1))
    assert check_pending(state=session, now=LOGIN + 15 * MINUTE)
    assert check_pending(state=session, now=LOGIN + 50 * MINUTE)  # it waits until acknowledged


def test_the_next_check_is_due_an_interval_after_the_last_was_acknowledged():
    acknowledged = LOGIN + 20 * MINUTE  # five minutes late
    session = state(check_min=15, acknowledged=acknowledged)
    assert check_due_at(state=session) == acknowledged + 15 * MINUTE
    assert not check_pending(state=session, now=LOGIN + 34 * MINUTE)
    assert check_pending(state=session, now=LOGIN + 35 * MINUTE)


def test_a_waiting_check_refuses_bets_with_its_own_reason_and_no_checks_refuse_none():
    refusal = play_refusal(state=state(check_min=30), now=LOGIN + 31 * MINUTE)
    assert refusal is not None
    assert refusal.code == REALITY_CHECK
    assert "reality check is waiting" in refusal.message
    assert play_refusal(state=state(), now=LOGIN + 31 * MINUTE) is None
    assert check_due_at(state=state()) is None


def test_the_limit_is_the_reason_given_when_both_apply():
    refusal = play_refusal(state=state(limit_min=30, check_min=15), now=LOGIN + 40 * MINUTE)
    assert refusal is not None
    assert refusal.code == SESSION_LIMIT


def test_no_play_session_refuses_nothing():
    assert play_refusal(state=None, now=LOGIN) is None


def test_the_net_result_is_returns_minus_stakes_open_bets_returning_nothing_yet():
    bets = [
        (Decimal("10.00"), Decimal("25.00")),  # won
        (Decimal("5.00"), Decimal("0.00")),  # lost
        (Decimal("4.00"), Decimal("0.00")),  # still open
        (Decimal("2.50"), Decimal("2.50")),  # void: the stake came back
    ]
    assert net_result(bets=bets) == Decimal("6.00")
    assert net_result(bets=[]) == Decimal("0.00")
    assert net_result(bets=[(Decimal("10.00"), Decimal("0.00"))]) == Decimal("-10.00")


@pytest.mark.parametrize(
    ("running", "chosen", "kept"),
    [
        (None, 60, 60),  # a new limit applies at once
        (120, 60, 60),  # a shorter one too
        (60, 120, 60),  # a longer one waits for the next login
        (60, None, 60),  # so does lifting it
        (None, None, None),
    ],
)
def test_a_stricter_choice_applies_to_the_running_session_and_a_laxer_one_waits(running, chosen, kept):
    assert limit_for_running_session(running=_length(running), chosen=_length(chosen)) == _length(kept)


def _length(minutes: int | None) -> timedelta | None:
    return None if minutes is None else minutes * MINUTE


def test_durations_read_as_words():
    assert duration_text(30 * MINUTE) == "30 minutes"
    assert duration_text(60 * MINUTE) == "1 hour"
    assert duration_text(125 * MINUTE) == "2 hours 5 minutes"
    assert duration_text(timedelta(seconds=59)) == "0 minutes"


def test_the_placement_refuses_on_the_account_with_the_rules_code():
    micros = int(LOGIN.timestamp() * 1_000_000)
    answer = {"started_at": micros, "time_limit_s": 1800, "reality_check_s": None, "acknowledged_at": None}
    state = play_state_from_answer(answer)
    assert (state.started_at, state.time_limit, state.acknowledged_at) == (LOGIN, 30 * MINUTE, None)
    play_check(state=state, now=LOGIN + 29 * MINUTE)
    with pytest.raises(BetInvalid) as refused:
        play_check(state=state, now=LOGIN + 30 * MINUTE)
    assert (refused.value.code, refused.value.field) == (SESSION_LIMIT, "account")
