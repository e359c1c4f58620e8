"""The fat-finger check of a trader's price override."""

from __future__ import annotations

from decimal import Decimal

import pytest

from reducers.trading import margin_from_percent, price_change_needs_confirmation, price_change_ratio

pytestmark = pytest.mark.unit

RATIO = Decimal("3")


def test_a_tenfold_price_asks_for_confirmation():
    assert price_change_needs_confirmation(current=Decimal("3.35"), new=Decimal("33.50"), ratio=RATIO)


def test_a_price_cut_beyond_the_ratio_asks_for_confirmation():
    assert price_change_needs_confirmation(current=Decimal("9.00"), new=Decimal("2.50"), ratio=RATIO)


def test_a_price_at_exactly_the_ratio_is_applied():
    assert not price_change_needs_confirmation(current=Decimal("2.00"), new=Decimal("6.00"), ratio=RATIO)
    assert not price_change_needs_confirmation(current=Decimal("6.00"), new=Decimal("2.00"), ratio=RATIO)


def test_an_ordinary_move_is_applied():
    assert not price_change_needs_confirmation(current=Decimal("3.35"), new=Decimal("3.60"), ratio=RATIO)


def test_the_ratio_is_the_same_either_way():
    assert price_change_ratio(current=Decimal("2"), new=Decimal("8")) == price_change_ratio(
        current=Decimal("8"), new=Decimal("2")
    )


def test_a_price_that_is_not_positive_is_refused():
    with pytest.raises(ValueError, match="positive"):
        price_change_ratio(current=Decimal("0"), new=Decimal("2"))


def test_a_margin_is_typed_as_a_percentage_and_kept_as_a_fraction():
    assert margin_from_percent("5") == Decimal("0.05")
    assert margin_from_percent(" 6.25 % ") == Decimal("0.0625")
    assert margin_from_percent("0") == Decimal("0")
    assert margin_from_percent("25") == Decimal("0.25")


def test_an_empty_margin_means_the_models_own():
    assert margin_from_percent("") is None
    assert margin_from_percent("  ") is None


@pytest.mark.parametrize("text", ["25.01", "-1", "5.125", "abc", "1e1", ".", "5..0", "1000000", "NaN", "0x10"])
def test_a_margin_out_of_bounds_or_not_a_number_is_refused_with_the_rule(text):
    with pytest.raises(ValueError, match="percentage from 0 to 25"):
        margin_from_percent(text)
