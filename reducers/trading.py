"""Trading desk rules over plain values (no framework): the fat-finger check of a price override,
a market's margin as a trader sets it, and customers' stake limits with referral."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import ROUND_DOWN, Decimal


def price_change_ratio(*, current: Decimal, new: Decimal) -> Decimal:
    """How many times larger the larger of two prices is than the smaller (1 when equal)."""
    if current <= 0 or new <= 0:
        raise ValueError("prices are positive")
    return max(new / current, current / new)


def price_change_needs_confirmation(*, current: Decimal, new: Decimal, ratio: Decimal) -> bool:
    """A trader's new price more than ``ratio`` times the current one, or less than the current one
    divided by ``ratio`` (3.35 → 33.50 at a ratio of 3), is applied only once confirmed."""
    return price_change_ratio(current=current, new=new) > ratio


# A market's margin (the book's overround less one: 0.05 is a book of 105 %) as traders may set it.
# Beyond a quarter the prices stop looking like a price; none at all is a fair book.
MARGIN_MIN = Decimal("0")
MARGIN_MAX = Decimal("0.25")
MARGIN_REFUSED = (
    "a margin is a percentage from 0 to 25 with at most two decimals (e.g. 5 or 6.25), or empty for the default"
)


def margin_from_percent(text: str) -> Decimal | None:
    """A trader's margin typed as a percentage ("5", "6.25", "5 %") → the fraction (0.0625);
    empty → ``None`` (the market follows the pricing model's default). Raises ``ValueError`` with
    ``MARGIN_REFUSED`` for anything else."""
    raw = text.strip().removesuffix("%").strip()
    if not raw:
        return None
    if len(raw) > 6 or not all(c.isdigit() or c == "." for c in raw) or raw.count(".") > 1 or raw in (".",):
        raise ValueError(MARGIN_REFUSED)
    percent = Decimal(raw)
    exponent = percent.as_tuple().exponent
    if isinstance(exponent, int) and exponent < -2:
        raise ValueError(MARGIN_REFUSED)
    return margin_checked(percent / 100)


def margin_checked(margin: Decimal) -> Decimal:
    """``margin`` when traders may set it (``MARGIN_MIN`` to ``MARGIN_MAX``), else ``ValueError``
    with ``MARGIN_REFUSED``."""
    if not MARGIN_MIN <= margin <= MARGIN_MAX:
        raise ValueError(MARGIN_REFUSED)
    return margin


# --- customer limits and referral (docs/referral.md) ------------------------------------------
#
# A trader gives a customer a stake factor (0.1: a tenth of the market's maximum stake, the book's
# ``rules.MAX_STAKE``) and, per sport, a largest stake. A bet whose stake is above the customer's
# limit on it (the smallest of the factor's stake and the limits of its legs' sports) is not
# refused: it is referred to a trader, who accepts or declines it within ``REFERRAL_WINDOW_S``; no
# answer declines it. The stake is held meanwhile, as for a bet the in-play delay holds.

STAKE_FACTOR_MIN = Decimal("0.001")
STAKE_FACTOR_MAX = Decimal("1")
STAKE_FACTOR_PLACES = 3
STAKE_FACTOR_REFUSED = (
    "a stake factor is a decimal from 0.001 to 1 with at most three decimals (0.1 is a tenth), or empty"
)
SPORT_LIMIT_REFUSED = "a sport's stake limit is an amount in pence above 0 and at most the maximum stake, or empty"


def stake_factor_from_text(text: str) -> Decimal | None:
    """A trader's stake factor as typed ("0.1", "0.25") → the decimal; empty → ``None`` (no
    factor: the customer may stake up to the market's maximum). ``ValueError`` with
    ``STAKE_FACTOR_REFUSED`` for anything else."""
    raw = text.strip()
    if not raw:
        return None
    if len(raw) > 8 or not all(c.isdigit() or c == "." for c in raw) or raw.count(".") > 1 or raw == ".":
        raise ValueError(STAKE_FACTOR_REFUSED)
    factor = Decimal(raw)
    exponent = factor.as_tuple().exponent
    if isinstance(exponent, int) and exponent < -STAKE_FACTOR_PLACES:
        raise ValueError(STAKE_FACTOR_REFUSED)
    if not STAKE_FACTOR_MIN <= factor <= STAKE_FACTOR_MAX:
        raise ValueError(STAKE_FACTOR_REFUSED)
    return factor


def sport_limit_checked(amount: Decimal, *, max_stake: Decimal) -> Decimal:
    """A per-sport stake limit: pence, above 0, at most ``max_stake``; else ``ValueError``."""
    exponent = amount.as_tuple().exponent
    if not amount.is_finite() or (isinstance(exponent, int) and exponent < -2) or not 0 < amount <= max_stake:
        raise ValueError(SPORT_LIMIT_REFUSED)
    return amount.quantize(Decimal("0.01"))


def customer_stake_limit(
    *, max_stake: Decimal, factor: Decimal | None, sport_limits: Iterable[Decimal]
) -> Decimal | None:
    """The largest stake a customer may place without a referral: the factor's share of the
    market's maximum stake (rounded down to the penny) and each of the bet's sports' limits,
    whichever is smallest; ``None`` when the customer has neither."""
    limits = [*sport_limits]
    if factor is not None:
        limits.append((max_stake * factor).quantize(Decimal("0.01"), rounding=ROUND_DOWN))
    return min(limits) if limits else None


def is_referred(*, stake: Decimal, limit: Decimal | None) -> bool:
    """Whether a bet of ``stake`` goes to a trader (above the customer's limit)."""
    return limit is not None and stake > limit


def referral_reason(*, stake: Decimal, limit: Decimal, currency: str) -> str:
    """What the ticker and the trader read about a referred bet (the placement statement writes
    the same words: tests/integration/betting/test_referrals.py compares them)."""
    return f"stake {stake} {currency} above the customer's limit of {limit} {currency}"


# How long a trader has to answer a referred bet; no answer declines it.
REFERRAL_WINDOW_S = 60


# --- a trader's counter-offer on a referred bet (docs/referral.md) -----------------------------
#
# Instead of accepting or declining a referred bet, a trader may offer a lower stake or, on a
# single, another price; the punter takes or turns down the offer within ``OFFER_WINDOW_S`` (no
# answer turns it down). The part of the held stake a lower offer leaves is given back when the
# punter takes it.

OFFER_WINDOW_S = 30
OFFER_REFUSED = (
    "an offer is a lower stake (in pence, at least the minimum stake) or, on a single, another price "
    "(decimal odds with at most two decimals), or both"
)


@dataclass(frozen=True)
class Offer:
    """A counter-offer: the stake, the single's new price (None: the prices taken) and what the
    bet returns on it."""

    stake: Decimal
    price: Decimal | None
    potential_return: Decimal


def offer_checked(
    *,
    stake: Decimal | None,
    price: Decimal | None,
    bet_stake: Decimal,
    leg_prices: Sequence[Decimal],
    min_stake: Decimal,
    min_price: Decimal,
    max_price: Decimal,
) -> Offer:
    """A trader's counter-offer on a bet of ``bet_stake`` at ``leg_prices``: ``stake`` below the
    bet's and at least ``min_stake`` (None: the bet's own), ``price`` another price for a single's
    leg (None: the prices taken; an accumulator's prices are never changed). Its return is the
    stake times the prices, rounded down to the penny, as placement rounds one. ``ValueError``
    with ``OFFER_REFUSED`` when it offers nothing or is out of bounds."""
    if stake is None and price is None:
        raise ValueError(OFFER_REFUSED)
    if stake is not None and (not _pence(stake) or not min_stake <= stake < bet_stake):
        raise ValueError(OFFER_REFUSED)
    if price is not None and (
        len(leg_prices) != 1 or not _pence(price) or not min_price <= price <= max_price or price == leg_prices[0]
    ):
        raise ValueError(OFFER_REFUSED)
    offered = (stake if stake is not None else bet_stake).quantize(Decimal("0.01"))
    product = Decimal(1)
    for leg_price in [price] if price is not None else leg_prices:
        product *= leg_price
    return Offer(
        stake=offered,
        price=price.quantize(Decimal("0.01")) if price is not None else None,
        potential_return=(offered * product).quantize(Decimal("0.01"), rounding=ROUND_DOWN),
    )


def _pence(amount: Decimal) -> bool:
    """A finite decimal of at most two places."""
    exponent = amount.as_tuple().exponent
    return amount.is_finite() and isinstance(exponent, int) and exponent >= -2
