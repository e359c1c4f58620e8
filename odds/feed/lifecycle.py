"""Match lifecycle for the feed simulator, as pure functions over plain data.

A match kicks off at its start time (its markets suspend, then reopen in-play), scores at random
moments (each score suspends the markets and moves the book sharply, then they reopen), and ends
at full time (markets close and are resulted from the final score). Time runs ``speed`` times
faster inside a match than on the wall clock, so tests and demos can play a match in seconds.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from decimal import Decimal
from enum import StrEnum

from odds.feed.matchstate import break_end_s, in_break


class Step(StrEnum):
    KICK_OFF = "kick_off"
    REOPEN = "reopen"
    SCORE = "score"
    FULL_TIME = "full_time"


@dataclass(frozen=True)
class SportRules:
    duration_s: float  # match length in match seconds (stoppages included)
    scores_per_match: float  # expected scoring events (goals, games, scoring runs)
    points: tuple[int, int]  # points per scoring event, inclusive range
    suspend_s: float  # match seconds the markets stay suspended after kick-off or a score
    shock: float  # log-odds move of the scoring side's selection
    clock_unit_s: float  # the clock shows match time in these units (60: minutes)


RULES: dict[str, SportRules] = {
    "football": SportRules(
        duration_s=95 * 60, scores_per_match=2.7, points=(1, 1), suspend_s=45, shock=1.2, clock_unit_s=60
    ),
    "tennis": SportRules(
        duration_s=100 * 60, scores_per_match=22, points=(1, 1), suspend_s=20, shock=0.15, clock_unit_s=60
    ),
    "basketball": SportRules(
        duration_s=54 * 60, scores_per_match=20, points=(6, 14), suspend_s=20, shock=0.25, clock_unit_s=60
    ),
}


@dataclass(frozen=True)
class Action:
    step: Step
    event_id: int
    side: str = ""  # "home" or "away" for a score
    points: int = 0


@dataclass
class MatchState:
    """One event as the simulator tracks it. Times are wall-clock epoch seconds."""

    event_id: int
    sport: str
    starts_at: float
    status: str = "scheduled"  # scheduled, in_play, finished
    home: int = 0
    away: int = 0
    suspended_until: float | None = None
    next_score_at: float | None = None
    home_strength: float = 0.5  # probability that a score is the home side's
    history: list[Action] = field(default_factory=list)

    def rules(self) -> SportRules:
        return RULES.get(self.sport, RULES["football"])

    def ends_at(self, speed: float) -> float:
        return self.starts_at + self.rules().duration_s / speed

    def clock(self, *, now: float, speed: float) -> str:
        if self.status == "finished":
            return "FT"
        if self.status != "in_play":
            return ""
        elapsed = max(0.0, (now - self.starts_at) * speed)
        return f"{int(elapsed // self.rules().clock_unit_s)}'"


def _next_score(state: MatchState, *, now: float, speed: float, rng: random.Random) -> float:
    rules = state.rules()
    rate_per_wall_s = rules.scores_per_match / rules.duration_s * speed
    return now + rng.expovariate(rate_per_wall_s)


def lifecycle_step(state: MatchState, *, now: float, speed: float, rng: random.Random) -> list[Action]:
    """Advance one match to ``now``; return what happened, in order. Mutates ``state``."""
    actions: list[Action] = []
    rules = state.rules()
    if state.status == "finished":
        return actions
    if state.status == "scheduled":
        if now < state.starts_at:
            return actions
        state.status = "in_play"
        state.suspended_until = now + rules.suspend_s / speed
        state.next_score_at = _next_score(state, now=state.suspended_until, speed=speed, rng=rng)
        actions.append(Action(Step.KICK_OFF, state.event_id))
    elif state.next_score_at is None:
        # Picked up in play (the simulator restarted): the scores so far are already on the board.
        state.next_score_at = _next_score(state, now=now, speed=speed, rng=rng)
    if now >= state.ends_at(speed):
        state.status = "finished"
        state.suspended_until = None
        actions.append(Action(Step.FULL_TIME, state.event_id))
        state.history.extend(actions)
        return actions
    if state.suspended_until is not None:
        if now < state.suspended_until:
            state.history.extend(actions)
            return actions
        state.suspended_until = None
        actions.append(Action(Step.REOPEN, state.event_id))
    if state.next_score_at is not None and now >= state.next_score_at:
        elapsed = (now - state.starts_at) * speed
        if in_break(sport=state.sport, elapsed_s=elapsed):
            # Nobody scores at half time or between quarters: the score waits for play to resume.
            state.next_score_at = state.starts_at + break_end_s(sport=state.sport, elapsed_s=elapsed) / speed
            state.history.extend(actions)
            return actions
        side = "home" if rng.random() < state.home_strength else "away"
        points = rng.randint(*rules.points)
        if side == "home":
            state.home += points
        else:
            state.away += points
        state.suspended_until = now + rules.suspend_s / speed
        state.next_score_at = _next_score(state, now=state.suspended_until, speed=speed, rng=rng)
        actions.append(Action(Step.SCORE, state.event_id, side=side, points=points))
    state.history.extend(actions)
    return actions


# Bookings in a football match: about this many in 95 minutes.
CARDS_PER_MATCH = 3.5


def card_next_at(*, now: float, speed: float, rng: random.Random) -> float:
    """When the next booking of a football match falls (wall-clock epoch seconds)."""
    rules = RULES["football"]
    return now + rng.expovariate(CARDS_PER_MATCH / rules.duration_s * speed)


def shock_for(*, kind: str, side: str, selections: int, size: float) -> list[float]:
    """How a score by ``side`` moves each selection of a market (log-odds, positive = shorter).

    The scoring side shortens in result and handicap markets, "Over" shortens in totals, "Yes"
    shortens in both-teams-to-score. Unknown kinds do not move.
    """
    moves = [0.0] * selections
    if kind in ("match_result", "match_winner", "handicap"):
        index = 0 if side == "home" else selections - 1
        moves[index] = size
    elif kind == "over_under":
        moves[0] = size / 2
    elif kind == "btts":
        moves[0] = size / 3
    return moves


def market_winners(
    *, kind: str, line: Decimal | None, selections: int, home: int, away: int, tie_break: int = 0
) -> list[int] | None:
    """Indexes of the winning selections (in display order) from a final score; ``None`` voids.

    Selection order is the catalogue's: 1X2 = home, draw, away; over/under = over, under;
    both teams to score = yes, no; handicap = home, away (home's line); match winner = home,
    away, where a level score is decided by ``tie_break`` (extra time, a deciding set).
    """
    if kind == "match_result" and selections == 3:
        return [0 if home > away else 2 if away > home else 1]
    if kind == "match_winner" and selections == 2:
        return [0 if home > away else 1 if away > home else tie_break]
    if kind == "btts" and selections == 2:
        return [0 if home > 0 and away > 0 else 1]
    if line is None:
        return None
    if kind == "over_under" and selections == 2:
        total = Decimal(home + away)
        return None if total == line else [0 if total > line else 1]
    if kind == "handicap" and selections == 2:
        adjusted = Decimal(home) + line
        return None if adjusted == away else [0 if adjusted > away else 1]
    return None
