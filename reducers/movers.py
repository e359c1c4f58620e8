"""Movers: the markets whose prices moved most in each event-time window.

A market's move in a window is measured from its first price snapshot in the window to its last
(by sequence); the score of a market in a window is the largest move of any of its selections,
in basis points.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import orjson

from reducers.frames import PROTOCOL_VERSION, DeskMoversFrame

# How long a window's ranking is kept (seconds).
KEEP_WINDOWS_S = 3600


# How many markets of a window the traders' movers page and its frames show.
MOVERS_SHOWN = 10


@dataclass(frozen=True)
class Movement:
    """One selection's first and last price in one window."""

    window_start: int
    market_id: int
    first: Decimal
    last: Decimal
    selection_id: int = 0


@dataclass(frozen=True)
class Move:
    """A market's largest move in one window: the selection that moved most, its first and last
    price and the signed move in basis points (a price drifting out is positive, shortening negative)."""

    selection_id: int
    first: Decimal
    last: Decimal
    bps: int

    def encode(self) -> bytes:
        """As the store keeps it beside the ranking (prices as decimal strings, never floats)."""
        return orjson.dumps(
            {"selection_id": self.selection_id, "first": str(self.first), "last": str(self.last), "bps": self.bps}
        )

    @classmethod
    def decode(cls, raw: bytes | str) -> Move:
        item = orjson.loads(raw)
        return cls(int(item["selection_id"]), Decimal(item["first"]), Decimal(item["last"]), int(item["bps"]))


def move_bps(first: Decimal, last: Decimal) -> int:
    """Signed move from first to last price in basis points, truncated toward zero."""
    return int((last - first) / first * 10_000)


def biggest_moves(movements: Iterable[Movement]) -> dict[tuple[int, int], Move]:
    """Per (window start, market) the move of the selection that moved most (by its absolute move
    in basis points; the first met where two tie).

    A first price that is not positive has no relative move and is left out (the feed's schema
    refuses such prices; a record that slipped past it must not stop the ranking)."""
    best: dict[tuple[int, int], Move] = {}
    for movement in movements:
        if movement.first <= 0:
            continue
        key = (movement.window_start, movement.market_id)
        bps = move_bps(movement.first, movement.last)
        current = best.get(key)
        if current is None or abs(bps) > abs(current.bps):
            best[key] = Move(movement.selection_id, movement.first, movement.last, bps)
    return best


def movers_frame(windows: Iterable[int], *, ts: int) -> bytes:
    """The ``desk.movers`` frame naming the windows a batch ranked (``reducers.frames.DeskMoversFrame``)."""
    frame: DeskMoversFrame = {"type": "desk.movers", "v": PROTOCOL_VERSION, "windows": sorted(set(windows)), "ts": ts}
    return orjson.dumps(frame)


# --- window partials ---
#
# The price reducer reads every record; the movers need, per market and event-time window, only
# the first and the last snapshot. The price reducer folds each batch's accepted records into one
# ``WindowPartial`` per (window, market) and writes them to their own topic; the movers query
# merges the partials of a window across batches (first by lowest sequence, last by highest) in
# Spark state with the watermark. Merging is idempotent for the moves: a partial read twice
# (at-least-once) leaves the first and the last snapshot as they were.

Prices = tuple[tuple[int, Decimal], ...]


@dataclass(frozen=True)
class WindowPartial:
    """A market's first and last price snapshot in one event-time window, of some of its records:
    the selections' (id, price) of the lowest and the highest sequence, the newest event time
    (ms) among the records and how many records it stands for."""

    window_start: int
    market_id: int
    first_seq: int
    first: Prices
    last_seq: int
    last: Prices
    newest_event: int
    updates: int


def window_start_of(event_ts: int, window_ms: int) -> int:
    """The start (ms) of the tumbling window an event time falls in, as Spark's ``window()``."""
    return event_ts - event_ts % window_ms


