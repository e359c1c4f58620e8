"""Liability per selection from bet events, with adder/subtractor semantics.

The book's liability on a selection is what it pays out, net of stakes, if that selection wins:
for every open bet containing the selection, ``potential_return - stake``. An accumulator counts
in full on each of its legs (the worst case for each). A placed bet adds its exposure; voided,
cashed-out and settled bets subtract it again. Amounts are integer pence of the bet's currency
(the wallet's), kept apart per currency so that a bet's subtraction cancels its addition exactly;
every figure the desk shows or ranks by is their sum converted into book pence at the operator's
current rates (``reducers.rates``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal

from reducers.frames import PROTOCOL_VERSION, DeskBetFrame, DeskBetLeg, DeskLiabilityFrame, DeskMarketBook
from reducers.rates import Rates, book_amount, in_book, rate_of, to_book
from reducers.rules import BOOK_CURRENCY
from reducers.schemas import BetEvent, MarketDefinition

PENCE = Decimal(100)
# How long the liability reducer remembers an event id it counted (de-duplication of redelivered
# events); longer than the bets topic keeps a record.
SEEN_TTL_S = 14 * 24 * 3600
# What each bet event type does to the books: a placed bet adds its exposure, a voided, cashed-out
# or settled one takes it away, and a settled bet a corrected result opens again (``reopened``,
# docs/resettlement.md) adds it back; a bet held by the in-play delay (``pending``), referred to a
# trader (``referred``), offered back (``offered``), refused (``rejected``) or resettled from one
# outcome to another (``resettled``) is on the ticker only.
BOOK_SIGN: dict[str, int] = {
    "placed": 1,
    "voided": -1,
    "cashed_out": -1,
    "settled": -1,
    "pending": 0,
    "referred": 0,
    "rejected": 0,
    "offered": 0,
    "reopened": 1,
    "resettled": 0,
}


@dataclass(frozen=True)
class LiabilityDelta:
    selection_id: int
    pence: int
    bets: int
    currency: str = BOOK_CURRENCY


def exposure_pence(event: BetEvent) -> int:
    return int((event.potential_return - event.stake) * PENCE)


def liability_deltas(event: BetEvent) -> list[LiabilityDelta]:
    """The change a bet event makes to each selection's liability (adder or subtractor), in
    pence of the bet's currency; none for an event that changes no book."""
    sign = BOOK_SIGN[event.type]
    if not sign:
        return []
    exposure = exposure_pence(event)
    seen: set[int] = set()
    deltas = []
    for leg in event.legs:
        if leg.selection_id in seen:
            continue
        seen.add(leg.selection_id)
        deltas.append(LiabilityDelta(leg.selection_id, sign * exposure, sign, event.currency))
    return deltas


@dataclass(frozen=True)
class SelectionTotal:
    """One selection's open exposure, exact per currency (currency → pence), and its open bets."""

    pence: tuple[tuple[str, int], ...] = ()
    bets: int = 0

    def in_book(self, rates: Rates) -> int:
        """The exposure in book pence at ``rates``."""
        return in_book(self.pence, rates)


def aggregate(events: list[BetEvent]) -> dict[int, SelectionTotal]:
    """Fold events into selection → its total; each event id counts once."""
    sums: dict[int, dict[str, int]] = {}
    bets: dict[int, int] = {}
    counted: set[str] = set()
    for event in events:
        if event.event_id in counted:
            continue
        counted.add(event.event_id)
        for delta in liability_deltas(event):
            by_currency = sums.setdefault(delta.selection_id, {})
            by_currency[delta.currency] = by_currency.get(delta.currency, 0) + delta.pence
            bets[delta.selection_id] = bets.get(delta.selection_id, 0) + delta.bets
    return {
        selection_id: SelectionTotal(tuple(sorted((c, p) for c, p in by_currency.items() if p)), bets[selection_id])
        for selection_id, by_currency in sums.items()
    }


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
    """The change one bet event makes to one market's book (signed pence of ``currency``, signed
    bet count)."""

    market_id: int
    event_id: int
    selection_id: int
    staked: int
    returns: int
    bets: int
    currency: str = BOOK_CURRENCY


