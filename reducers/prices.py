"""Latest-state reduction of price updates: conflation and idempotent apply.

The state store keeps, per market, the highest sequence applied and the state it carried.
An update is applied only when its sequence is higher than the stored one, so replays after
a restart and duplicates from at-least-once delivery change nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from reducers import frames
from reducers.frames import MarketFrame, MarketStatusFrame
from reducers.schemas import PriceUpdate

STATE_VERSION = 1


@dataclass(frozen=True)
class Conflated:
    """The newest update of one market in a batch and how many updates it stands for."""

    update: PriceUpdate
    merged: int
    kafka_ts: int


def conflate(updates: Iterable[tuple[PriceUpdate, int]]) -> list[Conflated]:
    """Keep the highest-sequence update per market; count the updates folded into it.

    ``updates`` pairs each update with its Kafka record timestamp (ms). Safe because every
    update is a full snapshot of the market's book: the newest one carries everything.
    """
    best: dict[int, Conflated] = {}
    for update, kafka_ts in updates:
        current = best.get(update.market_id)
        if current is None:
            best[update.market_id] = Conflated(update, 1, kafka_ts)
        elif update.seq > current.update.seq:
            best[update.market_id] = Conflated(update, current.merged + 1, kafka_ts)
        else:
            best[update.market_id] = Conflated(current.update, current.merged + 1, current.kafka_ts)
    return sorted(best.values(), key=lambda c: c.update.market_id)


def held_is_current(*, stored_seq: int, stored_status: str, held_seq: int, held_status: str) -> bool:
    """Whether a client holding a market at ``held_seq`` with ``held_status`` already has the
    stored state (or a newer one), so an image need not carry it again. The same sequence with
    another status is a change: the markets table restates a status without a new price."""
    return held_seq > stored_seq or (held_seq == stored_seq and held_status == stored_status)


def state_is_held(held: tuple[int, str] | None, state: Mapping[str, Any]) -> bool:
    """Whether a client holding ``held`` (sequence, status) of a market already has its stored
    ``state`` (a reducer state: ``seq`` and ``status`` in it), so an image leaves it out."""
    if held is None:
        return False
    return held_is_current(
        stored_seq=int(state.get("seq", 0)),
        stored_status=str(state.get("status", "")),
        held_seq=held[0],
        held_status=held[1],
    )


def is_newer(*, stored_seq: int | None, incoming_seq: int) -> bool:
    """Whether an incoming sequence supersedes the stored one (idempotent apply)."""
    return stored_seq is None or incoming_seq > stored_seq


def effective_status(*, price_status: str, table_status: str | None) -> str:
    """The market's status after applying the markets table to the price's own status.

    The table (trader decisions, lifecycle) overrides the feed: a market the table has
    suspended, closed or settled is not tradable whatever the price says. A market the table
    does not know yet keeps the feed's status.
    """
    if table_status in ("suspended", "closed", "settled"):
        return "closed" if table_status == "settled" else table_status
    return price_status


def market_state(*, item: Conflated, reducer_ts: int, table_status: str | None = None) -> MarketFrame:
    """The state document stored in Redis and published to the market's channel."""
    update = item.update
    status = effective_status(price_status=update.status, table_status=table_status)
    return {
        "type": "market",
        "v": STATE_VERSION,
        "market_id": update.market_id,
        "seq": update.seq,
        "status": status,
        "tradable": status == "open",
        "selections": [s.to_json() for s in update.selections],
        "merged": item.merged,
        "ts": {
            "event": update.event_ts,
            "produce": update.produce_ts,
            "kafka": item.kafka_ts,
            "reducer": reducer_ts,
        },
    }


def restated(
    *, state: Mapping[str, Any], price_status: str, table_status: str | None, reducer_ts: int
) -> MarketFrame | None:
    """The stored state with its status re-derived from a changed markets table, or ``None`` when
    the status stays the same. Same sequence and prices; clients take a state of the same
    sequence when its status differs (docs/protocol.md)."""
    status = effective_status(price_status=price_status, table_status=table_status)
    if status == state.get("status"):
        return None
    return cast(
        MarketFrame,
        {**state, "status": status, "tradable": status == "open", "ts": {**state["ts"], "reducer": reducer_ts}},
    )


def status_change(*, state: MarketFrame) -> MarketStatusFrame:
    """The explicit message sent when a market's status differs from its previous one."""
    return {
        "type": "market.status",
        "v": STATE_VERSION,
        "market_id": state["market_id"],
        "seq": state["seq"],
        "status": state["status"],
        "tradable": state["tradable"],
        "ts": state["ts"],
    }


def encode_state(state: MarketFrame | MarketStatusFrame) -> bytes:
    return frames.encode(state)


def merge_conflated(*groups: list[Conflated]) -> list[Conflated]:
    """Combine conflations of disjoint parts of one batch: per market the highest sequence wins
    and the merged counts add up."""
    best: dict[int, Conflated] = {}
    for group in groups:
        for item in group:
            current = best.get(item.update.market_id)
            if current is None:
                best[item.update.market_id] = item
            else:
                winner = item if item.update.seq > current.update.seq else current
                best[item.update.market_id] = Conflated(winner.update, current.merged + item.merged, winner.kafka_ts)
    return sorted(best.values(), key=lambda c: c.update.market_id)


@dataclass(frozen=True)
class Admission:
    """Which conflated items of a batch are applied now (with their markets-table statuses) and
    which markets' prices wait for their definitions instead."""

    applied: list[Conflated]
    statuses: list[str | None]
    kept: frozenset[int]


def unknown_items(items: list[Conflated], statuses: list[str | None]) -> list[Conflated]:
    """The items whose market the markets table did not know at the lookup (no status)."""
    return [item for item, status in zip(items, statuses, strict=True) if status is None]


def admit(items: list[Conflated], statuses: list[str | None], now_known: Mapping[int, str | None]) -> Admission:
    """Admit a batch's items given the markets table at the lookup (``statuses``) and, for each
    market unknown then, what keeping its price found (``now_known``): ``None`` when the price
    was kept, or the status of a definition written since, in which case the price is applied
    now with that status."""
    kept = frozenset(market_id for market_id, status in now_known.items() if status is None)
    admitted = [
        (item, status if status is not None else now_known.get(item.update.market_id))
        for item, status in zip(items, statuses, strict=True)
        if item.update.market_id not in kept
    ]
    return Admission(applied=[item for item, _ in admitted], statuses=[status for _, status in admitted], kept=kept)
