"""Liability per selection from bet events, with adder/subtractor semantics.

The book's liability on a selection is what it pays out, net of stakes, if that selection wins:
for every open bet containing the selection, ``potential_return - stake``. An accumulator counts
in full on each of its legs (the worst case for each). A placed bet adds its exposure; voided,
cashed-out and settled bets subtract it again. Amounts are integer pence.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from reducers.frames import PROTOCOL_VERSION, DeskBetFrame, DeskBetLeg, DeskLiabilityFrame, DeskMarketBook
from reducers.schemas import BetEvent, MarketDefinition

PENCE = Decimal(100)
# How long the liability reducer remembers an event id it counted (de-duplication of redelivered
# events); longer than the bets topic keeps a record.
SEEN_TTL_S = 14 * 24 * 3600


@dataclass(frozen=True)
class LiabilityDelta:
    selection_id: int
    pence: int
    bets: int


def exposure_pence(event: BetEvent) -> int:
    return int((event.potential_return - event.stake) * PENCE)


def liability_deltas(event: BetEvent) -> list[LiabilityDelta]:
    """The change a bet event makes to each selection's liability (adder or subtractor)."""
    sign = 1 if event.type == "placed" else -1
    exposure = exposure_pence(event)
    seen: set[int] = set()
    deltas = []
    for leg in event.legs:
        if leg.selection_id in seen:
            continue
        seen.add(leg.selection_id)
        deltas.append(LiabilityDelta(leg.selection_id, sign * exposure, sign))
    return deltas


def aggregate(events: list[BetEvent]) -> dict[int, tuple[int, int]]:
    """Fold events into selection → (pence, open bets); each event id counts once."""
    totals: dict[int, tuple[int, int]] = {}
    counted: set[str] = set()
    for event in events:
        if event.event_id in counted:
            continue
        counted.add(event.event_id)
        for delta in liability_deltas(event):
            pence, bets = totals.get(delta.selection_id, (0, 0))
            totals[delta.selection_id] = (pence + delta.pence, bets + delta.bets)
    return totals


# --- liability per outcome (docs/liability.md) ------------------------------------------------
#
# A market's book, from the open bets with a leg in it: ``staked``, the pence those bets staked,
# and for each selection the pence they return if it wins. The book's P/L if selection s wins is
# ``staked - returns[s]``: every bet on another outcome of the market loses (its stake is kept),
# every bet on s is paid. An accumulator counts on each of its legs' markets with its whole stake
# and whole return, the worst case for that market: its other legs are taken to win too (were any
# to lose, the acca pays nothing and only its stake moves). The worst outcome of a market is the
# selection with the largest returns (an outcome nobody backed has P/L ``staked``); an event's
# worst case is the sum of its markets' worst P/L (no bet has two legs in one event, and taking
# each market's worst outcome at once is never better than what can happen).


@dataclass(frozen=True)
class OutcomeDelta:
    """The change one bet event makes to one market's book (signed pence, signed bet count)."""

    market_id: int
    event_id: int
    selection_id: int
    staked: int
    returns: int
    bets: int


def outcome_deltas(event: BetEvent) -> list[OutcomeDelta]:
    """The change a bet event makes to the book of each market it has a leg in: a placed bet adds
    its stake to the market and its return to the leg's selection; a voided, cashed-out or settled
    one takes them away again."""
    sign = 1 if event.type == "placed" else -1
    staked = int(event.stake * PENCE) * sign
    returns = int(event.potential_return * PENCE) * sign
    deltas: dict[int, OutcomeDelta] = {}
    for leg in event.legs:
        if leg.market_id not in deltas:
            deltas[leg.market_id] = OutcomeDelta(leg.market_id, leg.event_id, leg.selection_id, staked, returns, sign)
    return list(deltas.values())


@dataclass(frozen=True)
class MarketBook:
    """One market's book in pence (``keys.market_book``); ``returns``: selection → pence paid if it wins."""

    market_id: int
    event_id: int
    staked: int = 0
    bets: int = 0
    returns: tuple[tuple[int, int], ...] = ()

    def pl(self, selection_id: int) -> int:
        """The book's profit (positive) or loss (negative) if ``selection_id`` wins."""
        return self.staked - dict(self.returns).get(selection_id, 0)

    @property
    def worst(self) -> int:
        """The P/L of the worst outcome (``staked`` when no selection returns anything)."""
        return self.staked - max((r for _, r in self.returns), default=0)

    @property
    def worst_selection(self) -> int | None:
        """The selection whose win costs the book most; None when none returns anything."""
        paying = [(r, -s) for s, r in self.returns if r > 0]
        return -max(paying)[1] if paying else None


