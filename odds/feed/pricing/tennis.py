"""Tennis, point by point: each player wins a point on their own serve with a fixed chance, points
are independent, and the scoring rules do the rest (Newton & Keller 2005; O'Malley 2008; Barnett &
Clarke 2005 for the serving chances from players' statistics).

From those two chances the chance of holding a game from any point score follows (deuce as a
closed form: from deuce the server wins p²/(p² + q²)), a tie-break's from its point score and
serving order (each player serves one of every two points from six-all, so from a level score
past that the leader is decided by pairs), a set's and the match's from the games and sets,
with the serve alternating game by game across sets. The model answers the distribution of
(match winner, games won by each side), which prices the match winner and the total games; a
break of serve moves both at once.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace
from functools import lru_cache

from reducers.market_kinds import Outcome, Side

# A point on one's own serve: about 0.64 for men and 0.56 for women at tour level (Barnett &
# Clarke 2005 give the calculation from match statistics).
DEFAULT_SERVE = 0.62
MIN_SERVE = 0.35
MAX_SERVE = 0.85
SETS_TO_WIN = 2  # best of three


@dataclass(frozen=True)
class ServeChances:
    """The chance each player wins a point on their own serve."""

    home: float = DEFAULT_SERVE
    away: float = DEFAULT_SERVE

    def clamped(self) -> ServeChances:
        return ServeChances(min(MAX_SERVE, max(MIN_SERVE, self.home)), min(MAX_SERVE, max(MIN_SERVE, self.away)))


def other(side: Side) -> Side:
    return "away" if side == "home" else "home"


@dataclass(frozen=True)
class TennisLive:
    """Where a tennis match stands. ``points`` are the current game's points won (a tie-break's
    when ``games`` is six-all), ``server`` serves the next point, ``set_games`` are the finished
    sets' games."""

    sets: tuple[int, int] = (0, 0)
    games: tuple[int, int] = (0, 0)
    points: tuple[int, int] = (0, 0)
    server: Side = "home"
    set_games: tuple[tuple[int, int], ...] = field(default_factory=tuple)

    @property
    def in_tiebreak(self) -> bool:
        return self.games == (6, 6)


def game_chance(p: float, won: int = 0, lost: int = 0) -> float:
    """The server's chance of winning a game from ``won``-``lost`` points, winning each point
    with chance ``p``."""
    return _game(round(p, 12), won, lost)


@lru_cache(maxsize=4096)
def _game(p: float, won: int, lost: int) -> float:
    q = 1 - p
    if won >= 4 and won - lost >= 2:
        return 1.0
    if lost >= 4 and lost - won >= 2:
        return 0.0
    if won >= 3 and lost >= 3:
        deuce = p * p / (p * p + q * q)
        if won == lost:
            return deuce
        return p + q * deuce if won > lost else p * deuce
    return p * _game(p, won + 1, lost) + q * _game(p, won, lost + 1)


