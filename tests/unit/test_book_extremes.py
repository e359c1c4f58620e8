import random
from decimal import Decimal

from odds.feed.book import RandomWalk, overround, prices_from_probabilities


def test_a_near_certain_favourite_is_floored_and_the_outsiders_carry_the_margin():
    prices = prices_from_probabilities([0.985, 0.008, 0.007], 0.06)
    assert prices[0] == Decimal("1.01")
    assert Decimal("1.03") <= overround(prices) <= Decimal("1.10")


def test_books_after_repeated_shocks_keep_a_realistic_overround():
    rng = random.Random(9)
    for _ in range(300):
        walk = RandomWalk([0.45, 0.27, 0.28], rng=rng)
        for _ in range(rng.randint(1, 5)):
            walk.shock(rng.randrange(3), 1.2)
        book = overround(prices_from_probabilities(walk.step(), rng.uniform(0.04, 0.08)))
        assert Decimal("1.03") <= book <= Decimal("1.10"), book


def test_two_winners_pushed_onto_the_floor_by_the_margin_pass_it_to_the_outsider():
    # Double chance with the away side far ahead: both pairs holding "away" are just short of 1.01
    # and reach the floor while the margin is spread; their share goes to the outsider.
    prices = prices_from_probabilities([0.07, 0.947, 0.947], 0.04)
    assert prices[1:] == [Decimal("1.01"), Decimal("1.01")]
    assert Decimal("1.03") <= overround(prices) / 2 <= Decimal("1.10"), prices


def test_double_chance_books_near_the_floor_keep_their_overround():
    rng = random.Random(4)
    for _ in range(5000):
        a, b = rng.uniform(0.9, 0.9995), rng.uniform(0.9, 0.9995)
        prices = prices_from_probabilities([max(0.0005, 2 - a - b), a, b], rng.uniform(0.04, 0.08))
        assert Decimal("1.03") <= overround(prices) / 2 <= Decimal("1.10"), prices
