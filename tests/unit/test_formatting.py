from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from odds.core.formatting import FRACTIONAL_LADDER, OddsFormat, decimal_to_american, decimal_to_fractional, odds_format


@pytest.mark.parametrize(
    ("price", "expected"),
    [
        ("2.50", "6/4"),
        ("1.91", "10/11"),
        ("1.50", "1/2"),
        ("3.00", "2/1"),
        ("2.00", "1/1"),
        ("1.67", "4/6"),
        ("2.62", "13/8"),
        ("2.10", "11/10"),
        ("3.50", "5/2"),
        ("4.33", "10/3"),
        ("1.01", "1/100"),
        ("11.00", "10/1"),
        ("1000", "999/1"),
    ],
)
def test_decimal_prices_show_as_the_nearest_fraction_on_the_ladder(price, expected):
    assert decimal_to_fractional(Decimal(price)) == expected


def test_a_price_between_two_rungs_shows_the_shorter_fraction():
    # 2.05 is 21/20 against, exactly halfway between evens (1/1) and 11/10.
    assert decimal_to_fractional(Decimal("2.05")) == "1/1"


def test_fractional_ladder_is_ascending_without_duplicates():
    assert list(FRACTIONAL_LADDER) == sorted(set(FRACTIONAL_LADDER))


@pytest.mark.parametrize(
    ("price", "expected"),
    [
        ("2.50", "+150"),
        ("1.91", "-110"),
        ("2.00", "+100"),
        ("1.50", "-200"),
        ("11.00", "+1000"),
        ("1.01", "-10000"),
    ],
)
def test_decimal_prices_show_as_american_moneyline(price, expected):
    assert decimal_to_american(Decimal(price)) == expected


@pytest.mark.parametrize("bad", [Decimal("1.00"), Decimal("0.5"), Decimal("NaN")])
def test_formatting_rejects_prices_that_are_not_odds(bad):
    with pytest.raises(ValueError, match="decimal odds"):
        decimal_to_fractional(bad)


def test_odds_format_dispatches_on_the_chosen_format():
    price = Decimal("2.5")
    assert [odds_format(price=price, fmt=f) for f in OddsFormat] == ["2.50", "6/4", "+150"]


@given(st.decimals(min_value=Decimal("1.01"), max_value=Decimal("1000"), places=2))
def test_the_fraction_shown_is_the_nearest_rung_of_the_ladder(price):
    shown = Fraction(decimal_to_fractional(price))
    target = Fraction(price - 1)
    assert shown in FRACTIONAL_LADDER
    assert all(abs(shown - target) <= abs(rung - target) for rung in FRACTIONAL_LADDER)


@given(st.decimals(min_value=Decimal("1.01"), max_value=Decimal("1000"), places=2))
def test_american_odds_convert_back_within_half_a_moneyline_unit(price):
    shown = int(decimal_to_american(price))
    back = Decimal(1) + (Decimal(shown) / 100 if shown > 0 else Decimal(100) / -shown)
    # Half a unit of +N is 0.005 in decimal odds; half a unit of -N is about (price - 1)² / 200.
    tolerance = Decimal("0.005") if shown > 0 else (price - 1) ** 2 / 190
    assert abs(back - price) <= tolerance
