"""The predictor game's reads for the pages and the API: an event's game, leaderboards, the live
games, the questions a trader may void. Everything is read from Redis, where the game reducer
writes it (``store.game``); event names come from the catalogue."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.conf import settings

from odds.catalogue.models import Event
from reducers.frames import GameLeader, GameQuestion
from reducers.game import OPEN, day_of
from store.clients import redis_client
from store.game import GameStore, board_scope

LEADERBOARD_LIMIT = 50


def _store() -> GameStore:
    return GameStore(redis_client(settings.REDIS_URL))


def game_state(*, event_id: int) -> dict[str, Any]:
    """An event's game as a page first shows it: its questions and its leaderboard's top."""
    store = _store()
    board = store.leaderboard(board_scope(event_id=event_id), limit=20)
    return {"event_id": event_id, "questions": store.questions(event_id), "top": board.top, "players": board.players}


def game_today() -> str:
    return day_of(int(datetime.now(UTC).timestamp() * 1000))


@dataclass(frozen=True)
class Board:
    """A leaderboard as a page or the API shows it: its top, how many play, the punter's place."""

    scope: str
    title: str
    top: list[GameLeader]
    players: int
    rank: int | None
    points: int | None


def game_leaderboard(
    *, event_id: int | None = None, day: str | None = None, user_id: int | None = None, limit: int = LEADERBOARD_LIMIT
) -> Board:
    """An event's leaderboard (``event_id``), or a day's (``day``, today by default)."""
    scope = board_scope(event_id=event_id) if event_id is not None else board_scope(day=day or game_today())
    found = _store().leaderboard(scope, limit=limit, user_id=user_id)
    if event_id is not None:
        event = Event.objects.filter(id=event_id).first()
        title = f"{event.home} v {event.away}" if event is not None else f"Event {event_id}"
    else:
        title = "Today" if (day or game_today()) == game_today() else str(day)
    return Board(scope=scope, title=title, top=found.top, players=found.players, rank=found.rank, points=found.points)


@dataclass(frozen=True)
class LiveGame:
    event: Event
    questions: list[GameQuestion]

    @property
    def open(self) -> list[GameQuestion]:
        return [q for q in self.questions if q["status"] == OPEN]

    @property
    def undecided(self) -> list[GameQuestion]:
        """The questions a trader may still void (open, or closed and waiting for their event)."""
        return [q for q in self.questions if q["status"] in (OPEN, "closed")]


def games_live(*, limit: int = 30) -> list[LiveGame]:
    """The games played most recently, with their events (those the catalogue still has)."""
    store = _store()
    ids = store.games(limit=limit)
    events = Event.objects.in_bulk(ids)
    return [LiveGame(event=events[e], questions=store.questions(e)) for e in ids if e in events]
