"""Reads of the exchange rates the operator sets: the current rate of each currency and the
history of changes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from odds.core.connections import redis_shared
from odds.trading.models import ExchangeRate
from reducers.rates import rate_units
from reducers.rules import BOOK_CURRENCY, CURRENCY_SYMBOLS
from store.liability import BookStore

RATE_HISTORY_SHOWN = 50


@dataclass(frozen=True)
class CurrentRate:
    """A currency's rate now: what one unit is worth in the book's currency, and who set it when
    (``set_at`` None for the book's own currency, whose rate is always 1, and for a currency no
    one has set a rate for yet)."""

    currency: str
    rate: Decimal | None
    set_by: str = ""
    set_at: datetime | None = None

    @property
    def fixed(self) -> bool:
        return self.currency == BOOK_CURRENCY


def exchange_rates_current() -> list[CurrentRate]:
    """Every currency a wallet may hold, the book's first, with its current rate."""
    latest = ExchangeRate.objects.order_by("currency", "-set_at", "-id").distinct("currency").select_related("set_by")
    found = {row.currency: row for row in latest}
    rates = [CurrentRate(BOOK_CURRENCY, Decimal(1))]
    for currency in CURRENCY_SYMBOLS:
        if currency == BOOK_CURRENCY:
            continue
        row = found.get(currency)
        if row is None:
            rates.append(CurrentRate(currency, None))
        else:
            by = row.set_by.get_username() if row.set_by else ""
            rates.append(CurrentRate(currency, row.rate, by, row.set_at))
    return rates


def exchange_rate_units() -> dict[str, int]:
    """The current rates as the books are converted at: currency → millionths of the book's
    currency (the book's own and every currency with a rate set)."""
    return {rate.currency: rate_units(rate.rate) for rate in exchange_rates_current() if rate.rate is not None}


def exchange_rates_in_force() -> dict[str, int]:
    """The rates the books are converted at now, as the desk reads them: Redis's mirror
    (``store.liability.BookStore.rates``), or PostgreSQL's rates before anything has mirrored them."""
    return BookStore(redis_shared()).rates() or exchange_rate_units()


def exchange_rate_history(*, limit: int = RATE_HISTORY_SHOWN) -> list[ExchangeRate]:
    """The newest rate changes first."""
    return list(ExchangeRate.objects.select_related("set_by").order_by("-set_at", "-id")[:limit])
