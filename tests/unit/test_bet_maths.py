from decimal import Decimal

import pytest

from odds.betting.services import bets
from reducers import rules, schemas
from reducers.betting import (
    MAX_LEGS,
    PRECISION,
    BetMathsError,
    cash_out_acceptable,
    cash_out_offer,
    cash_out_value,
    combined_odds,
    potential_return,
    price_acceptable,
    settle_outcome,
)

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


@pytest.mark.parametrize(
    ("policy", "seen", "current", "accepted"),
    [
        ("exact", "13.30", "13.30", True),
        ("exact", "13.30", "13.31", False),
        ("exact", "13.30", "13.29", False),
        ("better", "13.30", "13.30", True),
        ("better", "13.30", "14.25", True),
        ("better", "13.30", "13.29", False),
        ("any", "13.30", "1.00", True),
        ("any", "13.30", "99.00", True),
    ],
)
def test_cash_out_policy_decides_whether_a_moved_quote_is_paid(policy, seen, current, accepted):
    assert cash_out_acceptable(seen=D(seen), current=D(current), policy=policy) is accepted


def test_an_unknown_cash_out_policy_is_an_error():
    with pytest.raises(ValueError, match="unknown cash-out policy"):
        cash_out_acceptable(seen=D("2"), current=D("2"), policy="maybe")


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


# --- exactness: the bet maths runs in a context of PRECISION digits, not the default 28 ---


def test_the_maths_is_sized_for_every_bet_the_api_takes():
    assert bets.MAX_STAKE <= rules.SLIP_VIEW_MAX_STAKE
    # 100000.00 * 1000.00 ** 20: a coefficient of 10 ** 107.
    assert PRECISION == len(str(int(rules.SLIP_VIEW_MAX_STAKE * 100) * int(schemas.MAX_PRICE * 100) ** MAX_LEGS)) == 108


def test_the_longest_accumulator_at_the_longest_prices_is_exact():
    legs = [D("1000.00")] * MAX_LEGS
    assert combined_odds(legs) == D(10**60)
    assert potential_return(stake=rules.SLIP_VIEW_MAX_STAKE, prices=legs) == D(10**65)
    assert str(potential_return(stake=rules.SLIP_VIEW_MAX_STAKE, prices=legs)) == "1" + "0" * 65 + ".00"


def test_a_worst_case_return_with_every_digit_significant_is_exact():
    legs = [D("999.99")] * MAX_LEGS
    pennies = 9_999_999 * 99_999**MAX_LEGS // 10**40  # the exact value is in units of 10 ** -42
    assert str(potential_return(stake=D("99999.99"), prices=legs)) == f"{pennies // 100}.{pennies % 100:02d}"
    odds = (99_999**MAX_LEGS + 5 * 10**37) // 10**38  # half up from units of 10 ** -40
    assert str(combined_odds(legs)) == f"{odds // 100}.{odds % 100:02d}"


def test_a_stake_with_sub_penny_digits_gets_the_penny_of_the_exact_return():
    # 40 significant digits of stake times 20 long prices: more digits than PRECISION, truncated
    # only past the penny. Exact: stake * 99999 ** 20 in units of 10 ** -(35 + 40).
    stake = "12345." + "6" * 35
    exact = int(stake.replace(".", "")) * 99_999**MAX_LEGS
    pennies = exact // 10 ** (35 + 40 - 2)
    returned = potential_return(stake=D(stake), prices=[D("999.99")] * MAX_LEGS)
    assert str(returned) == f"{pennies // 100}.{pennies % 100:02d}"


def test_a_cash_out_is_rounded_down_from_the_exact_fair_value():
    # 10.00 at 3.00 is 30.00; less 5 % is 28.50; at live 7.00 that is 4.0714… → 4.07.
    assert cash_out_value(stake=D("10.00"), accepted=[D("3.00")], current=[D("7.00")]) == D("4.07")


@pytest.mark.parametrize(
    "compute",
    [
        lambda: combined_odds([D("999.99")] * 30),
        lambda: potential_return(stake=D("10.00"), prices=[D("999.99")] * 30),
        lambda: potential_return(stake=D("1E+200"), prices=[D("2.00")]),
        lambda: potential_return(stake=D("NaN"), prices=[D("2.00")]),
        lambda: cash_out_value(stake=D("10.00"), accepted=[D("2.00")], current=[D("999.99")] * 30),
    ],
)
def test_amounts_beyond_the_exact_maths_raise_bet_maths_error(compute):
    with pytest.raises(BetMathsError):
        compute()
