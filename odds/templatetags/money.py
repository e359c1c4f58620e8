"""Template filters for money: an amount in the wallet's currency."""

from __future__ import annotations

from decimal import Decimal

from django import template

from reducers.money import currency_symbol, money_text

register = template.Library()


@register.filter
def money(amount: Decimal | str | None, currency: str) -> str:
    """``{{ wallet.balance|money:currency }}`` → ``£1,234.50`` (nothing for no amount)."""
    return money_text(Decimal(amount), currency) if amount is not None else ""


@register.filter
def symbol(currency: str) -> str:
    """``{{ currency|symbol }}`` → ``£``."""
    return currency_symbol(currency).strip()
