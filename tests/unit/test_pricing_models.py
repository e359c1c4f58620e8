"""The in-play pricing models against known values: closed forms, published figures and an
independent simulation of the scoring rules."""

from __future__ import annotations

import math
import random
from decimal import Decimal

import pytest

from odds.feed.book import prices_from_probabilities
from odds.feed.pricing import EventPricer, calibrate, distribution
from odds.feed.pricing.basketball import MARGIN_SD, BasketballLive, BasketballRates, normal_cdf
from odds.feed.pricing.football import FootballLive, FootballRates, poisson, rates_from_book
from odds.feed.pricing.tennis import (
    ServeChances,
    TennisLive,
    chances_from_book,
    game_chance,
    match_chance,
    tiebreak_chance,
    tiebreak_server,
)
from reducers.market_kinds import BOTH_TEAMS_TO_SCORE, MATCH_RESULT, MATCH_WINNER, OVER_UNDER

# --- football ---


def result_chances(rates: FootballRates, live: FootballLive) -> list[float]:
    return MATCH_RESULT.probabilities(distribution(params=rates, live=live), line=None)


def test_a_level_match_of_one_goal_a_side_is_drawn_as_the_bessel_function_says():
    # P(X = Y) for two independent Poisson(1) counts is e^-2 I0(2) = 0.308508…
    bessel = sum(1 / math.factorial(k) ** 2 for k in range(30))
    assert result_chances(FootballRates(1.0, 1.0), FootballLive())[1] == pytest.approx(math.exp(-2) * bessel, abs=1e-9)


def test_goalless_at_kick_off_both_teams_score_as_often_as_each_side_scores_at_all():
    rates = FootballRates(1.5, 1.2)
    chances = BOTH_TEAMS_TO_SCORE.probabilities(distribution(params=rates, live=FootballLive()), line=None)
    assert chances[0] == pytest.approx((1 - math.exp(-1.5)) * (1 - math.exp(-1.2)), abs=1e-9)


def test_a_two_goal_lead_at_89_minutes_is_all_but_won():
    # Aston Villa 0-2 down at 89' (about three minutes with added time left of 92 played).
    live = FootballLive(home=0, away=2, remaining=3 / 92)
    home, draw, away = result_chances(FootballRates(1.5, 1.2), live)
    # The home side needs three goals to win: Poisson(1.5 * 3/92) at least 3.
    mean = 1.5 * 3 / 92
    assert home == pytest.approx(1 - sum(poisson(mean)[:3]), rel=0.05)
    assert away > 0.998
    prices = prices_from_probabilities([home, draw, away], 0.06)
    assert prices[0] >= Decimal("100")
    assert prices[2] == Decimal("1.01")


def test_a_goal_moves_the_whole_book_at_once():
    rates = FootballRates(1.4, 1.4)
    before = result_chances(rates, FootballLive(remaining=0.5))
    after = result_chances(rates, FootballLive(home=1, remaining=0.5))
    assert after[0] > 0.6 > before[0]
    line = Decimal("2.5")
    totals_before = OVER_UNDER.probabilities(distribution(params=rates, live=FootballLive(remaining=0.5)), line=line)
    totals_after = OVER_UNDER.probabilities(
        distribution(params=rates, live=FootballLive(home=1, remaining=0.5)), line=line
    )
    assert totals_after[0] > totals_before[0]


def test_a_red_card_lengthens_the_side_down_to_ten():
    rates = FootballRates(1.4, 1.4)
    level = result_chances(rates, FootballLive(remaining=0.6))
    ten_men = result_chances(rates, FootballLive(remaining=0.6, red_home=1))
    assert ten_men[0] < level[0]
    assert ten_men[2] > level[2]


def test_the_rates_found_from_a_book_price_it_again():
    rates = FootballRates(1.7, 0.9)
    home, _, away = result_chances(rates, FootballLive())
    over = OVER_UNDER.probabilities(distribution(params=rates, live=FootballLive()), line=Decimal("2.5"))[0]
    found = rates_from_book(home=home, away=away, over=over)
    assert (found.home, found.away) == (pytest.approx(1.7, abs=1e-3), pytest.approx(0.9, abs=1e-3))


# --- tennis ---


def test_holding_serve_follows_the_closed_form_of_a_game():
    # p^4 (1 + 4q + 10q^2) + 20 p^3 q^3 · p^2 / (p^2 + q^2), at p = 0.6: 0.735729…
    p, q = 0.6, 0.4
    closed = p**4 * (1 + 4 * q + 10 * q**2) + 20 * p**3 * q**3 * p**2 / (p**2 + q**2)
    assert game_chance(0.6) == pytest.approx(closed, abs=1e-12)
    assert game_chance(0.6) == pytest.approx(0.7357, abs=1e-4)


def test_from_deuce_the_server_needs_two_points_in_a_row_first():
    assert game_chance(0.6, 3, 3) == pytest.approx(0.36 / 0.52, abs=1e-12)
    assert game_chance(0.6, 4, 3) == pytest.approx(0.6 + 0.4 * 0.36 / 0.52, abs=1e-12)


def test_a_tiebreak_is_served_one_point_then_two_each():
    assert [tiebreak_server("home", n) for n in range(6)] == ["home", "away", "away", "home", "home", "away"]


def test_equal_players_are_even_in_a_tiebreak_and_a_match():
    chances = ServeChances(0.64, 0.64)
    assert tiebreak_chance(chances, home=0, away=0, first="home") == pytest.approx(0.5, abs=1e-12)
    assert match_chance(chances=chances, live=TennisLive()) == pytest.approx(0.5, abs=1e-12)


