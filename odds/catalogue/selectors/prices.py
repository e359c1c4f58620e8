"""Current prices and tradability of selections: the reducers' live state in Redis (or a trader's
decision they have not applied yet), the catalogue in PostgreSQL as the fallback when a market
has no live state yet.

A selection is tradable only when both agree: the catalogue says its market is open (traders
and the lifecycle write there) and the live state, when there is one, says the market is open
and the selection active.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Protocol

import orjson

from odds.catalogue.models import Event, Market, Selection
from odds.core.connections import redis_shared
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


class _Pipeline(Protocol):
    def hmget(self, name: str, keys: list[str]) -> Any: ...


def live_states_read(pipe: _Pipeline, market_ids: Sequence[int]) -> None:
    """Queue on ``pipe`` (sync or asyncio) the reads ``live_states_parse`` takes: per market its
    state as the reducers applied it and the newest trader decision on it."""
    for market_id in market_ids:
        pipe.hmget(keys.market_state(market_id), ["seq", "state"])
        pipe.hmget(keys.trader_decision(market_id), ["seq", "state"])


def live_states_parse(market_ids: Sequence[int], replies: Sequence[Any]) -> dict[int, dict[str, Any]]:
    """The state each market is traded at now: the reducers' state, or the trader's decision when
    the reducers have not applied it yet (its sequence is newer). Markets with neither are left out."""
    states = {}
    for index, market_id in enumerate(market_ids):
        applied_seq, applied = replies[2 * index]
        decided_seq, decided = replies[2 * index + 1]
        raw = applied
        if decided and (not applied or _seq(decided_seq) > _seq(applied_seq)):
            raw = decided
        if raw:
            try:
                states[market_id] = orjson.loads(raw)
            except orjson.JSONDecodeError:
                continue
    return states


def _seq(raw: bytes | None) -> int:
    try:
        return int(raw) if raw is not None else -1
    except ValueError:
        return -1


def live_states(*, market_ids: Iterable[int]) -> dict[int, dict[str, Any]]:
    """Each market's state to trade at (see ``live_states_parse``), in one Redis round trip."""
    ids = sorted(set(market_ids))
    if not ids:
        return {}
    pipe = redis_shared().pipeline(transaction=False)
    live_states_read(pipe, ids)
    return live_states_parse(ids, pipe.execute())


@dataclass(frozen=True)
class LiveQuote:
    """What the live state says of one selection: its price (None when the state does not list
    it) and why it cannot be backed (empty when it can). The catalogue is checked on top of it."""

    price: Decimal | None
    unavailable: str
    selection_status: str | None = None
    market_status: str = ""


def live_quote(state: dict[str, Any] | None, selection_id: int) -> LiveQuote:
    if state is None:
        return LiveQuote(price=None, unavailable="")
    found = _live_selection(state, selection_id)
    live_status = str(state.get("status", "open"))
    reason = _unavailable(
        market_status=live_status if state.get("tradable", True) else Market.Status.SUSPENDED,
        event_status=Event.Status.SCHEDULED,
        selection_status=found[1] if found is not None else Selection.Status.ACTIVE,
    )
    return LiveQuote(
        price=found[0] if found is not None else None,
        unavailable=reason,
        selection_status=found[1] if found is not None else None,
        market_status=live_status,
    )


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
            quote = live_quote(state, selection.id)
            if quote.price is not None and quote.selection_status is not None:
                price, selection_status, live = quote.price, quote.selection_status, True
            # The catalogue's reason (the newest trader and lifecycle decision) comes first.
            if not reason:
                market_status, reason = quote.market_status, quote.unavailable
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
