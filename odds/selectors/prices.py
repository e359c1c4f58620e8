"""Current prices and tradability of selections: the reducers' live state in Redis, the
catalogue in PostgreSQL as the fallback when a market has no live state yet.

A selection is tradable only when both agree: the catalogue says its market is open (traders
and the lifecycle write there) and the live state, when there is one, says the market is open
and the selection active.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

import orjson
import redis
from django.conf import settings

from odds.models import Event, Market, Selection
from reducers import keys


@dataclass(frozen=True)
class Quote:
    """What a selection can be backed at now. ``unavailable`` names why not, or is empty."""

    selection_id: int
    market_id: int
    price: Decimal
    selection_status: str
    market_status: str
    unavailable: str = ""
    live: bool = False

    @property
    def available(self) -> bool:
        return not self.unavailable


@functools.cache
def redis_shared() -> redis.Redis:
    """One connection pool per process for reads of the live state."""
    return redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2)


def live_states(*, market_ids: Iterable[int]) -> dict[int, dict[str, Any]]:
    """The reducers' latest state of each market that has one (one Redis round trip)."""
    ids = sorted(set(market_ids))
    if not ids:
        return {}
    pipe = redis_shared().pipeline(transaction=False)
    for market_id in ids:
        pipe.hget(keys.market_state(market_id), "state")
    states = {}
    for market_id, raw in zip(ids, pipe.execute(), strict=True):
        if raw:
            try:
                states[market_id] = orjson.loads(raw)
            except orjson.JSONDecodeError:
                continue
    return states


def _live_selection(state: dict[str, Any], selection_id: int) -> tuple[Decimal, str] | None:
    for item in state.get("selections", ()):
        if isinstance(item, dict) and item.get("id") == selection_id:
            try:
                price = Decimal(str(item["price"]))
            except (KeyError, InvalidOperation):
                return None
            return price, str(item.get("status", "active"))
    return None


def _unavailable(*, market_status: str, event_status: str, selection_status: str) -> str:
    if event_status in (Event.Status.FINISHED, Event.Status.CANCELLED):
        return "market_closed"
    if market_status == Market.Status.SUSPENDED:
        return "market_suspended"
    if market_status != Market.Status.OPEN:
        return "market_closed"
    if selection_status != Selection.Status.ACTIVE:
        return "selection_unavailable"
    return ""


def selection_quotes(*, selections: Iterable[Selection]) -> dict[int, Quote]:
    """Quote every selection (with ``market__event`` loaded) from live state or the catalogue."""
    selections = list(selections)
    states = live_states(market_ids=[s.market_id for s in selections])
    quotes = {}
    for selection in selections:
        market = selection.market
        reason = _unavailable(
            market_status=market.status, event_status=market.event.status, selection_status=selection.status
        )
        price, market_status, selection_status, live = selection.price, market.status, selection.status, False
        state = states.get(market.id)
        if state is not None:
            found = _live_selection(state, selection.id)
            if found is not None:
                price, selection_status = found
                live = True
            live_status = str(state.get("status", "open"))
            if not reason:
                market_status = live_status
                reason = _unavailable(
                    market_status=live_status if state.get("tradable", True) else Market.Status.SUSPENDED,
                    event_status=market.event.status,
                    selection_status=selection_status,
                )
        quotes[selection.id] = Quote(
            selection_id=selection.id,
            market_id=market.id,
            price=price,
            selection_status=selection_status,
            market_status=market_status,
            unavailable=reason,
            live=live,
        )
    return quotes


def selection_quotes_by_id(*, selection_ids: Iterable[int]) -> dict[int, Quote]:
    selections = Selection.objects.select_related("market__event").filter(id__in=list(selection_ids))
    return selection_quotes(selections=selections)
