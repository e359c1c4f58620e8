"""Bet maths on Decimals: combined odds, returns, cash-out. Shared by the API and the reducers."""

from __future__ import annotations

from collections.abc import Iterable
from decimal import ROUND_DOWN, ROUND_HALF_UP, Decimal

PENNY = Decimal("0.01")
ODDS_PLACES = Decimal("0.01")
# The book keeps this share of a cash-out's fair value (the cash-out margin).
CASH_OUT_MARGIN = Decimal("0.05")


def combined_odds(prices: Iterable[Decimal]) -> Decimal:
    """Accumulator odds: the product of the legs' decimal prices, to two places."""
    result = Decimal(1)
    for price in prices:
        result *= price
    return result.quantize(ODDS_PLACES, rounding=ROUND_HALF_UP)


def potential_return(*, stake: Decimal, prices: Iterable[Decimal]) -> Decimal:
    """Stake times the product of the prices, rounded down to the penny (never overpay)."""
    result = stake
    for price in prices:
        result *= price
    return result.quantize(PENNY, rounding=ROUND_DOWN)


def cash_out_value(*, stake: Decimal, accepted: Iterable[Decimal], current: Iterable[Decimal]) -> Decimal:
    """What the book pays now to close a bet, from the prices accepted and the live prices.

    Fair value is the potential return divided by the live odds of the legs (pass 1.00 as the
    current price of a leg already won). The book keeps ``CASH_OUT_MARGIN`` of it; the
    result is rounded down to the penny and is never negative.
    """
    ret = potential_return(stake=stake, prices=accepted)
    live = Decimal(1)
    for price in current:
        live *= price
    value = ret / live * (Decimal(1) - CASH_OUT_MARGIN)
    return max(Decimal(0), value.quantize(PENNY, rounding=ROUND_DOWN))
