"""Liability per selection from bet events, with adder/subtractor semantics.

The book's liability on a selection is what it pays out, net of stakes, if that selection wins:
for every open bet containing the selection, ``potential_return - stake``. An accumulator counts
in full on each of its legs (the worst case for each). A placed bet adds its exposure; voided,
cashed-out and settled bets subtract it again. Amounts are integer pence.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from reducers.schemas import BetEvent

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
