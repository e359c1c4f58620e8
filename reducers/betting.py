"""Bet maths on Decimals: combined odds, returns, cash-out. Shared by the API and the reducers.

Every result is exact to the penny: the arithmetic runs in its own decimal contexts, sized for
the largest bet any caller can pass (see ``PRECISION``), never in the thread's default context
of 28 digits. The only rounding is the documented one to two places; an amount beyond the
bound raises ``BetMathsError`` rather than being rounded anywhere else.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import (
    MAX_EMAX,
    MIN_EMIN,
    ROUND_DOWN,
    ROUND_HALF_UP,
    Context,
    Decimal,
    DecimalException,
    DivisionByZero,
    Inexact,
    InvalidOperation,
    Overflow,
    localcontext,
)
from typing import Any

from reducers.rules import MAX_LEGS, ODDS_PLACES, PENNY, SLIP_VIEW_MAX_STAKE
from reducers.schemas import MAX_PRICE

# The book keeps this share of a cash-out's fair value (the cash-out margin).
CASH_OUT_MARGIN = Decimal("0.05")


def _coefficient(amount: Decimal) -> int:
    """The integer digits of ``amount`` written to two places: 1000 → 100000."""
    return int(amount.scaleb(2))


# Digits of the exact product of the largest stake and MAX_LEGS of the largest prices, each at
# two places: 100000.00 * 1000.00 ** 20 has the coefficient 10**7 * (10**5)**20 = 10**107, so 108
# digits. Every product of prices the schemas admit (at most two places, at most MAX_PRICE) is
# exact in this context, and so is every return of a stake in pennies up to SLIP_VIEW_MAX_STAKE (a
# placed bet's is smaller). The default context (28 digits) failed at ten legs of 500.00.
PRECISION = len(str(_coefficient(SLIP_VIEW_MAX_STAKE) * _coefficient(MAX_PRICE) ** MAX_LEGS))

# Products of prices must be exact: a result that would need rounding is an error.
_EXACT = Context(
    prec=PRECISION,
    rounding=ROUND_DOWN,
    Emax=MAX_EMAX,
    Emin=MIN_EMIN,
    traps=[InvalidOperation, DivisionByZero, Overflow, Inexact],
)
# The rounding to two places happens here, and so may one operation just before a round-down to
# the penny (a stake with sub-penny digits times the prices, a cash-out's division): truncating
# toward zero at ``PRECISION`` digits and then to the penny gives the penny of the exact value,
# since the first cut is the finer one. A quantize needing more digits than that still raises.
_ROUNDED = _EXACT.copy()
_ROUNDED.traps[Inexact] = False


class BetMathsError(ArithmeticError):
    """An amount the maths cannot compute exactly to the penny (more digits than ``PRECISION``,
    or not a finite number): callers report it instead of showing a guess."""


def _product(prices: Iterable[Decimal]) -> Decimal:
    """The exact product of the prices (run inside ``_EXACT``)."""
    result = Decimal(1)
    for price in prices:
        if not price.is_finite():
            raise BetMathsError(f"not a finite price: {price}")
        result *= price
    return result


def combined_odds(prices: Iterable[Decimal]) -> Decimal:
    """Accumulator odds: the product of the legs' decimal prices, to two places (half up)."""
    try:
        with localcontext(_EXACT):
            odds = _product(prices)
        with localcontext(_ROUNDED):
            return odds.quantize(ODDS_PLACES, rounding=ROUND_HALF_UP)
    except DecimalException as exc:
        raise BetMathsError(f"combined odds not exact: {exc!r}") from exc


def potential_return(*, stake: Decimal, prices: Iterable[Decimal]) -> Decimal:
    """Stake times the product of the prices, rounded down to the penny (never overpay)."""
    if not stake.is_finite():
        raise BetMathsError(f"not a finite stake: {stake}")
    try:
        with localcontext(_EXACT):
            odds = _product(prices)
        with localcontext(_ROUNDED):
            return (stake * odds).quantize(PENNY, rounding=ROUND_DOWN)
    except DecimalException as exc:
        raise BetMathsError(f"potential return not exact: {exc!r}") from exc


def cash_out_value(*, stake: Decimal, accepted: Iterable[Decimal], current: Iterable[Decimal]) -> Decimal:
    """What the book pays now to close a bet, from the prices accepted and the live prices.

    Fair value is the potential return divided by the live odds of the legs (pass 1.00 as the
    current price of a leg already won). The book keeps ``CASH_OUT_MARGIN`` of it; the
    result is rounded down to the penny and is never negative.
    """
    ret = potential_return(stake=stake, prices=accepted)
    try:
        with localcontext(_EXACT):
            live = _product(current)
            kept = ret * (Decimal(1) - CASH_OUT_MARGIN)
        with localcontext(_ROUNDED):
            value = (kept / live).quantize(PENNY, rounding=ROUND_DOWN)
    except DecimalException as exc:
        raise BetMathsError(f"cash-out value not exact: {exc!r}") from exc
    return value if value > 0 else Decimal("0.00")


