"""Template context for every page: the currency the punter's amounts are shown in.

A wallet holds one currency for its life (chosen at sign-up), so it is read once per login and kept
in the Django session under ``WALLET_CURRENCY_KEY``; before login the book's own currency."""

from __future__ import annotations

from django.http import HttpRequest

from odds.betting.models import Wallet
from reducers.rules import BOOK_CURRENCY

WALLET_CURRENCY_KEY = "wallet_currency"


def wallet_currency(request: HttpRequest) -> str:
    """The logged-in punter's wallet currency (a punter without a wallet yet gets the book's)."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return BOOK_CURRENCY
    session = getattr(request, "session", None)
    if session is not None and (kept := session.get(WALLET_CURRENCY_KEY)):
        return str(kept)
    found = Wallet.objects.filter(user_id=user.pk).values_list("currency", flat=True).first()
    if found is None:
        return BOOK_CURRENCY
    if session is not None:
        session[WALLET_CURRENCY_KEY] = found
    return found


def currency(request: HttpRequest) -> dict[str, str]:
    """``currency``: what ``data-currency`` on the page's body names (frontend/src/decimal.ts);
    ``book_currency``: what the staff pages add every wallet's amounts up in."""
    return {"currency": wallet_currency(request), "book_currency": BOOK_CURRENCY}
