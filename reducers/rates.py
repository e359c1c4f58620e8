"""Exchange rates into the book's currency, and the one rounding rule that converts money with them.

The operator sets, for each currency a wallet may hold, what one unit of it is worth in the book's
currency (``reducers.rules.BOOK_CURRENCY``, whose own rate is 1). The trading desk keeps every
wallet's amounts exactly, per currency, in integer pence of that currency, and converts them only
when it shows or ranks them, at the rate in force then (docs/liability.md).

A rate travels as an integer number of millionths (``RATE_SCALE``): ``Decimal("0.853")`` is
``853000``. The conversion of ``pence`` at ``units`` millionths is::

    floor((pence * units + RATE_SCALE / 2) / RATE_SCALE)

that is, the exact product rounded to the nearest penny, a half penny up (towards plus
infinity: 0.5p → 1p, -0.5p → 0p). Python does it in integers here; the Lua scripts of
``store.liability`` do the same in Redis's doubles, split so that every intermediate stays an exact
integer (``LUA_TO_BOOK``), and a test checks the two agree.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal

from reducers.rules import BOOK_CURRENCY, CURRENCY_SYMBOLS

RATE_SCALE = 1_000_000
# The places a rate is set to: one millionth of the book's currency per unit.
RATE_PLACES = 6
# Bounds an operator's rate must lie within: a typo of a factor of a thousand is refused, and
# every rate keeps ``pence * units`` within what Redis's Lua counts exactly for any book.
MIN_RATE = Decimal("0.001")
MAX_RATE = Decimal("1000")

# The rates a fresh install converts at until the operator sets the real ones on the desk's rates
# page (written after each migrate where a currency has none: odds.trading.apps).
DEFAULT_RATES: dict[str, Decimal] = {"EUR": Decimal("0.85"), "USD": Decimal("0.79")}

# Currency → millionths of the book's currency per unit.
Rates = Mapping[str, int]


class RateRefused(ValueError):
    """A rate that cannot be set; the message says why, in words for the operator."""


def rate_check(*, currency: str, rate: Decimal) -> Decimal:
    """The rate as it is kept (six places), or ``RateRefused``: an unknown currency, the book's own
    currency (always 1), a rate that is not a finite positive number within the bounds or has more
    than six decimal places."""
    if currency not in CURRENCY_SYMBOLS:
        raise RateRefused(f"{currency[:8]!r} is not a currency a wallet may hold ({', '.join(CURRENCY_SYMBOLS)})")
    if currency == BOOK_CURRENCY:
        raise RateRefused(f"{BOOK_CURRENCY} is the book's currency: its rate is always 1")
    if not rate.is_finite() or rate <= 0:
        raise RateRefused("a rate is a positive number, such as 0.85")
    exponent = rate.as_tuple().exponent
    if isinstance(exponent, int) and exponent < -RATE_PLACES:
        raise RateRefused(f"a rate has at most {RATE_PLACES} decimal places")
    if not MIN_RATE <= rate <= MAX_RATE:
        raise RateRefused(f"a rate lies between {MIN_RATE} and {MAX_RATE} {BOOK_CURRENCY} per unit")
    return rate.quantize(Decimal(1).scaleb(-RATE_PLACES))


def rate_units(rate: Decimal) -> int:
    """A rate as the integer millionths Redis keeps: ``Decimal("0.85")`` → ``850000``."""
    return int((rate * RATE_SCALE).to_integral_value())


def rate_of(rates: Rates, currency: str) -> int:
    """``currency``'s rate in millionths: the book's currency is 1; a currency with no rate set
    counts at par (never the case once the rates are mirrored: the default rates are seeded)."""
    if currency == BOOK_CURRENCY:
        return RATE_SCALE
    return rates.get(currency, RATE_SCALE)


def to_book(pence: int, *, units: int) -> int:
    """``pence`` of a currency worth ``units`` millionths each, in book pence (the rounding rule above)."""
    return (pence * units + RATE_SCALE // 2) // RATE_SCALE


def in_book(amounts: Mapping[str, int] | tuple[tuple[str, int], ...], rates: Rates) -> int:
    """Exact per-currency pence, each converted on its own and added up, in book pence."""
    items = amounts.items() if isinstance(amounts, Mapping) else amounts
    return sum(to_book(pence, units=rate_of(rates, currency)) for currency, pence in items)


def book_amount(amount: Decimal, *, currency: str, rates: Rates) -> Decimal:
    """An amount of ``currency`` (pounds and pence) in the book's currency, to the penny."""
    pence = to_book(int(amount * 100), units=rate_of(rates, currency))
    return Decimal(pence).scaleb(-2)


def rates_from_hash(raw: Mapping[bytes, bytes]) -> dict[str, int]:
    """The rates as ``keys.exchange_rates`` holds them (currency → millionths)."""
    return {k.decode(): int(v) for k, v in raw.items()}


# The Lua of the rule above, for the store's scripts: ``to_book(pence, units)`` and ``rate_of(rates,
# currency)`` over a table of the rates hash. Redis's Lua numbers are doubles: the product is split
# at a million pence so each part is an exact integer while ``pence * units / 10^6 < 2^53``.
LUA_TO_BOOK = f"""
local SCALE = {RATE_SCALE}
local function to_book(pence, units)
  local hi = math.floor(pence / SCALE)
  local lo = pence - hi * SCALE
  return hi * units + math.floor((lo * units + SCALE / 2) / SCALE)
end
local function rates_table(key)
  local raw, t = redis.call('HGETALL', key), {{}}
  for i = 1, #raw, 2 do t[raw[i]] = tonumber(raw[i + 1]) end
  return t
end
local BOOK = '{BOOK_CURRENCY}'
local function rate_of(rates, currency)
  if currency == BOOK then return SCALE end
  return rates[currency] or SCALE
end
"""