# --- acceptance, settlement and cash-out of whole bets (plain data in, plain data out) ---

PRICE_POLICIES = ("none", "any", "better")
# How far a cash-out quote may have moved from the one the punter confirmed: ``exact`` only that
# quote, ``better`` (the default) that quote or a higher one, ``any`` whatever the quote is now.
CASH_OUT_POLICIES = ("exact", "better", "any")
CASH_OUT_POLICY_DEFAULT = "better"
UNDECIDED = "undecided"
LEG_RESULTS = (UNDECIDED, "won", "lost", "void")
VOID_PRICE = Decimal("1.00")


# The moves of the price (the sign of current - seen) each policy accepts: ``none`` only the
# price seen, ``better`` that or a higher one (a higher decimal price pays the punter more),
# ``any`` every change. Placement passes the policy's moves to ``sb_bet_place`` as they are here.
PRICE_POLICY_MOVES: dict[str, tuple[int, ...]] = {"none": (0,), "any": (-1, 0, 1), "better": (0, 1)}


def price_moves(policy: str) -> tuple[int, ...]:
    """The price moves ``policy`` accepts (see ``PRICE_POLICY_MOVES``)."""
    try:
        return PRICE_POLICY_MOVES[policy]
    except KeyError:
        raise ValueError(f"unknown price policy {policy!r}; expected one of {', '.join(PRICE_POLICIES)}") from None


def price_acceptable(*, seen: Decimal, current: Decimal, policy: str) -> bool:
    """Whether a leg may be accepted at ``current`` when the punter saw ``seen`` (``PRICE_POLICY_MOVES``)."""
    return (current > seen) - (current < seen) in price_moves(policy)


# --- whether a leg can be backed now ---

# The statuses the catalogue gives events, markets and selections (odds.catalogue.models), as
# the verdict reads them; any other market or selection status is not open for bets.
EVENT_STATUSES = ("scheduled", "in_play", "finished", "cancelled")
MARKET_STATUSES = ("open", "suspended", "closed", "settled")
SELECTION_STATUSES = ("active", "suspended", "removed")
# Why a leg cannot be backed: the bet's reject code and the message shown with it.
LEG_REFUSALS: dict[str, str] = {
    "market_suspended": "the market is suspended",
    "market_closed": "the market is closed",
    "selection_unavailable": "the selection is no longer available",
}
# What the live state (the reducers' or a trader's newer decision) says against a leg: one of
# the refusals, or that it is older than a bet may be priced at (``LIVE_STALE``).
LIVE_STALE = "prices_stale"
LIVE_REASONS = ("", *LEG_REFUSALS, LIVE_STALE)
STALE_MESSAGE = "the market is suspended while its live prices are not current"


@dataclass(frozen=True)
class LegVerdict:
    """Whether a leg can be backed now: ``code`` is empty when it can, else the reject code."""

    code: str = ""
    message: str = ""

    @property
    def backable(self) -> bool:
        return not self.code


BACKABLE = LegVerdict()


def leg_verdict(*, event_status: str, market_status: str, selection_status: str, live: str = "") -> LegVerdict:
    """Whether a leg can be backed, from the catalogue's statuses (the newest trader and lifecycle
    decisions: they come first) and the live state's reason (``LIVE_REASONS``).

    The one rule: placement (``sb_bet_place`` reads it from the table ``leg_verdicts_sync`` fills
    from this function), the in-play delay, cash-out quotes and the reducers' views all use it.
    A stale live state treats the market as suspended.
    """
    if event_status in ("finished", "cancelled"):
        code = "market_closed"
    elif market_status == "suspended":
        code = "market_suspended"
    elif market_status != "open":
        code = "market_closed"
    elif selection_status != "active":
        code = "selection_unavailable"
    elif live == LIVE_STALE:
        return LegVerdict("market_suspended", STALE_MESSAGE)
    elif live:
        code = live
    else:
        return BACKABLE
    return LegVerdict(code, LEG_REFUSALS[code])


def leg_verdicts() -> list[tuple[str, str, str, str, LegVerdict]]:
    """The verdict of every combination of catalogue statuses and live reason, as the database's
    copy of the rule holds them (``event, market, selection, live, verdict``)."""
    return [
        (
            event,
            market,
            selection,
            live,
            leg_verdict(event_status=event, market_status=market, selection_status=selection, live=live),
        )
        for event in EVENT_STATUSES
        for market in MARKET_STATUSES
        for selection in SELECTION_STATUSES
        for live in LIVE_REASONS
    ]


