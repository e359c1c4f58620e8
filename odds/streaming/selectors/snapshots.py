"""View snapshots: a public list view (home, a sport, a competition, in play, an event) as one JSON
document that is the same for every punter, so a cache can share it.

Each market carries the live state the stream would send (prices, status, sequence) or, for a
market the reducers have not priced yet, the catalogue's with sequence 0. A client opening the
stream after a snapshot watches with ``since`` (docs/protocol.md) and is sent only the markets
that moved. Prices here are for display: a bet is always accepted against live state.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import orjson
import redis

from odds.catalogue.models import Event, Market
from odds.core.connections import redis_shared
from store.markets import queue_states, raw_states

SNAPSHOT_VERSION = 1

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Snapshot:
    """The encoded document and its entity tag (of the content, not of when it was taken: two
    snapshots of an unchanged view share it)."""

    body: bytes
    etag: str


def _stored_states(market_ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    """The state each market's stream carries now (the reducers' own, as a ``watch`` image
    compares against), in one round trip."""
    if not market_ids:
        return {}
    pipe = redis_shared().pipeline(transaction=False)
    queue_states(pipe, market_ids)
    try:
        replies = pipe.execute()
    except redis.RedisError:
        # The catalogue's prices at sequence 0: a client watching from this snapshot is sent
        # every market's live state, so nothing is missed while the live state cannot be read.
        log.warning("view snapshot without live states: Redis unavailable", exc_info=True)
        return {}
    states = {}
    for market_id, raw in raw_states(market_ids, replies).items():
        try:
            states[market_id] = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
    return states


def live_overlay(*, markets: Sequence[Market]) -> dict[str, list[Any]]:
    """Show ``markets`` (and their prefetched selections) as their streams carry them now: prices,
    selection and market status from the live state, in memory only. Returns what a page built from
    them holds, market id → ``[seq, status]``, for its ``watch`` to send as ``since``; markets
    with no live state are left as the catalogue has them and out of the map."""
    states = _stored_states([market.id for market in markets])
    held: dict[str, list[Any]] = {}
    for market in markets:
        state = states.get(market.id)
        if state is None:
            continue
        live = {s.get("id"): s for s in state.get("selections", [])}
        for selection in market.selections.all():
            current = live.get(selection.id)
            if current is not None:
                selection.price = Decimal(str(current.get("price", selection.price)))
                selection.status = current.get("status", selection.status)
        market.status = state.get("status", market.status)
        seq = int(state.get("seq", 0))
        market.live_seq = seq  # type: ignore[attr-defined]  # in memory only: the page shows it as data-seq
        held[str(market.id)] = [seq, market.status]
    return held


def _market(market: Market, held: list[Any] | None) -> dict[str, Any]:
    """A market as ``live_overlay`` left it, with the sequence it is held at (0: not priced yet)."""
    return {
        "market_id": market.id,
        "name": market.name,
        "kind": market.kind,
        "seq": held[0] if held else 0,
        "status": market.status,
        "tradable": market.status == Market.Status.OPEN,
        "selections": [
            {"id": s.id, "name": s.name, "price": str(s.price), "status": s.status} for s in market.selections.all()
        ],
    }


def _event(event: Event, markets: list[Market], held: dict[str, list[Any]]) -> dict[str, Any]:
    return {
        "id": event.id,
        "home": event.home,
        "away": event.away,
        "starts_at": event.starts_at.isoformat(),
        "status": event.status,
        "sport": event.competition.sport.slug,
        "competition": {"id": event.competition_id, "name": event.competition.name},
        "markets": [_market(market, held.get(str(market.id))) for market in markets],
    }


def view_snapshot(*, view: str, events: list[Event], markets_of: str) -> Snapshot:
    """The snapshot of ``view`` listing ``events`` with their markets (``markets_of`` names the
    prefetched markets: ``headline_markets`` for lists, ``markets`` for an event page)."""
    market_lists = [
        list(getattr(event, markets_of).all() if markets_of == "markets" else getattr(event, markets_of))
        for event in events
    ]
    at = int(time.time() * 1000)  # before reading: the states read are at least this new
    held = live_overlay(markets=[market for markets in market_lists for market in markets])
    content = [_event(event, markets, held) for event, markets in zip(events, market_lists, strict=True)]
    encoded = orjson.dumps(content)
    etag = '"' + hashlib.blake2b(view.encode() + b"\0" + encoded, digest_size=12).hexdigest() + '"'
    body = (
        b'{"type":"view.snapshot","v":%d,"view":%s,"at":%d,"events":' % (SNAPSHOT_VERSION, orjson.dumps(view), at)
        + encoded
        + b"}"
    )
    return Snapshot(body=body, etag=etag)
