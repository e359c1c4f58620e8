"""The punter's wallet page: balance, ledger (filtered, paged), payments, limits and breaks.

The page is rendered here; its forms post to the wallet API (``odds/api/views.py``) from
``frontend/src/walletPage.ts``, which reloads the page once a change is recorded.
"""

from __future__ import annotations

from datetime import date
from typing import cast
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.csrf import ensure_csrf_cookie
from django.views.decorators.http import require_GET

from odds.betting.selectors.bets import wallet_for_user
from odds.betting.selectors.wallet import STATEMENT_KINDS, ledger_page, wallet_break_running, wallet_limits_view
from odds.betting.services.wallet import MAX_PAYMENT, MIN_PAYMENT, Break, cooling_off_text
from odds.catalogue.selectors.catalogue import sport_nav
from odds.core.pages import private_page

# The days a ledger filter may name: the ledger's days and far beyond, never so far that a day's
# start in the punter's time zone (or the day after the last) is outside what dates can hold.
FIRST_DAY = date(1970, 1, 1)
LAST_DAY = date(9998, 12, 31)


def _day(raw: str, name: str, problems: list[str]) -> date | None:
    if not raw:
        return None
    try:
        day = date.fromisoformat(raw)
    except ValueError:
        problems.append(f"The {name} date is not a date such as 2026-11-22; it was left out.")
        return None
    if not FIRST_DAY <= day <= LAST_DAY:
        problems.append(f"The {name} date must be between {FIRST_DAY} and {LAST_DAY}; it was left out.")
        return None
    return day


def _zone(raw: str) -> ZoneInfo | None:
    """The punter's time zone as their browser names it (``Europe/London``), or None."""
    if not raw or len(raw) > 64 or not raw.isascii() or ".." in raw:
        return None
    try:
        return ZoneInfo(raw)
    except (ZoneInfoNotFoundError, ValueError):
        return None


@require_GET
@login_required
@ensure_csrf_cookie
@private_page
def wallet_page(request: HttpRequest) -> HttpResponse:
    user = cast(User, request.user)
    wallet = wallet_for_user(user=user)
    problems: list[str] = []
    kind = request.GET.get("kind", "")
    if kind and kind not in STATEMENT_KINDS:
        problems.append("That kind of entry does not exist; all kinds are shown.")
        kind = ""
    since = _day(request.GET.get("from", ""), "from", problems)
    until = _day(request.GET.get("to", ""), "to", problems)
    zone = _zone(request.GET.get("tz", ""))
    raw_page = request.GET.get("page", "1")
    number = int(raw_page) if raw_page.isascii() and raw_page.isdigit() and len(raw_page) < 9 else 1
    page = ledger_page(wallet=wallet, page=number, kind=kind, since=since, until=until, zone=zone) if wallet else None
    now = timezone.now()
    filters = request.GET.copy()
    filters.pop("page", None)
    context = {
        "nav": sport_nav(),
        "active_wallet": True,
        "wallet": wallet,
        "page": page,
        "kinds": [(kind.value, kind.label) for kind in STATEMENT_KINDS],
        "kind": kind,
        "since": since.isoformat() if since else "",
        "until": until.isoformat() if until else "",
        "filter_query": filters.urlencode(),
        "problems": problems,
        "limit_kinds": wallet_limits_view(wallet=wallet, now=now),
        "currency": wallet.currency if wallet else "GBP",
        "on_break": wallet_break_running(wallet=wallet),
        "time_outs": [choice for choice in Break.choices if choice[0].startswith("time_out")],
        "exclusions": [choice for choice in Break.choices if choice[0].startswith("exclude")],
        "cooling_off": cooling_off_text(),
        "min_payment": MIN_PAYMENT,
        "max_payment": MAX_PAYMENT,
    }
    return render(request, "odds/wallet.html", context)
