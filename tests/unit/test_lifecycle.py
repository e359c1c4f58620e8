import random

from odds.feed.lifecycle import RULES, MatchState, Step, lifecycle_step, shock_for

SPEED = 60.0  # a football match lasts 95 s of wall clock


def steps(state: MatchState, *, until: float, every: float = 0.5, seed: int = 1) -> list[Step]:
    rng = random.Random(seed)
    seen = []
    t = state.starts_at - 1
    while t <= until:
        seen += [a.step for a in lifecycle_step(state, now=t, speed=SPEED, rng=rng)]
        t += every
    return seen


def test_nothing_happens_before_kick_off():
    state = MatchState(event_id=1, sport="football", starts_at=1000.0)
    assert lifecycle_step(state, now=999.0, speed=SPEED, rng=random.Random(1)) == []


def test_kick_off_suspends_then_reopens_in_play():
    state = MatchState(event_id=1, sport="football", starts_at=1000.0)
    suspend = RULES["football"].suspend_s / SPEED
    assert steps(state, until=1000.0 + suspend + 0.5)[:2] == [Step.KICK_OFF, Step.REOPEN]
    assert state.status == "in_play"


def test_every_score_is_followed_by_a_reopen():
    state = MatchState(event_id=1, sport="football", starts_at=1000.0)
    seen = steps(state, until=1000.0 + 90, seed=4)
    scores = [i for i, s in enumerate(seen) if s is Step.SCORE]
    assert scores, "a match of 2.7 expected goals scored at least once with this seed"
    assert all(seen[i + 1] is Step.REOPEN for i in scores if i + 1 < len(seen))


def test_scores_add_up_to_the_final_score():
    state = MatchState(event_id=1, sport="basketball", starts_at=1000.0)
    steps(state, until=1000.0 + 100, seed=3)
    scored = sum(a.points for a in state.history if a.step is Step.SCORE)
    assert scored == state.home + state.away > 0


def test_full_time_ends_the_match_once():
    state = MatchState(event_id=1, sport="football", starts_at=1000.0)
    seen = steps(state, until=1000.0 + 200)
    assert seen.count(Step.FULL_TIME) == 1
    assert seen[-1] is Step.FULL_TIME
    assert state.status == "finished"


def test_a_match_picked_up_in_play_keeps_its_score_and_scores_on():
    state = MatchState(event_id=1, sport="football", starts_at=1000.0, status="in_play", home=1, away=1)
    seen = steps(state, until=1000.0 + 200, seed=4)
    assert Step.KICK_OFF not in seen
    assert state.home + state.away >= 2


def test_a_goal_shortens_the_scoring_side_in_the_match_result():
    assert shock_for(kind="match_result", side="away", selections=3, size=1.0) == [0.0, 0.0, 1.0]


def test_a_goal_shortens_over_in_totals():
    assert shock_for(kind="over_under", side="home", selections=2, size=1.0)[0] > 0
