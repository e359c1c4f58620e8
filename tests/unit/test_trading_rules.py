"""The fat-finger check of a trader's price override."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from reducers.trading import (
    customer_stake_limit,
    is_referred,
    margin_from_percent,
    offer_checked,
    price_change_needs_confirmation,
    price_change_ratio,
    referral_reason,
    sport_limit_checked,
    stake_factor_from_text,
)

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


# --- customer limits and referral ---


@pytest.mark.parametrize(
    ("text", "factor"),
    [
        ("0.1", Decimal("0.1")),
        (" 0.25 ", Decimal("0.25")),
        ("1", Decimal("1")),
        ("0.001", Decimal("0.001")),
        ("", None),
    ],
)
def test_a_stake_factor_as_typed(text, factor):
    assert stake_factor_from_text(text) == factor


@pytest.mark.parametrize("text", ["0", "0.0001", "1.001", "2", "-0.1", "abc", "1e-2", ".", "0.1.2", "NaN", "0,1"])
def test_a_stake_factor_out_of_bounds_or_malformed_is_refused_with_the_rule(text):
    with pytest.raises(ValueError, match=r"stake factor is a decimal from 0\.001 to 1"):
        stake_factor_from_text(text)


def test_the_customers_limit_is_the_smallest_of_the_factors_share_and_the_sports_limits():
    max_stake = Decimal("10000.00")
    assert customer_stake_limit(max_stake=max_stake, factor=None, sport_limits=[]) is None
    assert customer_stake_limit(max_stake=max_stake, factor=Decimal("0.1"), sport_limits=[]) == Decimal("1000.00")
    # Rounded down to the penny: never more than the factor's share.
    assert customer_stake_limit(max_stake=Decimal("33.33"), factor=Decimal("0.333"), sport_limits=[]) == Decimal(
        "11.09"
    )
    limits = [Decimal("250.00"), Decimal("40.00")]
    assert customer_stake_limit(max_stake=max_stake, factor=Decimal("0.1"), sport_limits=limits) == Decimal("40.00")
    assert customer_stake_limit(max_stake=max_stake, factor=Decimal("0.001"), sport_limits=limits) == Decimal("10.00")


def test_a_stake_above_the_limit_is_referred_and_one_at_it_is_not():
    assert is_referred(stake=Decimal("10.01"), limit=Decimal("10.00"))
    assert not is_referred(stake=Decimal("10.00"), limit=Decimal("10.00"))
    assert not is_referred(stake=Decimal("9999.00"), limit=None)


@pytest.mark.parametrize("amount", [Decimal("0"), Decimal("-1"), Decimal("10000.01"), Decimal("1.001"), Decimal("NaN")])
def test_a_sport_limit_out_of_bounds_is_refused(amount):
    with pytest.raises(ValueError, match="sport's stake limit"):
        sport_limit_checked(amount, max_stake=Decimal("10000.00"))


def test_a_referrals_reason_names_stake_and_limit_in_the_wallets_currency():
    reason = referral_reason(stake=Decimal("150.00"), limit=Decimal("100.00"), currency="EUR")
    assert reason == "stake 150.00 EUR above the customer's limit of 100.00 EUR"


# --- a trader's counter-offer ---

OFFER_BOUNDS: dict[str, Decimal] = {
    "min_stake": Decimal("0.10"),
    "min_price": Decimal("1.01"),
    "max_price": Decimal("1000"),
}


def test_a_lower_stake_offer_keeps_the_prices_and_rounds_its_return_down():
    offer = offer_checked(
        stake=Decimal("33.33"),
        price=None,
        bet_stake=Decimal("150.00"),
        leg_prices=[Decimal("2.10"), Decimal("1.57")],
        **OFFER_BOUNDS,
    )
    assert (offer.stake, offer.price, offer.potential_return) == (Decimal("33.33"), None, Decimal("109.88"))


def test_another_price_on_a_single_keeps_the_stake_unless_a_lower_one_is_given():
    single: dict[str, Any] = {"bet_stake": Decimal("150.00"), "leg_prices": [Decimal("2.10")], **OFFER_BOUNDS}
    offer = offer_checked(stake=None, price=Decimal("1.90"), **single)
    assert (offer.stake, offer.price, offer.potential_return) == (Decimal("150.00"), Decimal("1.90"), Decimal("285.00"))
    both = offer_checked(stake=Decimal("100"), price=Decimal("1.95"), **single)
    assert (both.stake, both.potential_return) == (Decimal("100.00"), Decimal("195.00"))


@pytest.mark.parametrize(
    ("stake", "price", "legs"),
    [
        (None, None, ["2.10"]),  # no offer at all
        ("150.00", None, ["2.10"]),  # not lower
        ("200.00", None, ["2.10"]),
        ("0.09", None, ["2.10"]),  # below the minimum stake
        ("10.001", None, ["2.10"]),  # not in pence
        (None, "2.10", ["2.10"]),  # the same price
        (None, "1.00", ["2.10"]),  # below the ladder
        (None, "1001", ["2.10"]),
        (None, "1.955", ["2.10"]),
        (None, "1.90", ["2.10", "1.50"]),  # an accumulator's prices are never changed
    ],
)
def test_an_offer_that_offers_nothing_or_is_out_of_bounds_is_refused(stake, price, legs):
    with pytest.raises(ValueError, match="an offer is a lower stake"):
        offer_checked(
            stake=Decimal(stake) if stake else None,
            price=Decimal(price) if price else None,
            bet_stake=Decimal("150.00"),
            leg_prices=[Decimal(p) for p in legs],
            **OFFER_BOUNDS,
        )
