"""Money as a person reads it: an amount in its currency (``£1,234.50``, ``€20.00``), and amounts
of several currencies kept apart (``Amounts``) for the staff who add them up in the book's.

Amounts are ``Decimal`` everywhere inside the platform; this is the one place that spells an amount
with its currency's symbol (the symbols are ``reducers.rules.CURRENCY_SYMBOLS``, which the browser's
``formatMoney`` in frontend/src/decimal.ts reads through rules.json and uses the same way).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal

from reducers.rates import Rates, book_amount
from reducers.rules import BOOK_CURRENCY, CURRENCY_SYMBOLS, PENNY


def currency_symbol(currency: str) -> str:
    """``£`` for GBP; a currency without a symbol here is shown by its code and a space."""
    return CURRENCY_SYMBOLS.get(currency, f"{currency} ")


def money_text(amount: Decimal, currency: str) -> str:
    """``Decimal("1234.5")``, ``"GBP"`` → ``£1,234.50``; a negative amount with a minus sign."""
    value = amount.quantize(PENNY, rounding=ROUND_HALF_UP)
    sign = "\N{MINUS SIGN}" if value < 0 else ""
    return f"{sign}{currency_symbol(currency)}{abs(value):,}"


@dataclass
class Amounts:
    """Money of several currencies added up, each currency exactly on its own (the stakes of
    bets from wallets in pounds and in euros are never one sum)."""

    by_currency: dict[str, Decimal] = field(default_factory=dict)

    def add(self, amount: Decimal, currency: str) -> None:
        self.by_currency[currency] = self.by_currency.get(currency, Decimal("0.00")) + amount

    def __add__(self, other: Amounts) -> Amounts:
        total = Amounts(dict(self.by_currency))
        for currency, amount in other.by_currency.items():
            total.add(amount, currency)
        return total

    def in_book(self, rates: Rates) -> Decimal:
        """The sum in the book's currency: each currency's amount converted on its own
        (``reducers.rates``, to the penny) and added up."""
        return sum(
            (book_amount(amount, currency=currency, rates=rates) for currency, amount in self.by_currency.items()),
            Decimal("0.00"),
        )

    @property
    def only_book_currency(self) -> bool:
        """Whether every amount is in the book's currency (nothing to convert, nothing to break down)."""
        return all(currency == BOOK_CURRENCY for currency in self.by_currency)

    def text(self) -> str:
        """Each currency's amount, the book's first: ``€10.00 + $5.00``; ``£0.00`` for none."""
        if not self.by_currency:
            return money_text(Decimal("0.00"), BOOK_CURRENCY)
        order = sorted(self.by_currency, key=lambda c: (c != BOOK_CURRENCY, c))
        return " + ".join(money_text(self.by_currency[c], c) for c in order)
