"""Bet maths on Decimals: combined odds, returns, cash-out. Shared by the API and the reducers."""

from __future__ import annotations

from collections.abc import Iterable
from decimal import ROUND_DOWN, ROUND_HALF_UP, Decimal

PENNY = Decimal("0.01")
ODDS_PLACES = Decimal("0.01")
# The book keeps this share of a cash-out's fair value (the cash-out margin).
CASH_OUT_MARGIN = Decimal("0.05")


def combined_odds(prices: Iterable[Decimal]) -> Decimal:
    """Accumulator odds: the product of the legs' decimal prices, to two places."""
    result = Decimal(1)
    for price in prices:
        result *= price
    return result.quantize(ODDS_PLACES, rounding=ROUND_HALF_UP)


def potential_return(*, stake: Decimal, prices: Iterable[Decimal]) -> Decimal:
    """Stake times the product of the prices, rounded down to the penny (never overpay)."""
    result = stake
    for price in prices:
        result *= price
    return result.quantize(PENNY, rounding=ROUND_DOWN)


def cash_out_value(*, stake: Decimal, accepted: Iterable[Decimal], current: Iterable[Decimal]) -> Decimal:
    """What the book pays now to close a bet, from the prices accepted and the live prices.

    Fair value is the potential return divided by the live odds of the legs (pass 1.00 as the
    current price of a leg already won). The book keeps ``CASH_OUT_MARGIN`` of it; the
    result is rounded down to the penny and is never negative.
    """
    ret = potential_return(stake=stake, prices=accepted)
    live = Decimal(1)
    for price in current:
        live *= price
    value = ret / live * (Decimal(1) - CASH_OUT_MARGIN)
    return max(Decimal(0), value.quantize(PENNY, rounding=ROUND_DOWN))


# --- acceptance, settlement and cash-out of whole bets (plain data in, plain data out) ---

PRICE_POLICIES = ("none", "any", "better")
LEG_RESULTS = ("undecided", "won", "lost", "void")
VOID_PRICE = Decimal("1.00")


def price_acceptable(*, seen: Decimal, current: Decimal, policy: str) -> bool:
    """Whether a leg may be accepted at ``current`` when the punter saw ``seen``.

    ``none`` accepts only the price seen, ``any`` accepts every change, ``better`` accepts the
    price seen or a higher one (a higher decimal price pays the punter more).
    """
    if policy == "none":
        return current == seen
    if policy == "any":
        return True
    if policy == "better":
        return current >= seen
    raise ValueError(f"unknown price policy {policy!r}; expected one of {', '.join(PRICE_POLICIES)}")


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
