"""A match's scoreboard in its sport's own shape, from the match state the reducers hold.

Pure functions, no Django: the server renders a ``Board`` with ``odds/_scoreboard.html`` and the
browser builds the same board from the same match message with ``frontend/src/scoreboard.ts``
(``boardOf``, ``renderMatch``); the cross-language vectors (frontend/tests/vectors) hold them to
one answer. Football shows goals and the minute; basketball points, the quarter and its
countdown, and each quarter's points on an event's page; tennis sets, games and points with the
server marked, and each set's games on an event's page. Each sport says "finished" in its own
word. Without a match state the catalogue's score and status stand in, and no clock is shown
rather than a stale one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from reducers.suspensions import punter_text

Layout = Literal["row", "head"]

FOOTBALL_HALF_S = 45 * 60
FINISHED = {"football": "FT", "basketball": "Final", "tennis": "Finished"}
LIVE_STATUSES = ("in_play", "break")


@dataclass(frozen=True)
class SideRow:
    """One side's line of the board: its name, its cells (in the board's columns), whether it
    serves (tennis) and its red cards (football)."""

    name: str
    cells: tuple[str, ...]
    serving: bool = False
    red_cards: int = 0


@dataclass(frozen=True)
class Board:
    """What a scoreboard shows. ``clock`` is the clock at the moment it was built ("" when there
    is none to show); ``done`` is the sport's word for finished; ``columns`` head the cells
    (``kinds`` says what each is: main, period, games, points); ``note`` is why the event's
    markets are suspended, in the punter's words."""

    event_id: int
    sport: str
    status: str
    clock: str
    done: str
    columns: tuple[str, ...]
    kinds: tuple[str, ...]
    home: SideRow
    away: SideRow
    note: str = ""
    note_since: int | None = None
    seq: int = 0

    @property
    def live(self) -> bool:
        return self.status in LIVE_STATUSES

    @property
    def heads(self) -> list[tuple[str, str]]:
        """Each column's label and kind."""
        return list(zip(self.columns, self.kinds, strict=True))

    @property
    def sides(self) -> list[dict[str, Any]]:
        """Each side's key, row and cells (each with its column's kind), as the template walks them."""
        return [
            {
                "key": key,
                "row": row,
                "cells": [{"kind": k, "text": t} for k, t in zip(self.kinds, row.cells, strict=True)],
            }
            for key, row, cells in (("home", self.home, self.home.cells), ("away", self.away, self.away.cells))
        ]

    def to_json(self) -> dict[str, Any]:
        """The board as the cross-language vectors spell it."""
        return {
            "event_id": self.event_id,
            "sport": self.sport,
            "status": self.status,
            "clock": self.clock,
            "done": self.done,
            "columns": list(self.columns),
            "kinds": list(self.kinds),
            "home": _side_json(self.home),
            "away": _side_json(self.away),
            "note": self.note,
            "note_since": self.note_since,
            "seq": self.seq,
        }


def _side_json(side: SideRow) -> dict[str, Any]:
    return {"name": side.name, "cells": list(side.cells), "serving": side.serving, "red_cards": side.red_cards}


def clock_seconds(clock: Mapping[str, Any], now_ms: int) -> float:
    """Seconds of the period shown at ``now_ms``: a running clock advances ``rate`` a second."""
    ticked = max(0, now_ms - int(clock["at"])) / 1000 if clock.get("running") else 0.0
    elapsed = float(clock["elapsed_s"]) + ticked * float(clock.get("rate") or 1)
    if clock.get("direction") == "down":
        return max(0.0, float(clock.get("limit_s") or 0) - elapsed)
    return elapsed


def _mmss(seconds: float) -> str:
    whole = math.floor(seconds)
    return f"{whole // 60:02d}:{whole % 60:02d}"


def _football_minute(period: int, seconds: float) -> str:
    end = 2 * FOOTBALL_HALF_S if period >= 2 else FOOTBALL_HALF_S
    if seconds >= end:
        return f"{end // 60}+{math.floor((seconds - end) / 60) + 1}'"
    return f"{math.floor(seconds / 60) + 1}'"


def clock_text(match: Mapping[str, Any], now_ms: int) -> str:
    """The clock of a match at ``now_ms`` in its sport's words: 67', 45+2', HT, Q3 04:12,
    End Q2, Set 2; "" before the start and after the end (the board says finished)."""
    status, sport, period = match.get("status"), match.get("sport"), int(match.get("period") or 0)
    if status in ("finished", "scheduled"):
        return ""
    if sport == "tennis":
        return f"Set {max(1, period)}"
    if status == "break":
        return "HT" if sport == "football" else f"End Q{period}"
    clock = match.get("clock")
    if not clock:
        return ""
    seconds = clock_seconds(clock, now_ms)
    if sport == "basketball":
        return f"Q{period} {_mmss(seconds)}"
    return _football_minute(period, seconds)


