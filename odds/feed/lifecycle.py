"""Match lifecycle for the feed simulator, as pure functions over plain data.

A match kicks off at its start time (its markets suspend briefly, then reopen in play) and is
played by its sport's own process, with the same parameters its prices come from
(``odds.feed.pricing``), so the simulated play and the book agree:

- football: goals as two Poisson processes over the playing time, red cards (a side down to ten
  scores less, its opponent more), a VAR check after some goals;
- tennis: point by point, the server winning each with their chance on serve;
- basketball: possessions in turn, each scoring 0, 2 or 3 points at the side's efficiency.

An incident that moves the book (a goal, a red card, a VAR check, a break of serve, the
kick-off) suspends the event's markets for a few match seconds with its reason; they reopen by
themselves. Time runs ``speed`` times faster inside a match than on the wall clock, so tests
and demos can play a match in seconds. ``lifecycle_step`` plays everything due up to ``now``.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from enum import StrEnum

from odds.feed.matchstate import elapsed_for_played, in_break, played_s, playing_s, remaining_share
from odds.feed.pricing import Live, Params, default_params
from odds.feed.pricing.basketball import BasketballLive, BasketballRates, overtime_home_chance
from odds.feed.pricing.football import RED_CARD_OTHER, RED_CARD_OWN, FootballLive, FootballRates
from odds.feed.pricing.tennis import ServeChances, TennisLive, games_won, point_played
from reducers.market_kinds import Outcome, Side
from reducers.suspensions import Reason


class Step(StrEnum):
    KICK_OFF = "kick_off"
    REOPEN = "reopen"
    SCORE = "score"  # a goal or a basket
    POINT = "point"  # a tennis point
    CARD = "card"  # a red card
    FULL_TIME = "full_time"


@dataclass(frozen=True)
class SportRules:
    """How a sport's simulation runs, in match seconds."""

    suspend_s: dict[Reason, float]  # how long each kind of incident holds the markets
    red_cards_per_match: float = 0.0  # both sides together (football)
    var_share: float = 0.0  # goals checked by VAR (football)
    point_s: float = 0.0  # a tennis point, serve to serve
    possessions: int = 0  # each side's possessions in a basketball game


RULES: dict[str, SportRules] = {
    "football": SportRules(
        suspend_s={Reason.KICK_OFF: 30, Reason.GOAL: 45, Reason.VAR: 90, Reason.RED_CARD: 30},
        red_cards_per_match=0.2,
        var_share=0.15,
    ),
    "tennis": SportRules(suspend_s={Reason.KICK_OFF: 20, Reason.BREAK_OF_SERVE: 20}, point_s=38),
    "basketball": SportRules(suspend_s={Reason.KICK_OFF: 20}, possessions=88),
}
# A basketball possession's points when it scores: two most of the time, three otherwise.
THREE_SHARE = 0.28
POINTS_PER_SCORE = 2 * (1 - THREE_SHARE) + 3 * THREE_SHARE


@dataclass(frozen=True)
class Action:
    """Something that happened, at wall-clock epoch seconds ``at``. ``reason`` is the suspension
    it starts, if any; a tennis point names the game and set it won and whether it broke serve."""

    step: Step
    event_id: int
    at: float
    side: str = ""
    points: int = 0
    reason: Reason | None = None
    game: str = ""
    set: str = ""
    broke: bool = False