def outcome_deltas(event: BetEvent) -> list[OutcomeDelta]:
    """The change a bet event makes to the book of each market it has a leg in: a placed bet adds
    its stake to the market and its return to the leg's selection; a voided, cashed-out or settled
    one takes them away again. In pence of the bet's currency; none for an event that changes no
    book."""
    sign = BOOK_SIGN[event.type]
    if not sign:
        return []
    staked = int(event.stake * PENCE) * sign
    returns = int(event.potential_return * PENCE) * sign
    deltas: dict[int, OutcomeDelta] = {}
    for leg in event.legs:
        if leg.market_id not in deltas:
            deltas[leg.market_id] = OutcomeDelta(
                leg.market_id, leg.event_id, leg.selection_id, staked, returns, sign, event.currency
            )
    return list(deltas.values())


@dataclass(frozen=True)
class MarketBook:
    """One market's book (``keys.market_book``), exact per currency: ``staked``, currency → pence
    staked; ``returns``, (selection, currency) → pence paid if that selection wins. What it shows
    is in book pence at some rates (``figures``)."""

    market_id: int
    event_id: int
    staked: tuple[tuple[str, int], ...] = ()
    bets: int = 0
    returns: tuple[tuple[int, str, int], ...] = ()

    def figures(self, rates: Rates) -> BookFigures:
        """The book in book pence at ``rates``: each outcome's P/L is, per currency, the stakes
        kept less what that outcome pays, each currency converted on its own and added up."""
        units = {currency: rate_of(rates, currency) for currency, _ in self.staked}
        units.update({currency: rate_of(rates, currency) for _, currency, _ in self.returns})
        staked = dict(self.staked)
        paid: dict[int, dict[str, int]] = {}
        for selection_id, currency, pence in self.returns:
            paid.setdefault(selection_id, {})[currency] = pence
        pls = tuple(
            (
                selection_id,
                sum(to_book(staked.get(c, 0) - by_currency.get(c, 0), units=units[c]) for c in units),
            )
            for selection_id, by_currency in sorted(paid.items())
        )
        return BookFigures(staked=in_book(self.staked, rates), pls=pls)


@dataclass(frozen=True)
class BookFigures:
    """A market's book in book pence: ``staked`` and the P/L of each selection that pays
    something (``pls``); an outcome that pays nothing keeps every stake (P/L ``staked``)."""

    staked: int
    pls: tuple[tuple[int, int], ...] = ()

    def pl(self, selection_id: int) -> int:
        """The book's profit (positive) or loss (negative) if ``selection_id`` wins."""
        return dict(self.pls).get(selection_id, self.staked)

    @property
    def worst(self) -> int:
        """The P/L of the worst outcome (``staked`` when no selection returns anything)."""
        return min((pl for _, pl in self.pls), default=self.staked)

    @property
    def worst_selection(self) -> int | None:
        """The selection whose win costs the book most (the lowest id of equals); None when none
        returns anything."""
        return min(self.pls, key=lambda item: (item[1], item[0]))[0] if self.pls else None


