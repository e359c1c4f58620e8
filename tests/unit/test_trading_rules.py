"""The fat-finger check of a trader's price override."""

from __future__ import annotations

from decimal import Decimal

import pytest

from reducers.trading import price_change_needs_confirmation, price_change_ratio

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
