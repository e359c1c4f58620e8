"""The resettlement rule (reducers/resettlement.py): what a corrected result moves for a bet."""

from __future__ import annotations

from decimal import Decimal

import pytest

from reducers import resettlement as r

D = Decimal


def test_a_paid_single_that_loses_gives_back_its_payout():
    move = r.resettle_move(status="won", payout=D("21.00"), stake=D("10.00"), legs=[("lost", D("2.10"))])
    assert (move.status_after, move.payout_after, move.wallet, move.held, move.what) == (
        "lost",
        D("0.00"),
        D("-21.00"),
        D("0.00"),
        r.CLAWED_BACK,
    )


def test_a_lost_single_that_wins_is_paid_its_return():
    move = r.resettle_move(status="lost", payout=D("0.00"), stake=D("10.00"), legs=[("won", D("3.40"))])
    assert (move.status_after, move.wallet, move.what) == ("won", D("34.00"), r.PAID_MORE)


def test_void_both_ways():
    to_void = r.resettle_move(status="won", payout=D("21.00"), stake=D("10.00"), legs=[("void", D("2.10"))])
    assert (to_void.status_after, to_void.payout_after, to_void.wallet) == ("void", D("10.00"), D("-11.00"))
    from_void = r.resettle_move(status="void", payout=D("10.00"), stake=D("10.00"), legs=[("won", D("2.10"))])
    assert (from_void.status_after, from_void.wallet) == ("won", D("11.00"))


def test_a_cash_out_stands_whatever_the_result():
    move = r.resettle_move(status="cashed_out", payout=D("19.95"), stake=D("10.00"), legs=[("lost", D("2.10"))])
    assert (move.status_after, move.payout_after, move.wallet, move.moves, move.what) == (
        "cashed_out",
        D("19.95"),
        D("0.00"),
        False,
        r.CASH_OUT_STANDS,
    )


def test_a_lost_accumulator_with_a_leg_undecided_is_open_again_with_its_stake_held():
    move = r.resettle_move(
        status="lost", payout=D("0.00"), stake=D("10.00"), legs=[("won", D("2.10")), ("undecided", D("1.50"))]
    )
    assert (move.status_after, move.payout_after, move.wallet, move.held, move.what) == (
        "accepted",
        None,
        D("0.00"),
        D("10.00"),
        r.REOPENED,
    )


def test_an_open_accumulator_settles_when_its_corrected_leg_loses_and_stays_open_otherwise():
    lost = r.resettle_move(
        status="accepted", payout=None, stake=D("10.00"), legs=[("lost", D("2.10")), ("undecided", D("1.5"))]
    )
    assert (lost.status_after, lost.wallet, lost.what) == ("lost", D("0.00"), r.SETTLED_NOW)
    still = r.resettle_move(
        status="accepted", payout=None, stake=D("10.00"), legs=[("void", D("2.10")), ("undecided", D("1.5"))]
    )
    assert (still.status_after, still.moves, still.what) == ("accepted", False, r.UNCHANGED)


def test_the_same_outcome_moves_nothing():
    move = r.resettle_move(status="won", payout=D("21.00"), stake=D("10.00"), legs=[("won", D("2.10"))])
    assert (move.wallet, move.moves, move.what) == (D("0.00"), False, r.UNCHANGED)


@pytest.mark.parametrize("status", ["pending", "rejected"])
def test_bets_never_taken_are_not_resettled(status):
    with pytest.raises(ValueError, match="not resettled"):
        r.resettle_move(status=status, payout=D("0.00"), stake=D("10.00"), legs=[("won", D("2.10"))])


@pytest.mark.parametrize(
    ("owed", "balance", "taken", "left"),
    [("21.00", "111.00", "21.00", "0.00"), ("21.00", "11.00", "11.00", "10.00"), ("21.00", "0.00", "0.00", "21.00")],
)
def test_a_claw_back_never_takes_a_balance_below_zero(owed, balance, taken, left):
    assert r.recoverable(owed=D(owed), balance=D(balance)) == (D(taken), D(left))
