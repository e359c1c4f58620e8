from decimal import Decimal

import pytest

from reducers.betting import cash_out_offer, price_acceptable, settle_outcome

D = Decimal


@pytest.mark.parametrize(
    ("policy", "seen", "current", "accepted"),
    [
        ("none", "2.10", "2.10", True),
        ("none", "2.10", "2.12", False),
        ("none", "2.10", "2.08", False),
        ("any", "2.10", "1.50", True),
        ("any", "2.10", "3.00", True),
        ("better", "2.10", "2.10", True),
        ("better", "2.10", "2.20", True),
        ("better", "2.10", "2.08", False),
    ],
)
def test_price_policy_decides_whether_a_moved_price_is_accepted(policy, seen, current, accepted):
    assert price_acceptable(seen=D(seen), current=D(current), policy=policy) is accepted


def test_an_unknown_price_policy_is_an_error():
    with pytest.raises(ValueError, match="unknown price policy"):
        price_acceptable(seen=D("2"), current=D("2"), policy="maybe")


def test_single_that_won_pays_stake_times_price():
    assert settle_outcome(stake=D("10.00"), legs=[("won", D("2.50"))]) == ("won", D("25.00"))


def test_single_that_lost_pays_nothing():
    assert settle_outcome(stake=D("10.00"), legs=[("lost", D("2.50"))]) == ("lost", D("0.00"))


def test_accumulator_stays_open_while_a_leg_is_undecided():
    assert settle_outcome(stake=D("10.00"), legs=[("won", D("2.00")), ("undecided", D("3.00"))]) is None


def test_accumulator_is_lost_as_soon_as_one_leg_loses():
    assert settle_outcome(stake=D("10.00"), legs=[("lost", D("2.00")), ("undecided", D("3.00"))]) == (
        "lost",
        D("0.00"),
    )


def test_accumulator_counts_a_void_leg_at_evens_money():
    outcome = settle_outcome(stake=D("10.00"), legs=[("won", D("2.00")), ("void", D("3.00")), ("won", D("1.50"))])
    assert outcome == ("won", D("30.00"))


def test_bet_whose_legs_are_all_void_is_void_and_refunds_the_stake():
    assert settle_outcome(stake=D("7.35"), legs=[("void", D("2.00")), ("void", D("3.00"))]) == ("void", D("7.35"))


def test_payout_is_rounded_down_to_the_penny():
    assert settle_outcome(stake=D("0.33"), legs=[("won", D("1.57"))]) == ("won", D("0.51"))


def test_cash_out_offer_is_fair_value_less_the_margin():
    # 10 at 3.00 now trading at 2.00: fair value 30 / 2 = 15, less 5 % = 14.25.
    assert cash_out_offer(stake=D("10.00"), legs=[("undecided", D("3.00"), D("2.00"))]) == D("14.25")


def test_no_cash_out_offer_while_a_leg_has_no_live_price():
    assert cash_out_offer(stake=D("10.00"), legs=[("undecided", D("3.00"), None)]) is None


def test_no_cash_out_offer_once_a_leg_lost():
    assert (
        cash_out_offer(stake=D("10.00"), legs=[("lost", D("3.00"), None), ("undecided", D("2.00"), D("2.00"))]) is None
    )


def test_cash_out_offer_counts_won_legs_as_settled():
    # Won leg at 2.00 banks the double; the open leg 1.50 trades at 1.50: fair 30 / 1.5 = 20 → 19.00.
    offer = cash_out_offer(stake=D("10.00"), legs=[("won", D("2.00"), None), ("undecided", D("1.50"), D("1.50"))])
    assert offer == D("19.00")
