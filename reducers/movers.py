"""Movers: the markets whose prices moved most in each event-time window.

Spark aggregates each (window, market, selection) into its first and last price; the score of
a market in a window is the largest move of any of its selections, in basis points.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal

# How long a window's ranking is kept (seconds).
KEEP_WINDOWS_S = 3600


@dataclass(frozen=True)
class Movement:
    """One selection's first and last price in one window."""

    window_start: int
    market_id: int
    first: Decimal
    last: Decimal


def move_bps(first: Decimal, last: Decimal) -> int:
    """Signed move from first to last price in basis points, truncated toward zero."""
    return int((last - first) / first * 10_000)


def best_moves(movements: Iterable[Movement]) -> dict[tuple[int, int], int]:
    """Per (window start, market) the largest absolute move of any selection, in basis points.

    A first price that is not positive has no relative move and is left out (the feed's schema
    refuses such prices; a record that slipped past it must not stop the ranking)."""
    best: dict[tuple[int, int], int] = {}
    for movement in movements:
        if movement.first <= 0:
            continue
        key = (movement.window_start, movement.market_id)
        best[key] = max(best.get(key, 0), abs(move_bps(movement.first, movement.last)))
    return best
