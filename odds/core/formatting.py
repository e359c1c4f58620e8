"""Odds formats at the edge. Prices are decimal odds (``Decimal``) everywhere inside the platform;
fractional and American odds exist only where a price is shown to a punter.

Fractional odds are not a plain conversion: UK books quote from a fixed ladder of familiar
fractions (6/4 rather than 3/2, 10/11 rather than 91/100), so a decimal price is shown as the
nearest fraction on that ladder.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from enum import StrEnum
from fractions import Fraction

from reducers import rules


class OddsFormat(StrEnum):
    DECIMAL = "decimal"
    FRACTIONAL = "fractional"
    AMERICAN = "american"


def _ladder(*fractions: str) -> tuple[Fraction, ...]:
    return tuple(Fraction(f) for f in fractions)


# The traditional fractional ladder (odds-on up to evens, then odds-against), ascending.
FRACTIONAL_LADDER: tuple[Fraction, ...] = _ladder(*rules.FRACTIONAL_LADDER)
# Fractions whose canonical form the ladder spells differently (6/4 is 3/2 reduced).
_SPELLING = {Fraction(3, 2): "6/4", Fraction(2, 3): "4/6", Fraction(17, 8): "85/40"}


def _fraction_text(fraction: Fraction) -> str:
    return _SPELLING.get(fraction, f"{fraction.numerator}/{fraction.denominator}")


def _check(price: Decimal) -> None:
    if not isinstance(price, Decimal) or not price.is_finite() or price <= 1:
        raise ValueError(f"decimal odds must be a finite Decimal above 1, got {price!r}")


def decimal_to_fractional(price: Decimal) -> str:
    """The nearest fraction on the ladder, e.g. 2.50 → "6/4", 1.91 → "10/11", 3.00 → "2/1".

    A price exactly between two rungs is shown at the shorter one, so the displayed odds never
    promise more than the price that will be settled.
    """
    _check(price)
    target = Fraction(price - 1)
    best = min(FRACTIONAL_LADDER, key=lambda rung: (abs(rung - target), rung))
    return _fraction_text(best)


def decimal_to_american(price: Decimal) -> str:
    """Moneyline odds: +150 (win 150 for 100 staked) from 2.00 up, -110 (stake 110 to win 100) below.

    Rounded half up to a whole number; 2.00 is "+100".
    """
    _check(price)
    if price >= 2:
        value = ((price - 1) * 100).quantize(Decimal(1), rounding=ROUND_HALF_UP)
        return f"+{value}"
    value = (Decimal(100) / (price - 1)).quantize(Decimal(1), rounding=ROUND_HALF_UP)
    return f"-{value}"


def decimal_text(price: Decimal) -> str:
    """Decimal odds with two places, the platform's own notation."""
    _check(price)
    return str(price.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def odds_format(*, price: Decimal, fmt: OddsFormat) -> str:
    """Show a decimal price in the punter's chosen format."""
    if fmt is OddsFormat.FRACTIONAL:
        return decimal_to_fractional(price)
    if fmt is OddsFormat.AMERICAN:
        return decimal_to_american(price)
    return decimal_text(price)
