"""Trading desk rules over plain values (no framework): the fat-finger check of a price override."""

from __future__ import annotations

from decimal import Decimal


def price_change_ratio(*, current: Decimal, new: Decimal) -> Decimal:
    """How many times larger the larger of two prices is than the smaller (1 when equal)."""
    if current <= 0 or new <= 0:
        raise ValueError("prices are positive")
    return max(new / current, current / new)


def price_change_needs_confirmation(*, current: Decimal, new: Decimal, ratio: Decimal) -> bool:
    """A trader's new price more than ``ratio`` times the current one, or less than the current one
    divided by ``ratio`` (3.35 → 33.50 at a ratio of 3), is applied only once confirmed."""
    return price_change_ratio(current=current, new=new) > ratio
