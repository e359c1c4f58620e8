"""Trading desk rules over plain values (no framework): the fat-finger check of a price override
and a market's margin as a trader sets it."""

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


# A market's margin (the book's overround less one: 0.05 is a book of 105 %) as traders may set it.
# Beyond a quarter the prices stop looking like a price; none at all is a fair book.
MARGIN_MIN = Decimal("0")
MARGIN_MAX = Decimal("0.25")
MARGIN_REFUSED = (
    "a margin is a percentage from 0 to 25 with at most two decimals (e.g. 5 or 6.25), or empty for the default"
)


def margin_from_percent(text: str) -> Decimal | None:
    """A trader's margin typed as a percentage ("5", "6.25", "5 %") → the fraction (0.0625);
    empty → ``None`` (the market follows the pricing model's default). Raises ``ValueError`` with
    ``MARGIN_REFUSED`` for anything else."""
    raw = text.strip().removesuffix("%").strip()
    if not raw:
        return None
    if len(raw) > 6 or not all(c.isdigit() or c == "." for c in raw) or raw.count(".") > 1 or raw in (".",):
        raise ValueError(MARGIN_REFUSED)
    percent = Decimal(raw)
    exponent = percent.as_tuple().exponent
    if isinstance(exponent, int) and exponent < -2:
        raise ValueError(MARGIN_REFUSED)
    return margin_checked(percent / 100)


def margin_checked(margin: Decimal) -> Decimal:
    """``margin`` when traders may set it (``MARGIN_MIN`` to ``MARGIN_MAX``), else ``ValueError``
    with ``MARGIN_REFUSED``."""
    if not MARGIN_MIN <= margin <= MARGIN_MAX:
        raise ValueError(MARGIN_REFUSED)
    return margin
