"""In-play pricing: each sport's model gives the distribution of final results from where a match
stands, and every market kind prices itself over it (``MarketKind.probabilities``).

``football`` (goals as Poisson processes over the time left), ``tennis`` (point by point from each
player's chance on serve) and ``basketball`` (margin and total as Brownian motions over the time
left) each take their sport's parameters (``Params``) and live state (``Live``). ``EventPricer``
holds one event's parameters and state and keeps each kind's fair chances until either changes.
The parameters come from the event's own book (``calibrate``: the rates that price its headline
market and its total as the catalogue does), so the opening prices, the in-play prices and the
simulator's play agree. docs/pricing.md has the models with their parameters and sources.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import replace
from decimal import Decimal

from odds.feed.pricing.basketball import BasketballLive, BasketballRates
from odds.feed.pricing.basketball import final_scores as basketball_scores
from odds.feed.pricing.basketball import rates_from_book as basketball_from_book
from odds.feed.pricing.football import FootballLive, FootballRates
from odds.feed.pricing.football import final_scores as football_scores
from odds.feed.pricing.football import rates_from_book as football_from_book
from odds.feed.pricing.tennis import ServeChances, TennisLive, chances_from_book, final_results
from reducers.market_kinds import BOTH_TEAMS_TO_SCORE, MATCH_RESULT, MATCH_WINNER, OVER_UNDER, MarketKind, Outcome

Params = FootballRates | ServeChances | BasketballRates
Live = FootballLive | TennisLive | BasketballLive

MODELLED = ("football", "tennis", "basketball")


def default_params(sport: str) -> Params:
    """A neutral pairing: what a new event opens at before anyone prices it."""
    if sport == "tennis":
        return ServeChances()
    if sport == "basketball":
        return BasketballRates()
    return FootballRates()


def default_live(sport: str) -> Live:
    if sport == "tennis":
        return TennisLive()
    if sport == "basketball":
        return BasketballLive()
    return FootballLive()


def distribution(*, params: Params, live: Live) -> list[tuple[Outcome, float]]:
    """The final results a match can end with from ``live``, with their chances."""
    if isinstance(params, ServeChances) and isinstance(live, TennisLive):
        return final_results(chances=params, live=live)
    if isinstance(params, BasketballRates) and isinstance(live, BasketballLive):
        return basketball_scores(rates=params, live=live)
    if isinstance(params, FootballRates) and isinstance(live, FootballLive):
        return football_scores(rates=params, live=live)
    raise TypeError(f"no model for {type(params).__name__} with {type(live).__name__}")


Book = tuple[Decimal | None, Sequence[float]]  # a market's line and its fair chances, in selection order


def calibrate(*, sport: str, books: Mapping[str, Book]) -> Params:
    """The parameters that price an event as its catalogue book does. ``books`` maps a kind's
    key to its market's line and fair chances; the headline market (match result or match
    winner) and the total are used, the rest follow from them. A sport without a model, or a
    book without a headline market, gets the neutral parameters."""
    if sport == "football" and MATCH_RESULT.key in books:
        _, (home, _draw, away) = books[MATCH_RESULT.key]
        line, chances = books.get(OVER_UNDER.key, (None, ()))
        if line is None and BOTH_TEAMS_TO_SCORE.key in books:
            return football_from_book(home=home, away=away)
        over = chances[0] if line is not None and chances else None
        return football_from_book(home=home, away=away, over=over, line=float(line or Decimal("2.5")))
    if sport == "tennis" and MATCH_WINNER.key in books:
        return chances_from_book(home=books[MATCH_WINNER.key][1][0])
    if sport == "basketball" and MATCH_WINNER.key in books:
        line, chances = books.get(OVER_UNDER.key, (None, ()))
        over = chances[0] if chances else None
        return basketball_from_book(
            home=books[MATCH_WINNER.key][1][0], line=None if line is None else float(line), over=over
        )
    return default_params(sport)


def drift(params: Params, *, rng: random.Random, scale: float) -> Params:
    """The parameters after a small random move (``scale`` about 0.01 a step): books drift
    before a match as money and news come in. Log-normal steps keep rates positive."""
    if isinstance(params, FootballRates):
        return FootballRates(
            params.home * math.exp(rng.gauss(0, scale)), params.away * math.exp(rng.gauss(0, scale))
        ).clamped()
    if isinstance(params, ServeChances):
        return ServeChances(params.home + rng.gauss(0, scale / 5), params.away + rng.gauss(0, scale / 5)).clamped()
    return replace(
        params, margin=params.margin + rng.gauss(0, scale * 10), total=params.total + rng.gauss(0, scale * 20)
    )


class EventPricer:
    """One event's model: its parameters and live state, and each market kind's fair chances
    over them, computed once per change of either."""

    def __init__(self, *, sport: str, params: Params, live: Live | None = None) -> None:
        self.sport = sport
        self.params = params
        self.live: Live = live if live is not None else default_live(sport)
        self._distribution: list[tuple[Outcome, float]] | None = None
        self._fair: dict[tuple[str, Decimal | None], tuple[float, ...]] = {}

    def update(self, *, params: Params | None = None, live: Live | None = None) -> None:
        if params is not None:
            self.params = params
        if live is not None:
            self.live = live
        self._distribution = None
        self._fair.clear()

    def distribution(self) -> list[tuple[Outcome, float]]:
        if self._distribution is None:
            self._distribution = distribution(params=self.params, live=self.live)
        return self._distribution

    def fair(self, kind: MarketKind, line: Decimal | None) -> tuple[float, ...]:
        """The fair chance of each selection of a market of ``kind`` at ``line``."""
        key = (kind.key, line)
        found = self._fair.get(key)
        if found is None:
            found = tuple(kind.probabilities(self.distribution(), line=line))
            self._fair[key] = found
        return found


def opening_chances(*, sport: str, params: Params, kind: MarketKind, line: Decimal | None) -> list[float]:
    """The fair chances a market opens at before its event starts."""
    return list(EventPricer(sport=sport, params=params).fair(kind, line))


def fair_total_line(*, pricer: EventPricer, lines: Sequence[Decimal]) -> Decimal | None:
    """Of ``lines``, the one whose over is nearest an even chance where the match stands."""
    if not lines:
        return None
    return min(lines, key=lambda line: abs(pricer.fair(OVER_UNDER, line)[0] - 0.5))