def book_apply(book: MarketBook, delta: OutcomeDelta) -> MarketBook:
    """The book after one delta (what ``store.liability``'s script does in Redis)."""
    returns = dict(book.returns)
    returns[delta.selection_id] = returns.get(delta.selection_id, 0) + delta.returns
    return MarketBook(
        market_id=book.market_id,
        event_id=book.event_id,
        staked=book.staked + delta.staked,
        bets=book.bets + delta.bets,
        returns=tuple(sorted((s, r) for s, r in returns.items() if r != 0)),
    )


def books_of(events: list[BetEvent]) -> dict[int, MarketBook]:
    """Fold bet events into market id → book; each event id counts once, and a market with no
    open bet left has no book."""
    books: dict[int, MarketBook] = {}
    counted: set[str] = set()
    for event in events:
        if event.event_id in counted:
            continue
        counted.add(event.event_id)
        for delta in outcome_deltas(event):
            book = books.get(delta.market_id, MarketBook(delta.market_id, delta.event_id))
            books[delta.market_id] = book_apply(book, delta)
    return {market_id: book for market_id, book in books.items() if book.bets}


def event_worst(books: list[MarketBook]) -> int:
    """An event's worst case: the sum of its markets' worst P/L."""
    return sum(book.worst for book in books)


def book_from_hash(market_id: int, raw: dict[bytes, bytes]) -> MarketBook:
    """A market's book as ``keys.market_book`` holds it (an empty hash: no open bet)."""
    returns = tuple(sorted((int(k[2:]), int(v)) for k, v in raw.items() if k.startswith(b"r:") and int(v) != 0))
    return MarketBook(
        market_id=market_id,
        event_id=int(raw.get(b"event", 0)),
        staked=int(raw.get(b"staked", 0)),
        bets=int(raw.get(b"bets", 0)),
        returns=returns,
    )


@dataclass(frozen=True)
class MarketNames:
    """What the desk's frames name a market by (from the markets table's definition)."""

    sport: str = ""
    event: str = ""
    market: str = ""
    in_play: bool = False
    selections: tuple[tuple[int, str], ...] = ()

    def selection(self, selection_id: int) -> str:
        return dict(self.selections).get(selection_id, "")


def names_of(definition: MarketDefinition | None) -> MarketNames:
    if definition is None:
        return MarketNames()
    return MarketNames(
        sport=definition.sport,
        event=definition.event_name,
        market=definition.name,
        in_play=definition.event_status == "in_play",
        selections=tuple(definition.selections),
    )


def ticker_frame(event: BetEvent, *, names: dict[int, MarketNames], reducer_ts: int) -> DeskBetFrame:
    """The ``desk.bet`` frame of one counted bet event; ``names``: market id → its names."""
    legs: list[DeskBetLeg] = []
    for leg in event.legs:
        named = names.get(leg.market_id, MarketNames())
        legs.append(
            {
                "market_id": leg.market_id,
                "selection_id": leg.selection_id,
                "event_id": leg.event_id,
                "price": str(leg.price),
                "sport": named.sport,
                "event": named.event,
                "market": named.market,
                "selection": named.selection(leg.selection_id),
                "in_play": named.in_play,
            }
        )
    return {
        "type": "desk.bet",
        "v": PROTOCOL_VERSION,
        "id": event.event_id,
        "bet_id": event.bet_id,
        "kind": event.type,
        "user_id": event.user_id,
        "stake": str(event.stake),
        "potential_return": str(event.potential_return),
        "legs": legs,
        "ts": event.ts,
        "reducer_ts": reducer_ts,
    }


def market_book_frame(book: MarketBook, *, names: MarketNames, event_worst: int) -> DeskMarketBook:
    """A market's figures as the ``desk.liability`` frame and the risk view carry them: every
    selection the markets table names (and any other that returns something), with its P/L."""
    selection_ids = [s for s, _ in names.selections]
    selection_ids += [s for s, _ in book.returns if s not in selection_ids]
    return {
        "market_id": book.market_id,
        "event_id": book.event_id,
        "sport": names.sport,
        "event": names.event,
        "market": names.market,
        "in_play": names.in_play,
        "staked": book.staked,
        "bets": book.bets,
        "outcomes": [{"selection_id": s, "name": names.selection(s), "pl": book.pl(s)} for s in selection_ids],
        "worst": book.worst,
        "worst_selection": book.worst_selection,
        "event_worst": event_worst,
    }


def liability_frame(markets: list[DeskMarketBook], *, ts: int) -> DeskLiabilityFrame:
    return {"type": "desk.liability", "v": PROTOCOL_VERSION, "markets": markets, "ts": ts}