def test_the_better_server_is_the_favourite_and_more_so_the_bigger_the_edge():
    wide = match_chance(chances=ServeChances(0.66, 0.62), live=TennisLive())
    narrow = match_chance(chances=ServeChances(0.65, 0.63), live=TennisLive())
    assert wide > narrow > 0.5


def _simulated_match(rng: random.Random, chances: ServeChances, live: TennisLive) -> str:
    """Play the rest of a match by the rules, point by point (no shared code with the model)."""
    sets, games, points, server = list(live.sets), list(live.games), list(live.points), live.server
    first_tb = None
    while max(sets) < 2:
        tb = games == [6, 6]
        if tb and first_tb is None:
            # Who opened the tie-break: its first point, then two each.
            opened = ((sum(points) + 1) // 2) % 2 == 0
            first_tb = server if opened else ("away" if server == "home" else "home")
        p = chances.home if server == "home" else chances.away
        winner = server if rng.random() < p else ("away" if server == "home" else "home")
        i = 0 if winner == "home" else 1
        points[i] += 1
        target = 7 if tb else 4
        if points[i] >= target and points[i] - points[1 - i] >= 2:
            games[i] += 1
            points = [0, 0]
            if tb:
                server = "away" if first_tb == "home" else "home"
                first_tb = None
            else:
                server = "away" if server == "home" else "home"
            if games[i] == 7 or (games[i] >= 6 and games[i] - games[1 - i] >= 2):
                sets[i] += 1
                games = [0, 0]
        elif tb and (sum(points) % 2 == 1):
            server = "away" if server == "home" else "home"
    return "home" if sets[0] == 2 else "away"


def test_a_set_and_a_break_up_matches_an_independent_simulation_of_the_rules():
    # Home won the first set 6-4 and leads 3-1 with a break, serving.
    chances = ServeChances(0.63, 0.63)
    live = TennisLive(sets=(1, 0), games=(3, 1), server="home", set_games=((6, 4),))
    model = match_chance(chances=chances, live=live)
    rng = random.Random(7)
    runs = 20_000
    simulated = sum(_simulated_match(rng, chances, live) == "home" for _ in range(runs)) / runs
    assert 0.88 < model < 0.95
    assert model == pytest.approx(simulated, abs=4 * math.sqrt(model * (1 - model) / runs))


def test_a_tiebreak_in_progress_matches_an_independent_simulation_of_the_rules():
    chances = ServeChances(0.6, 0.7)
    live = TennisLive(sets=(0, 1), games=(6, 6), points=(5, 3), server="away", set_games=((4, 6),))
    model = match_chance(chances=chances, live=live)
    rng = random.Random(11)
    runs = 20_000
    simulated = sum(_simulated_match(rng, chances, live) == "home" for _ in range(runs)) / runs
    assert model == pytest.approx(simulated, abs=4 * math.sqrt(model * (1 - model) / runs))


def test_serving_chances_found_from_a_book_price_it_again():
    found = chances_from_book(home=0.7)
    assert match_chance(chances=found, live=TennisLive()) == pytest.approx(0.7, abs=1e-4)


# --- basketball ---


def test_a_home_advantage_alone_prices_the_tip_off_by_the_normal_curve():
    rates = BasketballRates(margin=3.0, total=218.0)
    home = MATCH_WINNER.probabilities(distribution(params=rates, live=BasketballLive()), line=None)[0]
    assert home == pytest.approx(normal_cdf(3.0 / MARGIN_SD), abs=0.003)


def test_five_points_up_with_six_minutes_left_follows_the_brownian_motion():
    rates = BasketballRates(margin=0.0, total=218.0)
    live = BasketballLive(home=90, away=85, remaining=6 / 48)
    home = MATCH_WINNER.probabilities(distribution(params=rates, live=live), line=None)[0]
    # The lead survives unless the remaining margin falls below -5 (a tie goes to overtime, even);
    # whole points for each side add the variance of their rounding (1/12 each) to the curve's.
    assert home == pytest.approx(normal_cdf(5 / (MARGIN_SD * math.sqrt(6 / 48))), abs=2e-3)


def test_ten_points_up_with_two_minutes_left_is_all_but_won():
    live = BasketballLive(home=100, away=90, remaining=2 / 48)
    home = MATCH_WINNER.probabilities(distribution(params=BasketballRates(), live=live), line=None)[0]
    assert home > 0.999


def test_a_total_line_at_the_expected_points_is_an_even_chance():
    rates = BasketballRates(margin=0.0, total=218.0)
    over = OVER_UNDER.probabilities(distribution(params=rates, live=BasketballLive()), line=Decimal("218"))[0]
    assert over == pytest.approx(0.5, abs=1e-3)


# --- the event's model ---


def test_an_event_is_calibrated_to_its_own_book_and_prices_its_markets_alike():
    rates = FootballRates(1.8, 0.8)
    pricer = EventPricer(sport="football", params=rates)
    books = {
        MATCH_RESULT.key: (None, pricer.fair(MATCH_RESULT, None)),
        OVER_UNDER.key: (Decimal("2.5"), pricer.fair(OVER_UNDER, Decimal("2.5"))),
    }
    found = calibrate(sport="football", books=books)
    again = EventPricer(sport="football", params=found)
    assert again.fair(BOTH_TEAMS_TO_SCORE, None) == pytest.approx(pricer.fair(BOTH_TEAMS_TO_SCORE, None), abs=1e-3)
