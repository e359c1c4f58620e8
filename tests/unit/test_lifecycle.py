"""The simulated match: kick-off, incidents with their suspensions, full time, in each sport."""

import random
import statistics

from odds.feed.lifecycle import RULES, MatchState, Step, lifecycle_step
from odds.feed.pricing.basketball import BasketballRates
from odds.feed.pricing.football import FootballRates
from odds.feed.pricing.tennis import ServeChances
from reducers.suspensions import Reason

SPEED = 60.0  # a football match lasts 95 s of wall clock


def play(state: MatchState, *, until: float, every: float = 0.5, seed: int = 1) -> list[Step]:
    rng = random.Random(seed)
    seen = []
    t = state.starts_at - 1
    while t <= until:
        seen += [a.step for a in lifecycle_step(state, now=t, speed=SPEED, rng=rng)]
        t += every
    return seen


def football(**fields) -> MatchState:
    return MatchState(
        **{"event_id": 1, "sport": "football", "starts_at": 1000.0, "params": FootballRates(1.5, 1.2), **fields}
    )


def test_nothing_happens_before_kick_off():
    assert lifecycle_step(football(), now=999.0, speed=SPEED, rng=random.Random(1)) == []


def test_kick_off_suspends_then_reopens_in_play():
    state = football()
    suspend = RULES["football"].suspend_s[Reason.KICK_OFF] / SPEED
    assert play(state, until=1000.0 + suspend + 0.5)[:2] == [Step.KICK_OFF, Step.REOPEN]
    assert state.status == "in_play"


def test_every_goal_suspends_with_its_reason_and_reopens_by_itself():
    state = football(params=FootballRates(3.0, 3.0))
    play(state, until=1000.0 + 200, seed=4)
    goals = [a for a in state.history if a.step is Step.SCORE]
    assert goals, "six expected goals scored at least once with this seed"
    assert all(a.reason in (Reason.GOAL, Reason.VAR) for a in goals)
    after = [state.history[state.history.index(goal) + 1].step for goal in goals]
    assert all(step in (Step.REOPEN, Step.SCORE, Step.CARD, Step.FULL_TIME) for step in after)
    assert state.suspended_until is None


def test_goals_come_at_the_rates_the_book_is_priced_on():
    homes, aways = [], []
    for seed in range(150):
        state = football()
        play(state, until=1000.0 + 200, every=2.0, seed=seed)
        homes.append(state.home)
        aways.append(state.away)
    assert 1.2 < statistics.mean(homes) < 1.8
    assert 0.9 < statistics.mean(aways) < 1.5


def test_full_time_ends_the_match_once():
    state = football()
    seen = play(state, until=1000.0 + 200)
    assert seen.count(Step.FULL_TIME) == 1
    assert seen[-1] is Step.FULL_TIME
    assert state.status == "finished"


def test_a_match_picked_up_in_play_keeps_its_score_and_plays_on():
    state = football(status="in_play", home=1, away=1, params=FootballRates(3.0, 3.0))
    seen = play(state, until=1000.0 + 200, seed=4)
    assert Step.KICK_OFF not in seen
    assert state.home + state.away > 2


def test_a_match_first_seen_long_after_kick_off_is_played_up_to_now_at_once():
    state = football()
    actions = lifecycle_step(state, now=1000.0 + 60, speed=SPEED, rng=random.Random(2))
    assert actions[0].step is Step.KICK_OFF
    assert actions[0].at == 1000.0
    assert all(a.at <= 1000.0 + 60 for a in actions)
    assert state.status == "in_play"


def test_tennis_is_played_point_by_point_until_a_player_wins_two_sets():
    state = MatchState(event_id=2, sport="tennis", starts_at=1000.0, params=ServeChances(0.64, 0.62))
    play(state, until=1000.0 + 400, seed=3)
    points = [a for a in state.history if a.step is Step.POINT]
    assert state.status == "finished"
    assert max(state.tennis.sets) == 2
    assert len(points) > 100
    breaks = [a for a in points if a.broke]
    assert breaks
    assert all(a.reason is Reason.BREAK_OF_SERVE for a in breaks)
    outcome = state.outcome()
    assert outcome.winner == ("home" if state.tennis.sets[0] == 2 else "away")
    assert outcome.home + outcome.away == sum(h + a for h, a in state.tennis.set_games)


def test_basketball_scores_in_twos_and_threes_quarter_by_quarter_and_never_ends_level():
    for seed in range(20):
        state = MatchState(event_id=3, sport="basketball", starts_at=1000.0, params=BasketballRates(0.0, 200.0))
        play(state, until=1000.0 + 100, seed=seed)
        baskets = [a for a in state.history if a.step is Step.SCORE]
        assert {a.points for a in baskets} <= {2, 3}
        assert sum(a.points for a in baskets) == state.home + state.away > 120
        assert len(state.periods) == 4
        assert [sum(p[0] for p in state.periods), sum(p[1] for p in state.periods)] == [state.home, state.away]
        assert state.home != state.away
