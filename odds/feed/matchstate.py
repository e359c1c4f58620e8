"""Each sport's match state in its own terms, derived from the simulated match.

Football plays two halves of 45 minutes with added time and a half-time break, the clock
counting up; basketball plays four 12-minute quarters with breaks, the clock counting down;
tennis plays points, games and sets (first to six games, clear by two, a tie-break at 6-6) with
no clock. ``played_s`` and ``elapsed_for_played`` convert between match time (breaks included)
and playing time, which the pricing models count in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from odds.feed.pricing.tennis import TennisLive
from reducers.schemas import Incident, MatchClock, MatchStateUpdate, MatchSuspension

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


def playing_s(sport: str) -> int:
    """A clocked sport's playing time (breaks left out), in match seconds; 0 for tennis."""
    return sum(p.length_s for p in TIMELINES.get(sport, ()) if p.playing)


def played_s(*, sport: str, elapsed_s: float) -> float:
    """Playing seconds gone ``elapsed_s`` match seconds after the start (breaks left out)."""
    played = 0.0
    for phase in TIMELINES.get(sport, ()):
        if phase.playing:
            played += min(max(0.0, elapsed_s - phase.start_s), phase.length_s)
    return played


def elapsed_for_played(*, sport: str, played: float) -> float:
    """The match seconds after the start at which ``played`` playing seconds are gone (the
    inverse of ``played_s``; a moment in a break maps to the break's end)."""
    left = played
    for phase in TIMELINES.get(sport, ()):
        if not phase.playing:
            continue
        if left <= phase.length_s:
            return phase.start_s + left
        left -= phase.length_s
    timeline = TIMELINES.get(sport, ())
    end = timeline[-1].start_s + timeline[-1].length_s if timeline else 0
    return end + left


def remaining_share(*, sport: str, elapsed_s: float) -> float:
    """The share of a clocked sport's playing time still to come (1 at the start, 0 at the end)."""
    total = playing_s(sport)
    return 1.0 if total == 0 else max(0.0, 1.0 - played_s(sport=sport, elapsed_s=elapsed_s) / total)


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


POINT_NAMES = ("0", "15", "30", "40")


def tennis_points(live: TennisLive) -> list[str]:
    """The current game's points as the scoreboard calls them (a tie-break's as counts)."""
    home, away = live.points
    if live.in_tiebreak:
        return [str(home), str(away)]
    if home >= 3 and away >= 3:
        return ["40", "40"] if home == away else ["AD", "40"] if home > away else ["40", "AD"]
    return [POINT_NAMES[min(home, 3)], POINT_NAMES[min(away, 3)]]


def tennis_score(live: TennisLive) -> dict[str, Any]:
    """A tennis match's score as the match state carries it."""
    return {
        "sets": list(live.sets),
        "games": list(live.games),
        "points": tennis_points(live),
        "set_games": [list(games) for games in live.set_games],
        "server": live.server,
    }


def match_state_build(
    *,
    event_id: int,
    seq: int,
    sport: str,
    status: str,
    elapsed_s: float,
    home: int,
    away: int,
    incidents: list[Incident],
    now_ms: int,
    rate: int,
    tennis: TennisLive | None = None,
    periods: list[list[int]] | None = None,
    suspension: MatchSuspension | None = None,
) -> MatchStateUpdate:
    """One event's match state as the feed publishes it. ``status`` is the simulator's
    (scheduled, in_play, finished); a clocked sport in a break is published as ``break``.
    ``periods`` are each half's or quarter's score so far; ``suspension`` why the feed holds
    the event's markets suspended now."""
    finished = status == "finished"
    clock = (
        None
        if status == "scheduled"
        else match_clock(sport=sport, elapsed_s=elapsed_s, at_ms=now_ms, rate=rate, finished=finished)
    )
    phase = phase_at(sport=sport, elapsed_s=elapsed_s)
    published = "break" if status == "in_play" and phase is not None and not phase.playing else status
    score: dict[str, Any]
    if sport == "tennis":
        live = tennis or TennisLive()
        score = tennis_score(live)
        played_sets = len(live.set_games)
        period = 0 if status == "scheduled" else min(5, played_sets + (0 if finished else 1))
    else:
        score = {"home": home, "away": away}
        if periods:
            score["periods"] = [list(p) for p in periods]
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
        suspension=suspension if status == "in_play" else None,
    )


def _point_count(text: str) -> int:
    if text == "AD":
        return 4
    if text in POINT_NAMES:
        return POINT_NAMES.index(text)
    return int(text) if text.isdigit() else 0


def tennis_from_score(score: dict[str, Any]) -> TennisLive:
    """A tennis match as its match state's score tells it (what a restarted feed resumes from).
    Missing parts read as their start: no games, no points, the home player serving."""

    def pair(name: str) -> tuple[int, int]:
        raw = score.get(name) or [0, 0]
        return int(raw[0]), int(raw[1])

    games = pair("games")
    points = score.get("points") or ["0", "0"]
    home, away = _point_count(str(points[0])), _point_count(str(points[1]))
    if games != (6, 6) and home >= 3 and away >= 3:
        # Deuce and advantage: the count past 40 only matters relative to the other's.
        home, away = (3, 3) if home == away else (4, 3) if home > away else (3, 4)
    server = score.get("server")
    return TennisLive(
        sets=pair("sets"),
        games=games,
        points=(home, away),
        server="away" if server == "away" else "home",
        set_games=tuple((int(h), int(a)) for h, a in score.get("set_games") or []),
    )
