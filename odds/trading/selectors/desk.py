"""Reads for the trading desk's risk view and ticker: the liability reducer's books and the
ticker's log (``store.liability``), named from the markets table, as the desk's frames carry them."""

from __future__ import annotations

from typing import Any

import orjson

from odds.core.connections import redis_shared
from reducers.frames import DeskMarketBook
from reducers.liability import market_book_frames, names_of
from reducers.market_kinds import SPORTS
from store.liability import TICKER_LOG, BookStore
from store.markets import MarketStore

# The risk view's first image: the events with the largest worst-case loss.
RISK_EVENTS = 100


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