def book_apply(book: MarketBook, delta: OutcomeDelta) -> MarketBook:
    """The book after one delta (what ``store.liability``'s script does in Redis)."""
    staked = dict(book.staked)
    staked[delta.currency] = staked.get(delta.currency, 0) + delta.staked
    returns = {(s, c): r for s, c, r in book.returns}
    key = (delta.selection_id, delta.currency)
    returns[key] = returns.get(key, 0) + delta.returns
    return MarketBook(
        market_id=book.market_id,
        event_id=book.event_id,
        staked=tuple(sorted((c, p) for c, p in staked.items() if p != 0)),
        bets=book.bets + delta.bets,
        returns=tuple(sorted((s, c, r) for (s, c), r in returns.items() if r != 0)),
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


def event_worst(books: list[MarketBook], rates: Rates) -> int:
    """An event's worst case in book pence: the sum of its markets' worst P/L."""
    return sum(book.figures(rates).worst for book in books)


def book_from_hash(market_id: int, raw: Mapping[bytes, bytes]) -> MarketBook:
    """A market's book as ``keys.market_book`` holds it (an empty hash: no open bet). A book
    written before currencies (``staked``, ``r:<selection>``) is in the book's currency."""
    staked: dict[str, int] = {}
    returns: dict[tuple[int, str], int] = {}
    for name, value in raw.items():
        text, amount = name.decode(), int(value)
        if text == "staked" or text.startswith("s:"):
            currency = text[2:] if text.startswith("s:") else BOOK_CURRENCY
            staked[currency] = staked.get(currency, 0) + amount
        elif text.startswith("r:"):
            currency, _, selection_id = text[2:].rpartition(":")
            key = (int(selection_id), currency or BOOK_CURRENCY)
            returns[key] = returns.get(key, 0) + amount
    return MarketBook(
        market_id=market_id,
        event_id=int(raw.get(b"event", 0)),
        staked=tuple(sorted((c, p) for c, p in staked.items() if p)),
        bets=int(raw.get(b"bets", 0)),
        returns=tuple(sorted((s, c, r) for (s, c), r in returns.items() if r)),
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


def ticker_frame(event: BetEvent, *, names: dict[int, MarketNames], reducer_ts: int, rates: Rates) -> DeskBetFrame:
    """The ``desk.bet`` frame of one counted bet event; ``names``: market id → its names. The
    amounts are in the bet's currency, and in the book's at ``rates`` (those of when it was counted)."""
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
        "currency": event.currency,
        "stake": str(event.stake),
        "potential_return": str(event.potential_return),
        "book_stake": str(book_amount(event.stake, currency=event.currency, rates=rates)),
        "book_potential_return": str(book_amount(event.potential_return, currency=event.currency, rates=rates)),
        "legs": legs,
        "reason": event.reason,
        "until": event.until,
        "ts": event.ts,
        "reducer_ts": reducer_ts,
    }


def market_book_frame(book: MarketBook, *, names: MarketNames, event_worst: int, rates: Rates) -> DeskMarketBook:
    """A market's figures as the ``desk.liability`` frame and the risk view carry them, in book
    pence at ``rates``: every selection the markets table names (and any other that returns
    something), with its P/L."""
    figures = book.figures(rates)
    selection_ids = [s for s, _ in names.selections]
    selection_ids += [s for s, _ in figures.pls if s not in selection_ids]
    return {
        "market_id": book.market_id,
        "event_id": book.event_id,
        "sport": names.sport,
        "event": names.event,
        "market": names.market,
        "in_play": names.in_play,
        "staked": figures.staked,
        "bets": book.bets,
        "outcomes": [{"selection_id": s, "name": names.selection(s), "pl": figures.pl(s)} for s in selection_ids],
        "worst": figures.worst,
        "worst_selection": figures.worst_selection,
        "event_worst": event_worst,
    }


def market_book_frames(
    books: Mapping[int, MarketBook], *, names: Mapping[int, MarketNames], worsts: Mapping[int, int], rates: Rates
) -> list[DeskMarketBook]:
    """Each book's figures (``market_book_frame``) in market order; ``worsts``: event id → its
    worst case (a book whose event has none counts its own)."""
    return [
        market_book_frame(
            book,
            names=names.get(market_id, MarketNames()),
            event_worst=worsts.get(book.event_id, book.figures(rates).worst),
            rates=rates,
        )
        for market_id, book in sorted(books.items())
    ]


def liability_frame(markets: list[DeskMarketBook], *, ts: int) -> DeskLiabilityFrame:
    """The frame of the markets whose books moved (or whose figures a rate change moved), in
    book pence: ``currency`` names the book's currency."""
    return {"type": "desk.liability", "v": PROTOCOL_VERSION, "currency": BOOK_CURRENCY, "markets": markets, "ts": ts}
