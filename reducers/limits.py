"""A punter's limits on their own money, declared once: what they limit, over which rolling
periods, how a change takes effect and what a limit leaves.

Three kinds, each per rolling day, week and month (the last 24 hours, 7 days, 30 days):

- **deposit**: money deposited in the window;
- **wager**: stakes placed in the window (the ledger's ``stake`` entries);
- **loss**: net loss in the window, the stakes placed minus everything bets paid back into the
  wallet in it (``payout``, ``refund`` and ``cash_out`` entries). Winnings in the window offset
  stakes; an open bet's stake counts as lost until it pays something back. A corrected result's
  entries (``resettle``, docs/resettlement.md) count by the way they move the wallet: what it
  pays in is paid back, what it claws back is paid back less (a loss again), a stake held again
  moves nothing.

A bet is taken only if, for every bet limit, what the window has used plus the bet's stake
stays within the limit (exactly at the limit is within). The placement statement
(odds/betting/sql/sb_bet_place.v5.sql) enforces this rule for every way a bet arrives; the
functions here are the same rule for the pages and the messages, and its unit-tested statement.

A lower limit (or a first one) applies at once; a higher one only after the cooling-off period
(24 hours): until then the current limit applies and the raise waits.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from enum import StrEnum

from reducers.money import money_text

ZERO = Decimal("0.00")


class LimitKind(StrEnum):
    DEPOSIT = "deposit"
    LOSS = "loss"
    WAGER = "wager"


class Period(StrEnum):
    DAY = "day"
    WEEK = "week"
    MONTH = "month"


KINDS: tuple[str, ...] = tuple(LimitKind)

# The rolling window each period counts over (sb_bet_place.v5.sql spells the same lengths).
PERIOD_LENGTHS: dict[str, timedelta] = {
    Period.DAY: timedelta(days=1),
    Period.WEEK: timedelta(days=7),
    Period.MONTH: timedelta(days=30),
}
PERIOD_LABELS: dict[str, str] = {Period.DAY: "Daily", Period.WEEK: "Weekly", Period.MONTH: "Monthly"}
KIND_LABELS: dict[str, str] = {LimitKind.DEPOSIT: "Deposit", LimitKind.LOSS: "Loss", LimitKind.WAGER: "Wager"}
# The kinds the placement statement enforces (a wallet with one of them has ``bet_limits`` set).
BET_KINDS: tuple[str, ...] = (LimitKind.LOSS, LimitKind.WAGER)
# The refusal code of a bet or deposit over a limit of each kind.
REFUSAL_CODES: dict[str, str] = {kind: f"over_{kind}_limit" for kind in LimitKind}

# The ledger entries a bet limit counts: the stake taken (less the part of it a trader's lower
# offer gave back: docs/referral.md), and what bets paid back into the wallet.
STAKE_ENTRY = "stake"
STAKE_RETURN_ENTRY = "stake_return"
RETURN_ENTRIES: tuple[str, ...] = ("payout", "refund", "cash_out")
# A resettlement's entries: paid back when they credit the wallet, less when they debit it.
RESETTLE_ENTRY = "resettle"


@dataclass(frozen=True)
class LimitTerms:
    """A limit as stored: ``amount`` applies; a raise to ``pending_amount`` waits until
    ``pending_from``."""

    amount: Decimal
    pending_amount: Decimal | None = None
    pending_from: datetime | None = None


def terms_at(terms: LimitTerms, *, now: datetime) -> LimitTerms:
    """The terms as they apply at ``now``: a raise whose cooling-off has ended is the limit."""
    if terms.pending_amount is not None and terms.pending_from is not None and terms.pending_from <= now:
        return LimitTerms(amount=terms.pending_amount)
    return terms


class Change(StrEnum):
    SET = "set"  # a first limit of its kind and period, in force at once
    LOWERED = "lowered"  # lower than (or as) the current one: in force at once, any waiting raise dropped
    RAISE_WAITS = "raise_waits"  # higher: the current one applies until the cooling-off ends


@dataclass(frozen=True)
class LimitChange:
    terms: LimitTerms
    change: Change


def limit_change(*, current: LimitTerms | None, amount: Decimal, now: datetime, cooling_off: timedelta) -> LimitChange:
    """What setting a limit to ``amount`` at ``now`` does to the ``current`` terms (None: no limit yet)."""
    if current is None:
        return LimitChange(LimitTerms(amount=amount), Change.SET)
    current = terms_at(current, now=now)
    if amount <= current.amount:
        return LimitChange(LimitTerms(amount=amount), Change.LOWERED)
    if current.pending_amount == amount and current.pending_from is not None:
        # The same raise asked again keeps its place: the cooling-off does not start over.
        return LimitChange(current, Change.RAISE_WAITS)
    return LimitChange(
        LimitTerms(amount=current.amount, pending_amount=amount, pending_from=now + cooling_off), Change.RAISE_WAITS
    )


@dataclass(frozen=True)
class Window:
    """What a rolling window holds of the ledger entries a limit counts."""

    counted: Decimal  # deposits (deposit limits) or stakes (bet limits) in the window
    returned: Decimal = ZERO  # what bets paid back into the wallet in the window
    first_at: datetime | None = None  # when the oldest counted entry was posted


def used(*, kind: str, window: Window) -> Decimal:
    """What the window has used of a limit of ``kind``: a loss limit nets what bets paid back
    (negative after winnings), the others count every entry."""
    if kind == LimitKind.LOSS:
        return window.counted - window.returned
    return window.counted


def left(*, kind: str, amount: Decimal, window: Window) -> Decimal:
    """What may still be deposited or staked now within the limit (never below zero)."""
    return max(ZERO, amount - used(kind=kind, window=window))


@dataclass(frozen=True)
class Breach:
    """A deposit or stake over a limit: which one, what is left of it and when it next frees room
    (None: the amount is above the limit itself and never fits)."""

    kind: str
    period: str
    amount: Decimal
    left: Decimal
    resets_at: datetime | None

    @property
    def code(self) -> str:
        return REFUSAL_CODES[self.kind]


def breach_of(*, kind: str, period: str, amount: Decimal, window: Window, more: Decimal) -> Breach | None:
    """Whether ``more`` (a deposit or a stake) breaks the limit: allowed while used + more stays
    within ``amount``. The window next frees room when its oldest counted entry leaves it."""
    if used(kind=kind, window=window) + more <= amount:
        return None
    resets_at = None
    if more <= amount and window.first_at is not None:
        resets_at = window.first_at + PERIOD_LENGTHS[period]
    return Breach(
        kind=kind, period=period, amount=amount, left=left(kind=kind, amount=amount, window=window), resets_at=resets_at
    )


def breach_reported(breaches: Iterable[Breach]) -> Breach | None:
    """The breach to tell the punter about when several limits refuse: the one that frees room
    last (an amount above a limit, which never fits, first), so the time given is when the
    amount can be tried again; among equals the first given."""
    chosen: Breach | None = None
    for breach in breaches:
        if chosen is None or _later(breach, chosen):
            chosen = breach
    return chosen


def _later(breach: Breach, than: Breach) -> bool:
    if than.resets_at is None:
        return False
    return breach.resets_at is None or breach.resets_at > than.resets_at


EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def epoch_ms(at: datetime) -> int:
    """Milliseconds since the epoch, exactly (no float on the way), as the API gives times."""
    return (at - EPOCH) // timedelta(milliseconds=1)


def when_text(at: datetime) -> str:
    """An instant as refusals show it: ``23 Nov 2026, 18:40 UTC``."""
    return at.astimezone(UTC).strftime("%-d %b %Y, %H:%M UTC")


def limit_name(*, kind: str, period: str) -> str:
    """``daily loss limit``."""
    return f"{PERIOD_LABELS[period].lower()} {kind} limit"


def breach_message(breach: Breach, *, currency: str) -> str:
    """The refusal in the punter's words: which limit, what is left and when it frees room."""
    name = limit_name(kind=breach.kind, period=breach.period)
    limit = money_text(breach.amount, currency)
    noun, verb = ("deposit", "deposit") if breach.kind == LimitKind.DEPOSIT else ("bet", "stake")
    more = f"you can {verb} {money_text(breach.left, currency)} more now"
    if breach.resets_at is None:
        # Above the limit itself: no wait makes it fit.
        return f"This {noun} is above your {name} of {limit}: {more}."
    frees = when_text(breach.resets_at)
    return f"This {noun} is over your {name} of {limit}: {more}, and the limit frees up from {frees}."


def change_notice(*, kind: str, period: str, change: LimitChange, currency: str) -> tuple[str, str]:
    """The subject and text of the mail that tells a punter their limit changed."""
    name = limit_name(kind=kind, period=period)
    terms = change.terms
    now_text = f"Your {name} is {money_text(terms.amount, currency)}, in force now."
    if change.change == Change.RAISE_WAITS:
        assert terms.pending_amount is not None
        assert terms.pending_from is not None
        return (
            f"Your {name} rises on {when_text(terms.pending_from)}",
            f"You asked to raise your {name} to {money_text(terms.pending_amount, currency)}. A higher limit"
            f" applies only after a cooling-off period: from {when_text(terms.pending_from)}."
            f" Until then your {name} stays {money_text(terms.amount, currency)}.\n\n"
            "If you did not ask for this, sign in and set the limit again: a lower limit applies at once.\n",
        )
    verb = "set" if change.change == Change.SET else "lowered"
    return (
        f"Your {name} is {verb}",
        f"{now_text}\n\nA lower limit applies at once; a higher one only after a cooling-off period.\n",
    )
