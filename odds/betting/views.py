"""The punter's wallet page (balance, ledger filtered and paged, payments, limits and breaks) and
play-time page (session time limit, reality checks, the current session).

The wallet page is rendered here; its forms post to the wallet API (``odds/api/views.py``) from
``frontend/src/walletPage.ts``, which reloads the page once a change is recorded. The play-time
page's form posts to the page itself.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import cast
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.csrf import ensure_csrf_cookie
from django.views.decorators.http import require_GET, require_http_methods

from odds.betting.play import REALITY_CHECK_CHOICES_MIN, SESSION_LIMIT_CHOICES_MIN, duration_text
from odds.betting.selectors.bets import wallet_for_user
from odds.betting.selectors.play import play_preferences_get, play_session_latest, play_summary
from odds.betting.selectors.wallet import STATEMENT_KINDS, ledger_page, wallet_break_running, wallet_limits_view
from odds.betting.services.play import PlayChoiceInvalid, play_preferences_set
from odds.betting.services.wallet import MAX_PAYMENT, MIN_PAYMENT, Break, cooling_off_text
from odds.catalogue.selectors.catalogue import sport_nav
from odds.core.pages import private_page
from reducers.rules import BOOK_CURRENCY

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
        "currency": wallet.currency if wallet else BOOK_CURRENCY,
        "on_break": wallet_break_running(wallet=wallet),
        "time_outs": [choice for choice in Break.choices if choice[0].startswith("time_out")],
        "exclusions": [choice for choice in Break.choices if choice[0].startswith("exclude")],
        "cooling_off": cooling_off_text(),
        "min_payment": MIN_PAYMENT,
        "max_payment": MAX_PAYMENT,
    }
    return render(request, "odds/wallet.html", context)


SAVED_MESSAGE = "Saved. A stricter choice applies to this session now; a laxer one from your next login."


def _choices(minutes: tuple[int, ...], none: str) -> list[tuple[str, str]]:
    return [("", none), *((str(m), duration_text(timedelta(minutes=m))) for m in minutes)]


def _chosen(raw: str | None) -> int | None:
    """A radio button's value: minutes, or None for "no limit" (and for anything not a number,
    which the service then refuses as not one of the choices)."""
    if not raw:
        return None
    return int(raw) if raw.isascii() and raw.isdigit() and len(raw) < 6 else -1


@require_http_methods(["GET", "POST"])
@login_required
@ensure_csrf_cookie
@private_page
def play_page(request: HttpRequest) -> HttpResponse:
    """``/play/``: the punter's session time limit and reality-check interval, and this session."""
    user = cast(User, request.user)
    problem = ""
    if request.method == "POST":
        try:
            play_preferences_set(
                user=user,
                session_limit_min=_chosen(request.POST.get("session_limit")),
                reality_check_min=_chosen(request.POST.get("reality_check")),
                now=timezone.now(),
            )
        except PlayChoiceInvalid as exc:
            problem = exc.message
        else:
            messages.success(request, SAVED_MESSAGE)
            return redirect("play")
    preferences = play_preferences_get(user=user)
    session = play_session_latest(user=user)
    summary = None if session is None else play_summary(session=session, now=timezone.now())
    context = {
        "nav": sport_nav(),
        "active_play": True,
        "problem": problem,
        "limit_choices": _choices(SESSION_LIMIT_CHOICES_MIN, "No limit"),
        "check_choices": _choices(REALITY_CHECK_CHOICES_MIN, "No reality checks"),
        "limit_chosen": "" if preferences.session_limit_s is None else str(preferences.session_limit_s // 60),
        "check_chosen": "" if preferences.reality_check_s is None else str(preferences.reality_check_s // 60),
        "summary": summary,
        "played": "" if summary is None else duration_text(summary.played),
        "left": "" if summary is None or summary.time_left is None else duration_text(summary.time_left),
        "check_every": ""
        if session is None or session.reality_check_s is None
        else duration_text(timedelta(seconds=session.reality_check_s)),
    }
    return render(request, "odds/play.html", context)
