"""Resettlement: what a corrected result moves for one bet (docs/resettlement.md).

A market resulted wrongly is resulted again. Every bet with a leg in it is judged anew from its
legs' corrected results; nothing already posted is edited: the difference between what the bet
paid and what it pays now is one compensating ledger entry. A cash-out is a contract of its own
and stands. An accumulator that lost only on the corrected leg and still has undecided legs is
open again, its stake held again, and settles when they are decided.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal

from reducers import betting

ZERO = Decimal("0.00")

# Bet statuses (``odds.betting.models.Bet.Status``' values).
ACCEPTED = "accepted"
WON = "won"
LOST = "lost"
VOID = "void"
CASHED_OUT = "cashed_out"
SETTLED = (WON, LOST, VOID)
# The statuses a resettlement looks at: settled bets, cashed-out ones (listed, never moved) and
# open accumulators whose leg in the market was decided by the first result.
AFFECTED = (ACCEPTED, WON, LOST, VOID, CASHED_OUT)

# What happens to a bet, in words a trader reads in the preview.
UNCHANGED = "unchanged"
CASH_OUT_STANDS = "cash-out stands"
PAID_MORE = "paid more"
CLAWED_BACK = "clawed back"
REOPENED = "open again"
SETTLED_NOW = "settled"


@dataclass(frozen=True)
class Move:
    """A bet's resettlement: its status and payout before and after (``None`` payout: open), the
    signed change of the punter's balance (positive: paid to the wallet), the stake held again
    (an accumulator open again) and what it means in words."""

    status_before: str
    payout_before: Decimal | None
    status_after: str
    payout_after: Decimal | None
    wallet: Decimal
    held: Decimal
    what: str

    @property
    def moves(self) -> bool:
        return bool(self.wallet) or bool(self.held) or self.status_after != self.status_before


def resettle_move(*, status: str, payout: Decimal | None, stake: Decimal, legs: Iterable[tuple[str, Decimal]]) -> Move:
    """The move of a bet of ``status`` that paid ``payout`` when its legs' results become
    ``legs`` (``(result, accepted price)`` each, the corrected ones included)."""
    if status not in AFFECTED:
        raise ValueError(f"a {status} bet is not resettled")
    outcome = betting.settle_outcome(stake=stake, legs=legs)
    if status == CASHED_OUT:
        return Move(status, payout, status, payout, ZERO, ZERO, CASH_OUT_STANDS)
    if status == ACCEPTED:
        # Open before: nothing was paid; a corrected leg that loses (or decides the last leg)
        # settles it now, as a first settlement does.
        if outcome is None:
            return Move(status, None, status, None, ZERO, ZERO, UNCHANGED)
        new_status, new_payout = outcome
        return Move(status, None, new_status, new_payout, new_payout, ZERO, SETTLED_NOW)
    paid = payout if payout is not None else ZERO
    if outcome is None:
        # Only a lost accumulator can be open again (a won or void bet had every leg decided):
        # it paid nothing, and its stake goes back from the house to the bets held.
        return Move(status, paid, ACCEPTED, None, ZERO, stake, REOPENED)
    new_status, new_payout = outcome
    delta = new_payout - paid
    what = UNCHANGED if not delta else PAID_MORE if delta > 0 else CLAWED_BACK
    return Move(status, paid, new_status, new_payout, delta, ZERO, what)


def recoverable(*, owed: Decimal, balance: Decimal) -> tuple[Decimal, Decimal]:
    """A claw-back of ``owed`` from a wallet holding ``balance``: what is taken now and what is
    left owing (a balance never goes below zero)."""
    taken = min(owed, max(balance, ZERO))
    return taken, owed - taken
