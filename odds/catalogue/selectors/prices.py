"""Current prices and tradability of selections: the reducers' live state in Redis (or a trader's
decision they have not applied yet), the catalogue in PostgreSQL as the fallback when a market
has no live state yet.

Whether a selection can be backed is one rule, ``reducers.betting.leg_verdict``: the catalogue's
statuses (traders and the lifecycle write there) first, then the live state's word on it. A live
state older than ``LIVE_PRICE_MAX_AGE_S`` (applied, or decided by a trader, that long ago, with no
sign of life from the price pipe since) treats its market as suspended: a stalled pipe never
prices a bet or a cash-out at frozen odds.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Protocol

import orjson
from django.conf import settings

from odds.catalogue.models import Selection
from odds.core.connections import redis_shared
from reducers.betting import leg_verdict, live_leg, live_state_fresh
from reducers.queries import PRICE_QUERIES
from store.markets import queue_live_states


@dataclass(frozen=True)
class Quote:
    """What a selection can be backed at now. ``unavailable`` names why not (the reject code,
    ``message`` in words), or is empty."""

    selection_id: int
    market_id: int
    price: Decimal
    selection_status: str
    market_status: str
    unavailable: str = ""
    live: bool = False
    message: str = ""

    @property
    def available(self) -> bool:
        return not self.unavailable


class _Pipeline(Protocol):
    def hmget(self, name: str, keys: list[str]) -> Any: ...


@dataclass(frozen=True)
class LiveStates:
    """The state each market is traded at now (markets with none left out), with what their
    freshness is judged by: the price pipe's last sign of life and when they were read."""

    states: dict[int, dict[str, Any]] = field(default_factory=dict)
    pipe_seen_ms: int = 0
    read_at_ms: int = 0

    def get(self, market_id: int | None) -> dict[str, Any] | None:
        return self.states.get(market_id) if market_id is not None else None

    def fresh(self, market_id: int) -> bool:
        """Whether the market's state may price a bet or a cash-out (``LIVE_PRICE_MAX_AGE_S``)."""
        state = self.states.get(market_id)
        return state is not None and live_state_fresh(
            state=state,
            pipe_seen_ms=self.pipe_seen_ms,
            now_ms=self.read_at_ms,
            max_age_ms=int(settings.LIVE_PRICE_MAX_AGE_S * 1000),
        )


def live_states_read(pipe: _Pipeline, market_ids: Sequence[int]) -> None:
    """Queue on ``pipe`` (sync or asyncio) the reads ``live_states_parse`` takes: per market its
    state as the reducers applied it and the newest trader decision on it, then the price
    pipe's signs of life."""
    queue_live_states(pipe, market_ids, PRICE_QUERIES)


def live_states_parse(market_ids: Sequence[int], replies: Sequence[Any]) -> LiveStates:
    """The state each market is traded at now: the reducers' state, or the trader's decision when
    the reducers have not applied it yet (its sequence is newer)."""
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
    seen = [_seq(raw) for raw in replies[2 * len(market_ids)]]
    return LiveStates(states=states, pipe_seen_ms=max(seen, default=0), read_at_ms=int(time.time() * 1000))


def _seq(raw: bytes | None) -> int:
    try:
        return int(raw) if raw is not None else -1
    except ValueError:
        return -1


def live_states(*, market_ids: Iterable[int]) -> LiveStates:
    """Each market's state to trade at (see ``live_states_parse``), in one Redis round trip."""
    ids = sorted(set(market_ids))
    if not ids:
        return LiveStates(read_at_ms=int(time.time() * 1000))
    pipe = redis_shared().pipeline(transaction=False)
    live_states_read(pipe, ids)
    return live_states_parse(ids, pipe.execute())


def selection_quotes(*, selections: Iterable[Selection]) -> dict[int, Quote]:
    """Quote every selection (with ``market__event`` loaded) from live state or the catalogue."""
    selections = list(selections)
    live = live_states(market_ids=[s.market_id for s in selections])
    quotes = {}
    for selection in selections:
        market = selection.market
        price, market_status, selection_status, is_live = selection.price, market.status, selection.status, False
        quote = live_leg(live.get(market.id), selection.id, fresh=live.fresh(market.id))
        if quote.price is not None and quote.selection_status is not None:
            price, selection_status, is_live = quote.price, quote.selection_status, True
        # The catalogue's verdict (the newest trader and lifecycle decision) comes first; when
        # it has none, the live state's word on the leg, and what it says the market is.
        catalogue = leg_verdict(
            event_status=market.event.status, market_status=market.status, selection_status=selection.status
        )
        verdict = catalogue
        if not catalogue.code:
            verdict = leg_verdict(
                event_status=market.event.status,
                market_status=market.status,
                selection_status=selection.status,
                live=quote.reason,
            )
            market_status = quote.market_status or market_status
        quotes[selection.id] = Quote(
            selection_id=selection.id,
            market_id=market.id,
            price=price,
            selection_status=selection_status,
            market_status=market_status,
            unavailable=verdict.code,
            live=is_live,
            message=verdict.message,
        )
    return quotes


def selection_quotes_by_id(*, selection_ids: Iterable[int]) -> dict[int, Quote]:
    selections = Selection.objects.select_related("market__event").filter(id__in=list(selection_ids))
    return selection_quotes(selections=selections)