@dataclass
class MatchState:
    """One event as the simulator tracks it. Times are wall-clock epoch seconds; ``home`` and
    ``away`` are goals, points, or (tennis) sets won; ``params`` are the sport model's."""

    event_id: int
    sport: str
    starts_at: float
    status: str = "scheduled"  # scheduled, in_play, finished
    home: int = 0
    away: int = 0
    params: Params = field(default_factory=FootballRates)
    red_cards: list[int] = field(default_factory=lambda: [0, 0])
    tennis: TennisLive = field(default_factory=TennisLive)
    periods: list[list[int]] = field(default_factory=list)  # each half's or quarter's score
    possession: Side = "home"
    suspended_until: float | None = None
    suspension: Reason | None = None
    suspended_since: float | None = None
    next_at: float | None = None
    history: list[Action] = field(default_factory=list)

    def rules(self) -> SportRules:
        return RULES.get(self.sport, RULES["football"])

    def ends_at(self, speed: float) -> float | None:
        """When a clocked sport's match ends (tennis ends when a player has won it)."""
        total = elapsed_for_played(sport=self.sport, played=playing_s(self.sport))
        return None if self.sport == "tennis" else self.starts_at + total / speed

    def elapsed(self, *, now: float, speed: float) -> float:
        return max(0.0, (now - self.starts_at) * speed)

    def clock(self, *, now: float, speed: float) -> str:
        """The clock in words for the catalogue's event row (pages render the match state)."""
        if self.status == "finished":
            return {"football": "FT", "basketball": "Final", "tennis": "Final"}.get(self.sport, "FT")
        if self.status != "in_play":
            return ""
        if self.sport == "tennis":
            return f"Set {len(self.tennis.set_games) + 1}"
        elapsed = self.elapsed(now=now, speed=speed)
        if self.sport == "basketball":
            quarter = min(4, 1 + int(played_s(sport=self.sport, elapsed_s=elapsed) // (12 * 60)))
            return f"Q{quarter}"
        return f"{int(elapsed // 60)}'"

    def live(self, *, now: float, speed: float) -> Live:
        """Where the match stands, as its pricing model reads it."""
        if self.sport == "tennis":
            return self.tennis
        share = 1.0 if self.status == "scheduled" else 0.0 if self.status == "finished" else None
        if share is None:
            share = remaining_share(sport=self.sport, elapsed_s=self.elapsed(now=now, speed=speed))
        if self.sport == "basketball":
            return BasketballLive(self.home, self.away, share)
        return FootballLive(self.home, self.away, share, self.red_cards[0], self.red_cards[1])

    def outcome(self) -> Outcome:
        """The final result markets are settled on."""
        if self.sport == "tennis":
            home, away = games_won(self.tennis)
            return Outcome(home, away, "home" if self.tennis.sets[0] > self.tennis.sets[1] else "away")
        return Outcome(self.home, self.away)


def params_of(state: MatchState) -> Params:
    """The state's parameters, or the sport's neutral ones when they are of another sport."""
    expected = {"football": FootballRates, "tennis": ServeChances, "basketball": BasketballRates}.get(state.sport)
    return state.params if expected is None or isinstance(state.params, expected) else default_params(state.sport)


def _suspend(state: MatchState, reason: Reason, *, at: float, speed: float) -> None:
    hold = state.rules().suspend_s.get(reason, 0)
    if not hold:
        return
    until = at + hold / speed
    if state.suspended_until is None:
        state.suspended_since = at
    state.suspended_until = max(state.suspended_until or 0.0, until)
    state.suspension = reason


def _side(rng: random.Random, home_share: float) -> Side:
    return "home" if rng.random() < home_share else "away"


def _schedule(state: MatchState, *, from_at: float, speed: float, rng: random.Random) -> None:
    """When the next thing happens after ``from_at``, in wall-clock time."""
    rules = state.rules()
    if state.sport == "tennis":
        state.next_at = from_at + rng.uniform(0.6, 1.4) * rules.point_s / speed
        return
    played = played_s(sport=state.sport, elapsed_s=state.elapsed(now=from_at, speed=speed))
    if state.sport == "basketball":
        step = playing_s("basketball") / (2 * rules.possessions)
        gap = rng.uniform(0.5, 1.5) * step
    else:
        rates = params_of(state)
        assert isinstance(rates, FootballRates)
        home, away = _football_rates(state, rates)
        per_s = (home + away + rules.red_cards_per_match) / playing_s("football")
        gap = rng.expovariate(per_s)
    state.next_at = state.starts_at + elapsed_for_played(sport=state.sport, played=played + gap) / speed


def _football_rates(state: MatchState, rates: FootballRates) -> tuple[float, float]:
    red_home, red_away = state.red_cards
    home = rates.home * RED_CARD_OWN**red_home * RED_CARD_OTHER**red_away
    away = rates.away * RED_CARD_OWN**red_away * RED_CARD_OTHER**red_home
    return home, away


def _period_index(state: MatchState, *, at: float, speed: float) -> int:
    played = played_s(sport=state.sport, elapsed_s=state.elapsed(now=at, speed=speed))
    length = 12 * 60 if state.sport == "basketball" else 46 * 60
    return min(int(played // length), 3 if state.sport == "basketball" else 1)


def _add_points(state: MatchState, side: Side, points: int, *, at: float, speed: float) -> None:
    if side == "home":
        state.home += points
    else:
        state.away += points
    index = _period_index(state, at=at, speed=speed)
    while len(state.periods) <= index:
        state.periods.append([0, 0])
    state.periods[index][0 if side == "home" else 1] += points


def _play(state: MatchState, *, at: float, speed: float, rng: random.Random) -> list[Action]:
    """The incident due at ``at``."""
    rules = state.rules()
    if state.sport == "tennis":
        chances = params_of(state)
        assert isinstance(chances, ServeChances)
        serve = chances.home if state.tennis.server == "home" else chances.away
        server = state.tennis.server
        winner: Side = server if rng.random() < serve else ("away" if server == "home" else "home")
        played = point_played(state.tennis, winner)
        state.tennis = played.live
        state.home, state.away = played.live.sets
        action = Action(
            Step.POINT,
            state.event_id,
            at,
            side=winner,
            game=played.game or "",
            set=played.set or "",
            broke=played.broke,
            reason=Reason.BREAK_OF_SERVE if played.broke else None,
        )
        if action.reason:
            _suspend(state, action.reason, at=at, speed=speed)
        return [action]
    if state.sport == "basketball":
        rates = params_of(state)
        assert isinstance(rates, BasketballRates)
        side = state.possession
        state.possession = "away" if side == "home" else "home"
        expected = (rates.total + (rates.margin if side == "home" else -rates.margin)) / 2
        scores = min(0.9, max(0.05, expected / rules.possessions / POINTS_PER_SCORE))
        if rng.random() >= scores:
            return []
        points = 3 if rng.random() < THREE_SHARE else 2
        _add_points(state, side, points, at=at, speed=speed)
        return [Action(Step.SCORE, state.event_id, at, side=side, points=points)]
    rates = params_of(state)
    assert isinstance(rates, FootballRates)
    home, away = _football_rates(state, rates)
    draw = rng.random() * (home + away + rules.red_cards_per_match)
    if draw >= home + away:
        side = _side(rng, 0.5)
        state.red_cards[0 if side == "home" else 1] += 1
        _suspend(state, Reason.RED_CARD, at=at, speed=speed)
        return [Action(Step.CARD, state.event_id, at, side=side, reason=Reason.RED_CARD)]
    side = "home" if draw < home else "away"
    _add_points(state, side, 1, at=at, speed=speed)
    reason = Reason.VAR if rng.random() < rules.var_share else Reason.GOAL
    _suspend(state, reason, at=at, speed=speed)
    return [Action(Step.SCORE, state.event_id, at, side=side, points=1, reason=reason)]


def _full_time(state: MatchState, *, at: float, speed: float, rng: random.Random) -> list[Action]:
    actions: list[Action] = []
    if state.sport == "basketball" and state.home == state.away:
        # Level at the buzzer: overtime decides it, as the last basket shows.
        rates = params_of(state)
        assert isinstance(rates, BasketballRates)
        side = _side(rng, overtime_home_chance(rates))
        _add_points(state, side, 2, at=at, speed=speed)
        actions.append(Action(Step.SCORE, state.event_id, at, side=side, points=2))
    state.status = "finished"
    state.suspended_until = state.suspension = state.suspended_since = None
    state.next_at = None
    actions.append(Action(Step.FULL_TIME, state.event_id, at))
    return actions


def lifecycle_step(state: MatchState, *, now: float, speed: float, rng: random.Random) -> list[Action]:
    """Advance one match to ``now``, playing everything due by then in order; return what
    happened. Mutates ``state``."""
    actions: list[Action] = []
    if state.status == "finished":
        return actions
    if state.status == "scheduled":
        if now < state.starts_at:
            return actions
        state.status = "in_play"
        at = state.starts_at
        _suspend(state, Reason.KICK_OFF, at=at, speed=speed)
        actions.append(Action(Step.KICK_OFF, state.event_id, at, reason=Reason.KICK_OFF))
        _schedule(state, from_at=at, speed=speed, rng=rng)
    elif state.next_at is None:
        # Picked up in play (the simulator restarted): the score so far is already on the board.
        _schedule(state, from_at=now, speed=speed, rng=rng)
    ends_at = state.ends_at(speed)
    while state.status == "in_play":
        due = [t for t in (state.next_at, ends_at, state.suspended_until) if t is not None]
        at = min(due) if due else math.inf
        if at > now:
            break
        if state.suspended_until is not None and at == state.suspended_until:
            state.suspended_until = state.suspension = state.suspended_since = None
            actions.append(Action(Step.REOPEN, state.event_id, at))
        elif ends_at is not None and at == ends_at:
            actions.extend(_full_time(state, at=at, speed=speed, rng=rng))
        else:
            if in_break(sport=state.sport, elapsed_s=state.elapsed(now=at, speed=speed)):
                # Nobody scores at half time or between quarters: play resumes after the break.
                _schedule(state, from_at=at, speed=speed, rng=rng)
                continue
            played = _play(state, at=at, speed=speed, rng=rng)
            actions.extend(played)
            if state.sport == "tennis" and 2 in state.tennis.sets:
                actions.extend(_full_time(state, at=at, speed=speed, rng=rng))
            else:
                _schedule(state, from_at=at, speed=speed, rng=rng)
    state.history.extend(actions)
    return actions


# Bookings in a football match (the predictor game's card questions): about this many in the
# 95 minutes a match runs, red cards aside.
CARDS_PER_MATCH = 3.5
FOOTBALL_MATCH_S = 95 * 60


def card_next_at(*, now: float, speed: float, rng: random.Random) -> float:
    """When the next booking of a football match falls (wall-clock epoch seconds)."""
    return now + rng.expovariate(CARDS_PER_MATCH / FOOTBALL_MATCH_S * speed)
