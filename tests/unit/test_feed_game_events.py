"""The feed tells the predictor game what happens in a match (``topics.game_events``): the
kick-off, every goal with its side, the clock's minutes, half time and full time, in order."""

from __future__ import annotations

import random
from collections import defaultdict

from odds.feed.lifecycle import MatchState, Step, lifecycle_step
from odds.feed.services.feed import FeedRunner
from reducers.schemas import GameEvent, MatchStateUpdate

SPEED = 600.0
STARTS_AT = 1_000.0


class Told(FeedRunner):
    """The feed's match publishing and game telling alone, keeping what it would produce."""

    def __init__(self) -> None:
        self.speed = SPEED
        self.match_seq = {}
        self.match_phase = {}
        self.match_elapsed = {}
        self.match_incidents = defaultdict(list)
        self.game_seq = {}
        self.game_minute = {}
        self.card_rng = random.Random(2)
        self.next_card = {}
        self.game_events: list[GameEvent] = []

    def produce_match(self, state: MatchStateUpdate) -> None:
        pass

    def produce_game(self, event: GameEvent) -> None:
        self.game_events.append(event)


def test_a_football_match_is_told_to_the_game_from_kick_off_to_full_time():
    feed = Told()
    match = MatchState(event_id=7, sport="football", starts_at=STARTS_AT)
    rng = random.Random(5)
    goals = []
    now = STARTS_AT
    while match.status != "finished":
        now += 60.0 / SPEED  # a look every match minute
        actions = lifecycle_step(match, now=now, speed=SPEED, rng=rng)
        goals += [a.side for a in actions if a.step is Step.SCORE]
        booked = feed._booking(match, now=now)
        feed._match_publish(match, actions=actions, now=now, forced=booked)
        feed._game_tell(match, actions, now=now)
    kinds = [e.kind for e in feed.game_events]
    assert kinds[0] == "kick_off"
    assert kinds[-1] == "full_time"
    assert kinds.count("half_time") == 1
    assert [e.side for e in feed.game_events if e.kind == "score"] == goals
    minutes = [e.minute for e in feed.game_events if e.kind == "minute"]
    assert minutes == sorted(set(minutes))
    assert minutes[-1] >= 90
    seqs = [e.seq for e in feed.game_events]
    assert seqs == sorted(set(seqs))
