"""The market-kind registry: each kind's winners, names, chances over a distribution and the
results a trader may enter."""

from __future__ import annotations

from decimal import Decimal

import pytest

from reducers.market_kinds import (
    CHOICES,
    DOUBLE_CHANCE,
    KINDS,
    MATCH_RESULT,
    MATCH_WINNER,
    OVER_UNDER,
    SPORTS,
    Names,
    Offer,
    Outcome,
    event_markets,
    kind_of,
)


@pytest.mark.parametrize(
    ("kind", "line", "count", "home", "away", "expected"),
    [
        ("match_result", None, 3, 2, 1, (0,)),
        ("match_result", None, 3, 1, 1, (1,)),
        ("match_result", None, 3, 0, 3, (2,)),
        ("over_under", "2.5", 2, 2, 1, (0,)),
        ("over_under", "2.5", 2, 1, 1, (1,)),
        ("over_under", "2", 2, 1, 1, None),
        ("btts", None, 2, 1, 1, (0,)),
        ("btts", None, 2, 3, 0, (1,)),
        ("handicap", "-1.5", 2, 2, 1, (1,)),
        ("handicap", "-1.5", 2, 3, 1, (0,)),
        ("handicap", "0.5", 2, 1, 1, (0,)),
        ("handicap", "-1", 2, 2, 1, None),
        ("match_winner", None, 2, 101, 99, (0,)),
        ("match_winner", None, 2, 12, 14, (1,)),
        ("double_chance", None, 3, 2, 1, (0, 2)),
        ("double_chance", None, 3, 1, 1, (0, 1)),
        ("double_chance", None, 3, 0, 1, (1, 2)),
    ],
)
def test_markets_are_resulted_from_the_final_score(kind, line, count, home, away, expected):
    line = Decimal(line) if line else None
    assert KINDS[kind].winners(Outcome(home, away), line=line, selections=count) == expected


def test_a_match_won_on_sets_is_won_whatever_the_games():
    # 7-6 0-6 7-6: the winner took fewer games than the loser.
    outcome = Outcome(home=14, away=18, winner="home")
    assert MATCH_WINNER.winners(outcome, line=None, selections=2) == (0,)
    assert OVER_UNDER.winners(outcome, line=Decimal("22.5"), selections=2) == (0,)


def test_a_level_match_winner_market_with_no_winner_named_is_void():
    assert MATCH_WINNER.winners(Outcome(100, 100), line=None, selections=2) is None


def test_a_market_that_does_not_fit_its_kind_is_void_rather_than_guessed():
    assert MATCH_RESULT.winners(Outcome(1, 0), line=None, selections=2) is None
    assert OVER_UNDER.winners(Outcome(1, 0), line=None, selections=2) is None


def test_chances_over_a_distribution_leave_out_the_void_outcomes():
    # Over/under 2 goals: 2 goals is void, so only 1 and 3 count.
    distribution = [(Outcome(1, 0), 0.25), (Outcome(1, 1), 0.5), (Outcome(2, 1), 0.25)]
    assert OVER_UNDER.probabilities(distribution, line=Decimal("2")) == [0.5, 0.5]


def test_double_chance_selections_each_count_every_outcome_they_win():
    distribution = [(Outcome(1, 0), 0.5), (Outcome(0, 0), 0.3), (Outcome(0, 1), 0.2)]
    assert DOUBLE_CHANCE.probabilities(distribution, line=None) == pytest.approx([0.8, 0.5, 0.7])


def test_double_chance_is_resulted_by_the_match_outcome_and_two_selections_win():
    names = Names(home="Rovers", away="United")
    choices = DOUBLE_CHANCE.result_choices(names=names, selections=DOUBLE_CHANCE.selection_names(names))
    assert [(c.key, c.label, c.winners) for c in choices] == [
        ("home", "Rovers win", (0, 2)),
        ("draw", "Draw", (0, 1)),
        ("away", "United win", (1, 2)),
        ("void", "Void market", None),
    ]


def test_a_single_winner_kind_is_resulted_by_its_winning_selection():
    choices = MATCH_RESULT.result_choices(names=Names(home="A", away="B"), selections=("A", "Draw", "B"))
    assert [(c.key, c.winners) for c in choices] == [("0", (0,)), ("1", (1,)), ("2", (2,)), ("void", None)]


def test_kinds_name_their_markets_and_selections_from_the_event():
    specs = {spec.kind.key: spec for spec in event_markets(sport="football", home="Rovers", away="United")}
    assert specs["over_under"].name == "Total goals over/under 2.5"
    assert specs["over_under"].selections == ("Over 2.5", "Under 2.5")
    assert specs["handicap"].selections == ("Rovers -0.5", "United +0.5")
    assert specs["double_chance"].selections == ("Rovers or draw", "Draw or United", "Rovers or United")
    tennis = event_markets(sport="tennis", home="A", away="B")
    assert [spec.name for spec in tennis] == ["Match winner", "Total games over/under 22.5"]


def test_every_offered_kind_is_registered_and_the_catalogue_choices_follow_the_registry():
    for sport in SPORTS.values():
        for offer in sport.offers:
            assert kind_of(offer.kind.key) is offer.kind
    assert [key for key, _ in CHOICES] == list(KINDS)


def test_a_lined_kind_offered_without_a_line_is_refused():
    with pytest.raises(ValueError, match="offered at lines"):
        Offer(OVER_UNDER)


def test_an_unknown_sport_has_no_markets():
    with pytest.raises(ValueError, match="no markets for sport"):
        event_markets(sport="curling", home="A", away="B")