def merge_partials(a: WindowPartial, b: WindowPartial) -> WindowPartial:
    """Two partials of one (window, market): the first of the lower sequence, the last of the
    higher (the one met first where they tie), the newer event time and the updates added up."""
    first = a if a.first_seq <= b.first_seq else b
    last = a if a.last_seq >= b.last_seq else b
    return WindowPartial(
        window_start=a.window_start,
        market_id=a.market_id,
        first_seq=first.first_seq,
        first=first.first,
        last_seq=last.last_seq,
        last=last.last,
        newest_event=max(a.newest_event, b.newest_event),
        updates=a.updates + b.updates,
    )


def fold_partials(
    snapshots: Iterable[tuple[int, int, int, Prices]], *, window_ms: int
) -> dict[tuple[int, int], WindowPartial]:
    """Per (window start, market), the partial of ``snapshots``: each is (market id, sequence,
    event time ms, the selections' (id, price))."""
    return _merged(
        WindowPartial(window_start_of(event_ts, window_ms), market_id, seq, prices, seq, prices, event_ts, 1)
        for market_id, seq, event_ts, prices in snapshots
    )


def merge_all(*groups: Iterable[WindowPartial]) -> list[WindowPartial]:
    """The partials of disjoint parts of one batch merged per (window, market)."""
    out = _merged(partial for group in groups for partial in group)
    return [out[key] for key in sorted(out)]


def merge_into(kept: dict[tuple[int, int], WindowPartial], partials: Iterable[WindowPartial]) -> None:
    """Merge ``partials`` into ``kept``, which holds one partial per (window start, market)."""
    for partial in partials:
        key = (partial.window_start, partial.market_id)
        current = kept.get(key)
        kept[key] = partial if current is None else merge_partials(current, partial)


def _merged(partials: Iterable[WindowPartial]) -> dict[tuple[int, int], WindowPartial]:
    out: dict[tuple[int, int], WindowPartial] = {}
    merge_into(out, partials)
    return out


def prices_of(items: Iterable[Any] | None) -> Prices:
    """The (id, price) pairs of selections given as ``{"id", "price"}`` items (a window-topic
    record's, or the rows Spark parses from a price record), prices as exact decimals."""
    return tuple((int(item["id"]), Decimal(item["price"])) for item in items or ())


def _prices_json(prices: Prices) -> list[dict[str, Any]]:
    return [{"id": selection_id, "price": str(price)} for selection_id, price in prices]


def encode_partial(partial: WindowPartial) -> bytes:
    """A partial as its record on the window topic (prices as decimal strings, never floats)."""
    return orjson.dumps(
        {
            "window_start": partial.window_start,
            "market_id": partial.market_id,
            "first_seq": partial.first_seq,
            "first": _prices_json(partial.first),
            "last_seq": partial.last_seq,
            "last": _prices_json(partial.last),
            "newest_event": partial.newest_event,
            "updates": partial.updates,
        }
    )


def decode_partial(value: bytes) -> WindowPartial:
    """The partial a window-topic record holds (``encode_partial``)."""
    raw = orjson.loads(value)
    return WindowPartial(
        window_start=int(raw["window_start"]),
        market_id=int(raw["market_id"]),
        first_seq=int(raw["first_seq"]),
        first=prices_of(raw["first"]),
        last_seq=int(raw["last_seq"]),
        last=prices_of(raw["last"]),
        newest_event=int(raw["newest_event"]),
        updates=int(raw["updates"]),
    )


def window_movements(window_start: int, market_id: int, first: Prices, last: Prices) -> list[Movement]:
    """Each selection's move from a window's first snapshot to its last; a selection that is not
    in both has no move to measure in that window."""
    firsts = dict(first)
    return [
        Movement(
            window_start=window_start,
            market_id=market_id,
            first=firsts[selection_id],
            last=price,
            selection_id=selection_id,
        )
        for selection_id, price in last
        if selection_id in firsts
    ]
