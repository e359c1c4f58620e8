"""Basketball: the points margin as a Brownian motion with drift (Stern 1994), the points total
likewise, both played out from the current score over the time that remains.

Over the fraction ``remaining`` of a game still to play, the home side's lead grows by a normal
amount with mean ``margin * remaining`` and variance ``MARGIN_SD² * remaining``, and both sides'
points together by a normal amount with mean ``total * remaining`` and variance
``TOTAL_SD² * remaining``, independently (each side's points move on their own, so their sum and
difference are independent with equal spread). Stern estimated the NBA's margin spread at 15.8
points a game; the simulator's possessions give about the same, for the total as for the margin.
A game level at the end goes to overtime, which the side ahead on the model's own drift wins a
little more often than not. The distribution is over whole points for each side (home, away),
which prices the match winner, handicaps and totals alike.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from reducers.market_kinds import Outcome

MARGIN_SD = 15.8
TOTAL_SD = 15.8
DEFAULT_MARGIN = 3.0  # home advantage, points a game
DEFAULT_TOTAL = 218.0
# Each side's remaining points are enumerated within this many standard deviations of their mean.
SPAN_SD = 3.5
OVERTIME_SHARE = 5 / 48  # an overtime period as a share of a game's playing time
MIN_CELL = 1e-9


@dataclass(frozen=True)
class BasketballRates:
    """The home side's expected winning margin and both sides' expected points, over a whole game."""

    margin: float = DEFAULT_MARGIN
    total: float = DEFAULT_TOTAL


@dataclass(frozen=True)
class BasketballLive:
    """Where a game stands: points scored, and the fraction of the playing time to come."""

    home: int = 0
    away: int = 0
    remaining: float = 1.0


def normal_cdf(x: float) -> float:
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def _whole_points(mean: float, sd: float) -> list[tuple[int, float]]:
    """A normal amount of points, rounded to whole points, never below nought."""
    if sd < 1e-6:
        return [(max(0, round(mean)), 1.0)]
    low = max(0, math.floor(mean - SPAN_SD * sd))
    high = max(low, math.ceil(mean + SPAN_SD * sd))
    out = []
    for points in range(low, high + 1):
        lower = -math.inf if points == 0 else (points - 0.5 - mean) / sd
        p = normal_cdf((points + 0.5 - mean) / sd) - (0.0 if lower == -math.inf else normal_cdf(lower))
        if p > MIN_CELL:
            out.append((points, p))
    total = sum(p for _, p in out)
    return [(points, p / total) for points, p in out]


def overtime_home_chance(rates: BasketballRates) -> float:
    """The home side's chance of winning an overtime period (five minutes from level)."""
    return normal_cdf(rates.margin * OVERTIME_SHARE / (MARGIN_SD * math.sqrt(OVERTIME_SHARE)))


def final_scores(*, rates: BasketballRates, live: BasketballLive) -> list[tuple[Outcome, float]]:
    """The distribution of the final score from where the game stands; a level score is split
    between the two sides' overtime wins."""
    left = min(1.0, max(0.0, live.remaining))
    # Each side's further points: mean (total ± margin) / 2, spread sd / √2 each.
    sd = math.sqrt(left / 2) * MARGIN_SD
    home_more = _whole_points((rates.total + rates.margin) / 2 * left, sd)
    away_more = _whole_points((rates.total - rates.margin) / 2 * left, sd)
    overtime = overtime_home_chance(rates)
    out = []
    for i, p_home in home_more:
        for j, p_away in away_more:
            p = p_home * p_away
            if p < MIN_CELL:
                continue
            home, away = live.home + i, live.away + j
            if home == away:
                out.append((Outcome(home, away, "home"), p * overtime))
                out.append((Outcome(home, away, "away"), p * (1 - overtime)))
            else:
                out.append((Outcome(home, away), p))
    return out


def rates_from_book(*, home: float, line: float | None = None, over: float | None = None) -> BasketballRates:
    """The margin and total that price a game as the book does: the margin from the home side's
    fair chance of winning, the total from the over/under's fair chance of ``over`` its ``line``."""
    home = min(0.999, max(0.001, home))
    margin = MARGIN_SD * _inverse_normal(home)
    total = DEFAULT_TOTAL
    if line is not None:
        total = line if over is None else line + TOTAL_SD * _inverse_normal(min(0.999, max(0.001, over)))
    return BasketballRates(margin, total)


def _inverse_normal(p: float) -> float:
    low, high = -10.0, 10.0
    for _ in range(80):
        mid = (low + high) / 2
        if normal_cdf(mid) < p:
            low = mid
        else:
            high = mid
    return (low + high) / 2
