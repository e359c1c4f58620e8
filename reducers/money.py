"""Money as a punter reads it: an amount in their wallet's currency (``£1,234.50``, ``€20.00``).

Amounts are ``Decimal`` everywhere inside the platform; this is the one place that spells a
currency's symbol. The browser's ``formatMoney`` (frontend/src/decimal.ts) shows amounts the same way.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

from reducers.rules import PENNY

# The symbol of each currency a wallet may hold (odds/accounts/rules.py: CURRENCIES).
CURRENCY_SYMBOLS: dict[str, str] = {"GBP": "£", "EUR": "€", "USD": "$"}


def currency_symbol(currency: str) -> str:
    """``£`` for GBP; a currency without a symbol here is shown by its code and a space."""
    return CURRENCY_SYMBOLS.get(currency, f"{currency} ")


def money_text(amount: Decimal, currency: str) -> str:
    """``Decimal("1234.5")``, ``"GBP"`` → ``£1,234.50``; a negative amount with a minus sign."""
    value = amount.quantize(PENNY, rounding=ROUND_HALF_UP)
    sign = "\N{MINUS SIGN}" if value < 0 else ""
    return f"{sign}{currency_symbol(currency)}{abs(value):,}"
