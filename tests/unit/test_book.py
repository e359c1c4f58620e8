import random
from decimal import Decimal

import pytest

from odds.feed.book import RandomWalk, overround, prices_from_probabilities, to_ladder


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("1.005", "1.01"),
        ("1.999", "1.99"),
        ("2.03", "2.02"),
        ("3.07", "3.05"),
        ("5.55", "5.5"),
        ("7.9", "7.8"),
        ("15.7", "15.5"),
        ("27.5", "27"),
        ("47", "46"),
        ("73", "70"),
        ("2000", "1000"),
    ],
)
def test_prices_round_down_onto_the_ladder(raw, expected):
    assert to_ladder(Decimal(raw)) == Decimal(expected)


def test_simulated_books_keep_a_realistic_overround():
    rng = random.Random(1)
    for _ in range(200):
        k = rng.choice([2, 3])
        walk = RandomWalk([1 / k] * k, rng=rng)
        for _ in range(50):
            probabilities = walk.step()
        margin = rng.uniform(0.04, 0.08)
        book = overround(prices_from_probabilities(probabilities, margin))
        assert Decimal("1.03") <= book <= Decimal("1.10"), book


def test_a_shock_makes_the_selection_favourite():
    walk = RandomWalk([0.4, 0.3, 0.3], rng=random.Random(2))
    after = walk.shock(2, 2.0)
    assert after[2] == max(after)
