"""Football: each side's goals as a Poisson process (Maher 1982), played out from the current score
over the time that remains (Dixon & Robinson 1998 for the in-play form).

A side expected to score ``rate`` goals in a whole match scores, in the fraction ``remaining`` of
the match still to play, a Poisson number of further goals with mean ``rate * remaining``; the two
sides are independent. The final score is the current one plus those goals, so a 2-0 lead with a
minute to play is all but won, and a goal moves every market at once (the score changed, the time
left did not). A red card cuts the side's rate to ``RED_CARD_OWN`` of itself for the rest of the
match and raises the opponent's to ``RED_CARD_OTHER`` (Vecer, Kopřiva & Ichiba 2009 measured
about a third fewer goals for the side down to ten and about a fifth more for its opponent).
docs/pricing.md lists the parameters and their sources.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from reducers.market_kinds import Outcome

RED_CARD_OWN = 0.67
RED_CARD_OTHER = 1.2
# Goals a side is expected to score in a whole match when nothing is known of either side: an
# average top-flight match has about 2.7 goals, the home side scoring about 0.3 more.
DEFAULT_HOME_RATE = 1.5
DEFAULT_AWAY_RATE = 1.2
# Remaining goals per side counted: the chance of more is below 1e-12 for any rate here.
MAX_MORE_GOALS = 14
MIN_RATE = 0.05
MAX_RATE = 6.0


@dataclass(frozen=True)
class FootballRates:
    """Goals each side is expected to score over a whole match."""

    home: float = DEFAULT_HOME_RATE
    away: float = DEFAULT_AWAY_RATE

    def clamped(self) -> FootballRates:
        return FootballRates(min(MAX_RATE, max(MIN_RATE, self.home)), min(MAX_RATE, max(MIN_RATE, self.away)))


@dataclass(frozen=True)
class FootballLive:
    """Where a football match stands: the score, red cards shown to each side, and the fraction
    of the playing time still to come (1 before kick-off, 0 at full time)."""

    home: int = 0
    away: int = 0
    remaining: float = 1.0
    red_home: int = 0
    red_away: int = 0


def poisson(mean: float, *, most: int = MAX_MORE_GOALS) -> list[float]:
    """P(0), P(1), …, P(most) of a Poisson count with this mean."""
    if mean <= 0:
        return [1.0] + [0.0] * most
    out = [math.exp(-mean)]
    for k in range(1, most + 1):
        out.append(out[-1] * mean / k)
    return out


def remaining_rates(*, rates: FootballRates, live: FootballLive) -> tuple[float, float]:
    """The expected further goals of each side, red cards counted."""
    home = rates.home * RED_CARD_OWN**live.red_home * RED_CARD_OTHER**live.red_away
    away = rates.away * RED_CARD_OWN**live.red_away * RED_CARD_OTHER**live.red_home
    left = min(1.0, max(0.0, live.remaining))
    return home * left, away * left


def final_scores(*, rates: FootballRates, live: FootballLive) -> list[tuple[Outcome, float]]:
    """The distribution of the final score from where the match stands."""
    mean_home, mean_away = remaining_rates(rates=rates, live=live)
    home_more, away_more = poisson(mean_home), poisson(mean_away)
    out = []
    for i, p_home in enumerate(home_more):
        if p_home < 1e-13:
            continue
        for j, p_away in enumerate(away_more):
            p = p_home * p_away
            if p >= 1e-13:
                out.append((Outcome(live.home + i, live.away + j), p))
    return out


def _result_chances(rates: FootballRates) -> tuple[float, float, float]:
    home_goals, away_goals = poisson(rates.home), poisson(rates.away)
    home = draw = away = 0.0
    for i, p in enumerate(home_goals):
        for j, q in enumerate(away_goals):
            if i > j:
                home += p * q
            elif i == j:
                draw += p * q
            else:
                away += p * q
    return home, draw, away


def _over_chance(total: float, line: float) -> float:
    return 1.0 - sum(poisson(total, most=int(line))[: math.floor(line) + 1])


def _bisect(f: object, low: float, high: float, target: float, *, rising: bool) -> float:
    assert callable(f)
    for _ in range(60):
        mid = (low + high) / 2
        above = f(mid) > target
        if above == rising:
            high = mid
        else:
            low = mid
    return (low + high) / 2


def rates_from_book(*, home: float, away: float, over: float | None = None, line: float = 2.5) -> FootballRates:
    """The rates that price a match as the book does: the total from the over/under's chance of
    ``over`` ``line`` goals (2.7 goals when there is none), then the split between the sides
    from the match result's home and away chances (both as fair probabilities)."""
    total = 2.7
    if over is not None and 0.02 < over < 0.98:
        total = _bisect(lambda mean: _over_chance(mean, line), 0.2, 9.0, over, rising=True)
    target = home - away

    def supremacy(share: float) -> float:
        chances = _result_chances(FootballRates(total * share, total * (1 - share)))
        return chances[0] - chances[2]

    share = _bisect(supremacy, 0.02, 0.98, target, rising=True)
    return FootballRates(total * share, total * (1 - share)).clamped()
