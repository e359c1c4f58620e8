"""Money as a punter reads it: an amount in their wallet's currency (``£1,234.50``, ``€20.00``).

Amounts are ``Decimal`` everywhere inside the platform; this is the one place that spells an amount
with its currency's symbol (the symbols are ``reducers.rules.CURRENCY_SYMBOLS``, which the browser's
``formatMoney`` in frontend/src/decimal.ts reads through rules.json and uses the same way).
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

from reducers.rules import CURRENCY_SYMBOLS, PENNY


def currency_symbol(currency: str) -> str:
    """``£`` for GBP; a currency without a symbol here is shown by its code and a space."""
    return CURRENCY_SYMBOLS.get(currency, f"{currency} ")


def money_text(amount: Decimal, currency: str) -> str:
    """``Decimal("1234.5")``, ``"GBP"`` → ``£1,234.50``; a negative amount with a minus sign."""
    value = amount.quantize(PENNY, rounding=ROUND_HALF_UP)
    sign = "\N{MINUS SIGN}" if value < 0 else ""
    return f"{sign}{currency_symbol(currency)}{abs(value):,}"
