"""A match the feed first looks at after its first period was over (a late tick under load, a
fast simulation) is published as it happened: the kick-off with the clock running, then the
break, never a first state that is already at half time."""

from __future__ import annotations

import random
from collections import defaultdict

from odds.feed.lifecycle import MatchState, lifecycle_step
from odds.feed.services.feed import FeedRunner
from reducers.schemas import GameEvent, MatchStateUpdate

SPEED = 4000.0
STARTS_AT = 1_000.0


class Published(FeedRunner):
    """The feed's match-state publishing alone, keeping what it would produce."""

    def __init__(self) -> None:
        self.speed = SPEED
        self.match_seq = {}
        self.match_phase = {}
        self.match_elapsed = {}
        self.match_incidents = defaultdict(list)
        self.game_seq = {}
        self.states: list[dict] = []
        self.game_events: list[GameEvent] = []

    def produce_match(self, state: MatchStateUpdate) -> None:
        self.states.append(state.to_json())

    def produce_game(self, event: GameEvent) -> None:
        self.game_events.append(event)


def first_look(*, match_seconds: float) -> list[dict]:
    feed = Published()
    match = MatchState(event_id=7, sport="football", starts_at=STARTS_AT)
    now = STARTS_AT + match_seconds / SPEED
    actions = lifecycle_step(match, now=now, speed=SPEED, rng=random.Random(1))
    feed._match_publish(match, actions=actions, now=now)
    return feed.states


def test_a_kick_off_seen_during_half_time_is_published_before_the_break():
    states = first_look(match_seconds=2_800)  # half time is under way
    # incidents newest first
    assert [s["incidents"][0]["kind"] for s in states] == ["kick_off", "half_time"]
    assert [s["clock"]["running"] for s in states] == [True, False]
    assert [s["status"] for s in states] == ["in_play", "break"]
    assert states[0]["seq"] < states[1]["seq"]


def test_a_kick_off_seen_in_time_is_one_state_with_the_clock_running():
    states = first_look(match_seconds=40)
    assert len(states) == 1
    assert states[0]["incidents"][-1]["kind"] == "kick_off"
    assert states[0]["clock"]["running"] is True
