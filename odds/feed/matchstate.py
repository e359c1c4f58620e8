"""Each sport's match state in its own terms, derived from the simulated match.

Football plays two halves of 45 minutes with added time and a half-time break, the clock
counting up; basketball plays four 12-minute quarters with breaks, the clock counting down;
tennis plays sets of games (first to six, clear by two, a tie-break game at 6-6) with no clock.
The simulator's scoring events are goals, baskets and games won respectively.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reducers.schemas import Incident, MatchClock, MatchStateUpdate

MAX_INCIDENTS_KEPT = 32


@dataclass(frozen=True)
class Phase:
    period: int
    start_s: int  # match seconds since kick-off
    length_s: int
    playing: bool  # False for a break: the clock stands still
    clock_from_s: int  # what the clock shows when the phase starts (football's 45:00 for the second half)


def _timeline(*phases: tuple[int, int, bool, int]) -> tuple[Phase, ...]:
    out = []
    start = 0
    for period, length, playing, clock_from in phases:
        out.append(Phase(period, start, length, playing, clock_from))
        start += length
    return tuple(out)


# Football: 45 min + 1 added, a 3-minute break, 45 min + 1 added = the simulator's 95 minutes.
FOOTBALL = _timeline((1, 46 * 60, True, 0), (1, 3 * 60, False, 45 * 60), (2, 46 * 60, True, 45 * 60))
FOOTBALL_HALF_S = 45 * 60
# Basketball: four 12-minute quarters and 2-minute breaks between them = 54 minutes.
BASKETBALL_QUARTER_S = 12 * 60
BASKETBALL = _timeline(
    (1, 12 * 60, True, 0),
    (1, 2 * 60, False, 12 * 60),
    (2, 12 * 60, True, 0),
    (2, 2 * 60, False, 12 * 60),
    (3, 12 * 60, True, 0),
    (3, 2 * 60, False, 12 * 60),
    (4, 12 * 60, True, 0),
)
TIMELINES = {"football": FOOTBALL, "basketball": BASKETBALL}


def phase_at(*, sport: str, elapsed_s: float) -> Phase | None:
    """The phase of a clocked sport ``elapsed_s`` match seconds after the start; ``None`` for tennis."""
    timeline = TIMELINES.get(sport)
    if timeline is None:
        return None
    for phase in timeline:
        if elapsed_s < phase.start_s + phase.length_s:
            return phase
    return timeline[-1]


def breaks_passed(*, sport: str, from_s: float, to_s: float) -> list[Phase]:
    """The breaks that start after ``from_s`` and are over by ``to_s`` (match seconds): what a
    publisher that looked at ``from_s`` and then only at ``to_s`` would otherwise never show."""
    timeline = TIMELINES.get(sport, ())
    return [p for p in timeline if not p.playing and from_s < p.start_s and p.start_s + p.length_s <= to_s]


def in_break(*, sport: str, elapsed_s: float) -> bool:
    """Whether play stops at this moment (half time, between quarters): nobody scores then."""
    phase = phase_at(sport=sport, elapsed_s=elapsed_s)
    return phase is not None and not phase.playing


def break_end_s(*, sport: str, elapsed_s: float) -> float:
    """When the break under way at ``elapsed_s`` ends (match seconds); ``elapsed_s`` outside a break."""
    phase = phase_at(sport=sport, elapsed_s=elapsed_s)
    if phase is None or phase.playing:
        return elapsed_s
    return float(phase.start_s + phase.length_s)


def match_clock(*, sport: str, elapsed_s: float, at_ms: int, rate: int, finished: bool = False) -> MatchClock | None:
    """The clock ``elapsed_s`` match seconds after the start, as seen at ``at_ms``; tennis has none."""
    phase = phase_at(sport=sport, elapsed_s=elapsed_s)
    if phase is None:
        return None
    within = int(min(max(0.0, elapsed_s - phase.start_s), phase.length_s))
    running = phase.playing and not finished
    if sport == "basketball":
        shown = within if phase.playing else BASKETBALL_QUARTER_S
        return MatchClock(
            running=running,
            elapsed_s=min(shown, BASKETBALL_QUARTER_S),
            at=at_ms,
            direction="down",
            limit_s=BASKETBALL_QUARTER_S,
            rate=rate,
        )
    shown = phase.clock_from_s + (within if phase.playing else 0)
    return MatchClock(running=running, elapsed_s=shown, at=at_ms, direction="up", limit_s=None, rate=rate)


def tennis_score(games_won: list[str]) -> dict[str, Any]:
    """Sets and games from the sides that won each game in order (the simulator scores games)."""
    sets, games, set_games = _tennis_count(games_won)
    return {"sets": sets, "games": games, "points": ["0", "0"], "set_games": set_games}


def _tennis_count(games_won: list[str]) -> tuple[list[int], list[int], list[list[int]]]:
    sets = [0, 0]
    games = [0, 0]
    set_games: list[list[int]] = []
    for side in games_won:
        games[0 if side == "home" else 1] += 1
        high, low = max(games), min(games)
        if (high >= 6 and high - low >= 2) or high == 7:
            sets[0 if games[0] > games[1] else 1] += 1
            set_games.append(list(games))
            games = [0, 0]
    return sets, games, set_games


def match_state_build(
    *,
    event_id: int,
    seq: int,
    sport: str,
    status: str,
    elapsed_s: float,
    home: int,
    away: int,
    games_won: list[str],
    incidents: list[Incident],
    now_ms: int,
    rate: int,
) -> MatchStateUpdate:
    """One event's match state as the feed publishes it. ``status`` is the simulator's
    (scheduled, in_play, finished); a clocked sport in a break is published as ``break``."""
    finished = status == "finished"
    clock = (
        None
        if status == "scheduled"
        else match_clock(sport=sport, elapsed_s=elapsed_s, at_ms=now_ms, rate=rate, finished=finished)
    )
    phase = phase_at(sport=sport, elapsed_s=elapsed_s)
    published = "break" if status == "in_play" and phase is not None and not phase.playing else status
    if sport == "tennis":
        score = tennis_score(games_won)
        period = 0 if status == "scheduled" else min(5, sum(score["sets"]) + (0 if finished else 1))
    else:
        score = {"home": home, "away": away}
        period = 0 if status == "scheduled" or phase is None else phase.period
    return MatchStateUpdate(
        event_id=event_id,
        seq=seq,
        sport=sport,
        status=published,
        period=period,
        score=score,
        clock=clock,
        incidents=tuple(reversed(incidents[-MAX_INCIDENTS_KEPT:])),
        event_ts=now_ms,
        produce_ts=now_ms,
    )