def tiebreak_server(first: Side, points_played: int) -> Side:
    """Who serves point ``points_played`` + 1 of a tie-break that ``first`` opened: one point,
    then two each."""
    return first if ((points_played + 1) // 2) % 2 == 0 else other(first)


def tiebreak_chance(chances: ServeChances, *, home: int, away: int, first: Side) -> float:
    """The home player's chance of winning a tie-break from ``home``-``away`` points."""
    return _tiebreak(round(chances.home, 12), round(chances.away, 12), home, away, first)


@lru_cache(maxsize=8192)
def _tiebreak(p_home: float, p_away: float, home: int, away: int, first: Side) -> float:
    if home >= 7 and home - away >= 2:
        return 1.0
    if away >= 7 and away - home >= 2:
        return 0.0
    if home >= 6 and away >= 6 and home == away:
        # From a level score past five-all each player serves one point of every pair.
        both = p_home * (1 - p_away)
        neither = (1 - p_home) * p_away
        return both / (both + neither)
    server = tiebreak_server(first, home + away)
    win = p_home if server == "home" else 1 - p_away
    return win * _tiebreak(p_home, p_away, home + 1, away, first) + (1 - win) * _tiebreak(
        p_home, p_away, home, away + 1, first
    )


def tiebreak_first_server(*, server: Side, points_played: int) -> Side:
    """Who opened a tie-break in which ``server`` serves after ``points_played`` points."""
    return server if tiebreak_server(server, points_played) == server else other(server)


SetResult = tuple[Side, int, int]  # winner, home games, away games at the set's end


def _set_over(home: int, away: int) -> Side | None:
    if home == 7 or (home >= 6 and home - away >= 2):
        return "home"
    if away == 7 or (away >= 6 and away - home >= 2):
        return "away"
    return None


@lru_cache(maxsize=4096)
def _set_from(p_home: float, p_away: float, home: int, away: int, server: Side) -> tuple[tuple[SetResult, float], ...]:
    """How a set ends from ``home``-``away`` games with ``server`` to serve the next game."""
    winner = _set_over(home, away)
    if winner is not None:
        return (((winner, home, away), 1.0),)
    chances = ServeChances(p_home, p_away)
    if (home, away) == (6, 6):
        won = tiebreak_chance(chances, home=0, away=0, first=server)
        return ((("home", 7, 6), won), (("away", 6, 7), 1 - won))
    hold = game_chance(p_home if server == "home" else p_away)
    home_wins = hold if server == "home" else 1 - hold
    out: dict[SetResult, float] = defaultdict(float)
    for result, p in _set_from(p_home, p_away, home + 1, away, other(server)):
        out[result] += home_wins * p
    for result, p in _set_from(p_home, p_away, home, away + 1, other(server)):
        out[result] += (1 - home_wins) * p
    return tuple(out.items())


def _after_set(server: Side, games_in_set: int) -> Side:
    """Who serves the first game of the next set: the serve alternates game by game."""
    return server if games_in_set % 2 == 0 else other(server)


@lru_cache(maxsize=1024)
def _match_from(p_home: float, p_away: float, sets_home: int, sets_away: int, server: Side) -> tuple:
    """How the match ends from the start of a set: {(winner, home games, away games): p} as a tuple."""
    if sets_home == SETS_TO_WIN:
        return ((("home", 0, 0), 1.0),)
    if sets_away == SETS_TO_WIN:
        return ((("away", 0, 0), 1.0),)
    out: dict[tuple[Side, int, int], float] = defaultdict(float)
    for (winner, home, away), p in _set_from(p_home, p_away, 0, 0, server):
        next_server = _after_set(server, home + away)
        sets = (sets_home + (winner == "home"), sets_away + (winner == "away"))
        for (match_winner, more_home, more_away), q in _match_from(p_home, p_away, *sets, next_server):
            out[(match_winner, home + more_home, away + more_away)] += p * q
    return tuple(out.items())


def final_results(*, chances: ServeChances, live: TennisLive) -> list[tuple[Outcome, float]]:
    """The distribution of (match winner, games each side won in the whole match) from where
    the match stands."""
    chances = chances.clamped()
    p_home, p_away = round(chances.home, 12), round(chances.away, 12)
    done_home = sum(h for h, _ in live.set_games)
    done_away = sum(a for _, a in live.set_games)
    if SETS_TO_WIN in live.sets:
        winner: Side = "home" if live.sets[0] == SETS_TO_WIN else "away"
        return [(Outcome(done_home, done_away, winner), 1.0)]
    # The game under way, then the rest of its set, then the sets after it.
    games_h, games_a = live.games
    if live.in_tiebreak:
        first = tiebreak_first_server(server=live.server, points_played=sum(live.points))
        won = tiebreak_chance(chances, home=live.points[0], away=live.points[1], first=first)
        set_ends: list[tuple[SetResult, float, Side]] = [
            (("home", 7, 6), won, other(first)),
            (("away", 6, 7), 1 - won, other(first)),
        ]
    else:
        serve = p_home if live.server == "home" else p_away
        points = live.points if live.server == "home" else (live.points[1], live.points[0])
        hold = game_chance(serve, *points)
        home_wins = hold if live.server == "home" else 1 - hold
        set_ends = []
        for gained, p in ((0, home_wins), (1, 1 - home_wins)):
            home, away = games_h + (gained == 0), games_a + (gained == 1)
            for (winner, fh, fa), q in _set_from(p_home, p_away, home, away, other(live.server)):
                # The first game of the next set: the serve alternates across the set's end.
                games_left = (fh + fa) - (home + away)
                set_ends.append(((winner, fh, fa), p * q, _after_set(other(live.server), games_left)))
    out: dict[tuple[Side, int, int], float] = defaultdict(float)
    for (winner, fh, fa), p, next_server in set_ends:
        sets = (live.sets[0] + (winner == "home"), live.sets[1] + (winner == "away"))
        for (match_winner, more_home, more_away), q in _match_from(p_home, p_away, *sets, next_server):
            out[(match_winner, done_home + fh + more_home, done_away + fa + more_away)] += p * q
    return [(Outcome(home, away, winner), p) for (winner, home, away), p in out.items()]


def match_chance(*, chances: ServeChances, live: TennisLive) -> float:
    """The home player's chance of winning the match."""
    return sum(p for outcome, p in final_results(chances=chances, live=live) if outcome.winner == "home")


def chances_from_book(*, home: float, serve: float = DEFAULT_SERVE) -> ServeChances:
    """Serving chances that price the match as the book does (the home player's fair chance of
    winning ``home``), around an average point on serve of ``serve``."""
    low, high = -0.3, 0.3
    for _ in range(50):
        mid = (low + high) / 2
        if match_chance(chances=ServeChances(serve + mid / 2, serve - mid / 2).clamped(), live=TennisLive()) > home:
            high = mid
        else:
            low = mid
    edge = (low + high) / 2
    return ServeChances(serve + edge / 2, serve - edge / 2).clamped()


@dataclass(frozen=True)
class PointPlayed:
    """A point's effect on the score: the score after it, and the game and set it won, if any."""

    live: TennisLive
    game: Side | None = None
    set: Side | None = None
    broke: bool = False  # the game was won against the serve

    @property
    def match_over(self) -> bool:
        return SETS_TO_WIN in self.live.sets


def point_played(live: TennisLive, winner: Side) -> PointPlayed:
    """The score after ``winner`` wins the next point, by the rules: four points and two clear
    win a game (seven and two clear in a tie-break at six-all), six games and two clear or seven
    win a set; the serve changes every game, in a tie-break after its first point and then every
    two, and whoever opened a tie-break receives first in the next set."""
    i = 0 if winner == "home" else 1
    points = [*live.points]
    points[i] += 1
    target = 7 if live.in_tiebreak else 4
    if not (points[i] >= target and points[i] - points[1 - i] >= 2):
        server = live.server
        if live.in_tiebreak and sum(points) % 2 == 1:
            server = other(server)
        return PointPlayed(replace(live, points=(points[0], points[1]), server=server))
    broke = winner != live.server and not live.in_tiebreak
    if live.in_tiebreak:
        next_server = other(tiebreak_first_server(server=live.server, points_played=sum(live.points)))
    else:
        next_server = other(live.server)
    games = [*live.games]
    games[i] += 1
    if _set_over(games[0], games[1]) is None:
        return PointPlayed(
            replace(live, games=(games[0], games[1]), points=(0, 0), server=next_server), game=winner, broke=broke
        )
    sets = [*live.sets]
    sets[i] += 1
    after = TennisLive(
        sets=(sets[0], sets[1]),
        games=(0, 0),
        points=(0, 0),
        server=next_server,
        set_games=(*live.set_games, (games[0], games[1])),
    )
    return PointPlayed(after, game=winner, set=winner, broke=broke)


def games_won(live: TennisLive) -> tuple[int, int]:
    """Games each side has won in the whole match (finished sets and the current one)."""
    return (
        sum(h for h, _ in live.set_games) + live.games[0],
        sum(a for _, a in live.set_games) + live.games[1],
    )