def _pair(raw: Any) -> tuple[int, int]:
    if isinstance(raw, list | tuple) and len(raw) == 2:
        return int(raw[0]), int(raw[1])
    return 0, 0


def _red_cards(match: Mapping[str, Any]) -> tuple[int, int]:
    home = away = 0
    for incident in match.get("incidents") or []:
        if incident.get("kind") == "red_card":
            home += incident.get("side") == "home"
            away += incident.get("side") == "away"
    return home, away


def _columns(*, sport: str, layout: Layout, score: Mapping[str, Any]) -> list[tuple[str, str, tuple[str, str]]]:
    """(label, kind, (home cell, away cell)) for each column of the board."""
    if sport == "tennis":
        sets = _pair(score.get("sets"))
        games = _pair(score.get("games"))
        points = score.get("points") or ["0", "0"]
        columns = [("Sets", "main", (str(sets[0]), str(sets[1])))]
        if layout == "head":
            for number, done in enumerate(score.get("set_games") or [], start=1):
                home, away = _pair(done)
                columns.append((f"S{number}", "period", (str(home), str(away))))
        columns.append(("Games", "games", (str(games[0]), str(games[1]))))
        columns.append(("Points", "points", (str(points[0]), str(points[1]))))
        return columns
    main = ("", "main", (str(int(score.get("home") or 0)), str(int(score.get("away") or 0))))
    if sport == "basketball" and layout == "head":
        quarters = [_pair(p) for p in score.get("periods") or []]
        labels = [f"Q{n}" if n <= 4 else f"OT{n - 4}" for n in range(1, len(quarters) + 1)]
        columns = [(label, "period", (str(h), str(a))) for label, (h, a) in zip(labels, quarters, strict=True)]
        return [*columns, ("T", "main", main[2])]
    return [main]


def board_of(
    *,
    event_id: int,
    sport: str,
    home: str,
    away: str,
    match: Mapping[str, Any] | None,
    now_ms: int,
    layout: Layout = "row",
    status: str = "scheduled",
    home_score: int = 0,
    away_score: int = 0,
) -> Board:
    """The board of an event: from its match state when there is one, else from the catalogue's
    ``status`` and score (a tennis score there counts sets). A match the catalogue has finished
    is shown finished even while its last match state is on its way."""
    fallback = match is None
    if match is None:
        score: Mapping[str, Any] = {"home": home_score, "away": away_score}
        if sport == "tennis":
            score = {"sets": [home_score, away_score], "games": [0, 0], "points": ["0", "0"]}
        match = {"sport": sport, "status": status, "score": score, "period": 0, "clock": None, "seq": 0}
        clock = ""
    else:
        sport = str(match.get("sport") or sport)
        if status == "finished" and match.get("status") != "finished":
            # The catalogue says the match is over before its last state has reached the reducers.
            match = {**match, "status": "finished"}
        clock = clock_text(match, now_ms)
    status = str(match.get("status") or status)
    score = match.get("score") or {}
    columns = _columns(sport=sport, layout=layout, score=score)
    if fallback:
        # The catalogue knows the main score only: no games, points or periods made up.
        columns = [c for c in columns if c[1] == "main"]
    elif sport == "tennis" and status not in LIVE_STATUSES:
        # Before and after the match no game is being played: the sets (and each set's games) say it all.
        columns = [c for c in columns if c[1] in ("main", "period")]
    red_home, red_away = _red_cards(match)
    server = score.get("server") if sport == "tennis" and status in LIVE_STATUSES else None
    suspension = match.get("suspension") if status in LIVE_STATUSES else None
    return Board(
        event_id=event_id,
        sport=sport,
        status=status,
        clock=clock,
        done=FINISHED.get(sport, "FT"),
        columns=tuple(label for label, _, _ in columns),
        kinds=tuple(kind for _, kind, _ in columns),
        home=SideRow(home, tuple(cells[0] for _, _, cells in columns), server == "home", red_home),
        away=SideRow(away, tuple(cells[1] for _, _, cells in columns), server == "away", red_away),
        note=punter_text(str(suspension["reason"])) if suspension else "",
        note_since=int(suspension["since"]) if suspension else None,
        seq=int(match.get("seq") or 0),
    )
