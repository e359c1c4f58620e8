"""Book maths for the feed: probabilities ↔ decimal prices on the exchange ladder.

Pure functions on Decimals. A book's overround is the sum of implied probabilities (1/price);
a bookmaker's book sits a few percent above 100 %.
"""

from __future__ import annotations

import math
import random
from decimal import ROUND_DOWN, Decimal

# (upper bound, tick) — the usual decimal-odds ladder.
LADDER: tuple[tuple[Decimal, Decimal], ...] = (
    (Decimal("2"), Decimal("0.01")),
    (Decimal("3"), Decimal("0.02")),
    (Decimal("4"), Decimal("0.05")),
    (Decimal("6"), Decimal("0.1")),
    (Decimal("10"), Decimal("0.2")),
    (Decimal("20"), Decimal("0.5")),
    (Decimal("30"), Decimal("1")),
    (Decimal("50"), Decimal("2")),
    (Decimal("100"), Decimal("5")),
    (Decimal("1000"), Decimal("10")),
)
MIN_PRICE = Decimal("1.01")
MAX_PRICE = Decimal("1000")


def to_ladder(price: Decimal) -> Decimal:
    """Round a price down onto the ladder (down keeps the book's margin with the bookmaker)."""
    if price <= MIN_PRICE:
        return MIN_PRICE
    if price >= MAX_PRICE:
        return MAX_PRICE
    lower = Decimal("1")
    for upper, tick in LADDER:
        if price < upper:
            steps = ((price - lower) / tick).to_integral_value(rounding=ROUND_DOWN)
            return max(MIN_PRICE, (lower + steps * tick).quantize(Decimal("0.01")))
        lower = upper
    return MAX_PRICE


def overround(prices: list[Decimal]) -> Decimal:
    return sum((Decimal(1) / p for p in prices), Decimal(0))


def prices_from_probabilities(probabilities: list[float], margin: float) -> list[Decimal]:
    """Fair probabilities → ladder prices carrying the given margin (e.g. 0.06).

    The probabilities sum to the number of selections that win together (1 in most markets, 2
    in double chance), and the book's overround is that number times ``1 + margin``. A favourite
    so short that its price would fall below 1.01 is floored there; the margin it can no longer
    carry is laid on the other selections (the outsiders shorten), as a book does when a match
    is all but decided, so the overround stays where it was set.
    """
    ceiling = 1 / float(MIN_PRICE)
    winning = max(1, round(sum(probabilities)))
    implied = [min(max(p, 1e-4) * (1 + margin), ceiling) for p in probabilities]
    # Spread the deficit in proportion over the selections still below the floor; one that
    # reaches the floor on the way passes its share on, so the loop ends within one pass per
    # selection.
    for _ in probabilities:
        free = [i for i, x in enumerate(implied) if x < ceiling]
        deficit = winning * (1 + margin) - sum(implied)
        if deficit <= 1e-12 or not free:
            break
        spread = sum(implied[i] for i in free)
        for i in free:
            implied[i] = min(ceiling, implied[i] + deficit * implied[i] / spread)
    return [to_ladder(Decimal(1) / Decimal(repr(x))) for x in implied]


def probabilities_from_prices(prices: list[Decimal], *, winning: int = 1) -> list[float]:
    """Implied probabilities with the margin taken out proportionally; they sum to ``winning``,
    the number of selections that win together (``MarketKind.winning``)."""
    implied = [1 / float(p) for p in prices]
    total = sum(implied)
    return [winning * x / total for x in implied]


class RandomWalk:
    """A market's fair probabilities moving as a momentum random walk in log-odds space.

    Momentum follows seed 000's walker: the direction drifts normally and is clamped, so
    prices trend for a while rather than jitter. Shocks (a goal) move the book sharply.
    """

    def __init__(self, probabilities: list[float], *, rng: random.Random, volatility: float = 0.02) -> None:
        self.logits = [math.log(max(p, 1e-6)) for p in probabilities]
        self.direction = [0.0] * len(probabilities)
        self.rng = rng
        self.volatility = volatility

    def probabilities(self) -> list[float]:
        top = max(self.logits)
        weights = [math.exp(x - top) for x in self.logits]
        total = sum(weights)
        return [w / total for w in weights]

    def step(self) -> list[float]:
        for i in range(len(self.logits)):
            self.direction[i] = min(0.75, max(-0.75, self.rng.gauss(self.direction[i], 1.0) * 0.5))
            self.logits[i] += self.direction[i] * self.volatility
        self._clamp()
        return self.probabilities()

    def shock(self, index: int, size: float) -> list[float]:
        """Move selection ``index`` sharply (positive size = more likely)."""
        self.logits[index] += size
        self._clamp()
        return self.probabilities()

    def _clamp(self) -> None:
        # Keep every selection between 1.01 and ~500 so prices stay on a sane ladder range.
        probs = self.probabilities()
        for i, p in enumerate(probs):
            if p < 0.002:
                self.logits[i] += math.log(0.002 / p)
            elif p > 0.985:
                self.logits[i] -= math.log(p / 0.985)
