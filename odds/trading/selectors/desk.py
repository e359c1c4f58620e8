"""Reads for the trading desk's risk view, ticker and price movers: the liability reducer's books
and the ticker's log (``store.liability``), the movers query's rankings (``store.markets``), named
from the markets table, as the desk's frames carry them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import orjson

from odds.core.connections import redis_shared
from reducers.frames import DeskMarketBook
from reducers.liability import market_book_frames, names_of
from reducers.market_kinds import SPORTS
from reducers.movers import MOVERS_SHOWN
from store.liability import TICKER_LOG, BookStore
from store.markets import MarketStore

# The risk view's first image: the events with the largest worst-case loss.
RISK_EVENTS = 100
# The movers page: the newest windows, each with its biggest movers.
MOVERS_WINDOWS = 5


def desk_risk_books(*, limit: int = RISK_EVENTS) -> list[DeskMarketBook]:
    """Every market with open bets of the ``limit`` riskiest events, as ``desk.liability``
    carries a market (the risk view's first image; the frames keep it current)."""
    client = redis_shared()
    store = BookStore(client)
    ranked = store.riskiest_events(limit=limit)
    worsts = dict(ranked)
    market_ids = [m for ids in store.markets_of_events([e for e, _ in ranked]).values() for m in ids]
    books, _, rates = store.books(market_ids)
    definitions = MarketStore(client).definitions(market_ids)
    names = {market_id: names_of(definitions.get(market_id)) for market_id in market_ids}
    return market_book_frames({m: b for m, b in books.items() if b.bets}, names=names, worsts=worsts, rates=rates)


def desk_ticker(*, limit: int = TICKER_LOG) -> list[Any]:
    """The newest ticker frames (``desk.bet``), newest first."""
    return [orjson.loads(raw) for raw in BookStore(redis_shared()).ticker(limit=limit)]


def desk_sports() -> list[str]:
    """The sports a ticker filter offers."""
    return list(SPORTS)


@dataclass(frozen=True)
class MoverRow:
    """One market among a window's biggest movers, named from the markets table (empty names for a
    market it no longer holds): the selection that moved most, from ``first`` to ``last``."""

    market_id: int
    event_id: int | None
    sport: str
    event: str
    market: str
    selection: str
    in_play: bool
    first: Decimal
    last: Decimal
    bps: int

    @property
    def move_text(self) -> str:
        """The move in per cent with its sign: "+12.50 %" drifting out, "\N{MINUS SIGN}3.00 %" shortening in."""
        sign = "+" if self.bps > 0 else "\N{MINUS SIGN}" if self.bps < 0 else ""
        return f"{sign}{Decimal(abs(self.bps)) / 100:.2f} %"

    @property
    def direction(self) -> str:
        return "out" if self.bps > 0 else "in" if self.bps < 0 else "flat"


@dataclass(frozen=True)
class MoversWindow:
    start: datetime
    rows: list[MoverRow]


def desk_movers(*, windows: int = MOVERS_WINDOWS, top: int = MOVERS_SHOWN) -> list[MoversWindow]:
    """The newest ``windows`` event-time windows of the movers query, newest first, each with its
    ``top`` markets by their largest selection move; three round trips, no database query."""
    store = MarketStore(redis_shared())
    ranked = store.movers(windows=windows, top=top)
    market_ids = sorted({market_id for _, rows in ranked for market_id, _ in rows})
    definitions = store.definitions(market_ids)
    out = []
    for start, rows in ranked:
        shown = []
        for market_id, move in rows:
            definition = definitions.get(market_id)
            names = names_of(definition)
            shown.append(
                MoverRow(
                    market_id=market_id,
                    event_id=definition.event_id if definition is not None else None,
                    sport=names.sport,
                    event=names.event,
                    market=names.market,
                    selection=names.selection(move.selection_id),
                    in_play=names.in_play,
                    first=move.first,
                    last=move.last,
                    bps=move.bps,
                )
            )
        out.append(MoversWindow(start=datetime.fromtimestamp(start / 1000, tz=UTC), rows=shown))
    return out