@dataclass(frozen=True)
class LiveLeg:
    """What a market's live state says of one of its selections: its price (None when the state
    does not list it or lists no usable price), its status there, and the live reason
    (``LIVE_REASONS``) against backing it."""

    price: Decimal | None
    reason: str
    selection_status: str | None = None
    market_status: str = ""


NO_LIVE_STATE = LiveLeg(price=None, reason="")


def live_state_fresh(*, state: Mapping[str, Any], pipe_seen_ms: int, now_ms: int, max_age_ms: int) -> bool:
    """Whether a live state may still price a bet: it was applied (or decided by a trader) within
    ``max_age_ms``, or the price pipe has given a sign of life since (``pipe_seen_ms``: it would
    have applied a newer price). A state with no time of its own counts as old."""
    ts = state.get("ts")
    own = 0
    if isinstance(ts, Mapping):
        for name in ("reducer", "decided"):
            value = ts.get(name)
            if isinstance(value, int) and value > own:
                own = value
    return now_ms - max(own, pipe_seen_ms) <= max_age_ms


def live_leg(state: Mapping[str, Any] | None, selection_id: int, *, fresh: bool = True) -> LiveLeg:
    """The live state's word on one selection (``NO_LIVE_STATE`` without a state): its price and
    the reason it cannot be backed, by ``leg_verdict`` over the live statuses."""
    if state is None:
        return NO_LIVE_STATE
    found = _live_selection(state, selection_id)
    market_status = str(state.get("status", "open"))
    tradable = state.get("tradable", market_status == "open")
    verdict = leg_verdict(
        event_status="scheduled",
        market_status=market_status if tradable else "suspended",
        selection_status=found[1] if found is not None else "active",
    )
    reason = verdict.code if not verdict.backable else ("" if fresh else LIVE_STALE)
    return LiveLeg(
        price=found[0] if found is not None else None,
        reason=reason,
        selection_status=found[1] if found is not None else None,
        market_status=market_status,
    )


def _live_selection(state: Mapping[str, Any], selection_id: int) -> tuple[Decimal, str] | None:
    for item in state.get("selections", ()):
        if isinstance(item, Mapping) and item.get("id") == selection_id:
            try:
                price = Decimal(str(item["price"]))
            except (KeyError, InvalidOperation):
                return None
            if not price.is_finite():
                return None
            return price, str(item.get("status", "active"))
    return None


def cash_out_acceptable(*, seen: Decimal, current: Decimal, policy: str) -> bool:
    """Whether a cash-out confirmed at ``seen`` may be paid at ``current`` under ``policy``."""
    if policy == "exact":
        return current == seen
    if policy == "better":
        return current >= seen
    if policy == "any":
        return True
    raise ValueError(f"unknown cash-out policy {policy!r}; expected one of {', '.join(CASH_OUT_POLICIES)}")


def settle_outcome(*, stake: Decimal, legs: Iterable[tuple[str, Decimal]]) -> tuple[str, Decimal] | None:
    """Outcome of a bet from its legs' ``(result, accepted price)``: ``(status, payout)``.

    A bet with any lost leg is lost (even while other legs are undecided). Otherwise it stays
    open (``None``) until every leg is decided. A void leg counts at price 1.00; a bet whose legs
    are all void is void and its stake is refunded. The payout is rounded down to the penny.
    """
    legs = list(legs)
    results = [result for result, _ in legs]
    unknown = set(results) - set(LEG_RESULTS)
    if unknown:
        raise ValueError(f"unknown leg results {sorted(unknown)}")
    if "lost" in results:
        return "lost", Decimal("0.00")
    if "undecided" in results:
        return None
    if all(result == "void" for result in results):
        return "void", stake.quantize(PENNY)
    prices = [price if result == "won" else VOID_PRICE for result, price in legs]
    return "won", potential_return(stake=stake, prices=prices)


def cash_out_offer(*, stake: Decimal, legs: Iterable[tuple[str, Decimal, Decimal | None]]) -> Decimal | None:
    """Cash-out quote from each leg's ``(result, accepted price, live price or None)``.

    ``None`` when no offer can be made: a leg is lost, or an undecided leg has no live price
    (its market is suspended or closed). Won legs count as settled (live price 1.00); void legs
    count at 1.00 on both sides.
    """
    accepted: list[Decimal] = []
    current: list[Decimal] = []
    for result, price, live in legs:
        if result == "lost":
            return None
        if result == "void":
            accepted.append(VOID_PRICE)
            current.append(VOID_PRICE)
        elif result == "won":
            accepted.append(price)
            current.append(VOID_PRICE)
        else:
            if live is None:
                return None
            accepted.append(price)
            current.append(live)
    return cash_out_value(stake=stake, accepted=accepted, current=current)
