"""Trader pages under /trading/: market management, liability, subscriptions, settlement
progress. Staff only: anonymous visitors are sent to the login page, other users get 403."""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from odds.models import Market, Selection
from odds.selectors.ops import trading_events
from odds.services.markets import (
    MarketStateError,
    market_result,
    market_resume,
    market_settlement_request,
    market_suspend,
    selection_price_set,
)
from odds.services.ops import TEMPLATE_SPORTS, event_create

View = Callable[..., HttpResponse]


def staff_page(view: View) -> View:
    """Staff only: anonymous → login page (then back here), logged-in non-staff → 403."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not request.user.is_staff:
            raise PermissionDenied("staff only")
        return view(request, *args, **kwargs)

    return wrapper


@staff_page
def markets_page(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "odds/trading/markets.html",
        {"events": trading_events(), "sports": TEMPLATE_SPORTS, "page": "markets"},
    )


@staff_page
@require_POST
def event_create_view(request: HttpRequest) -> HttpResponse:
    try:
        starts_at = datetime.fromisoformat(request.POST.get("starts_at", ""))
        if timezone.is_naive(starts_at):
            starts_at = timezone.make_aware(starts_at)
        event = event_create(
            sport=request.POST.get("sport", ""),
            competition=request.POST.get("competition", ""),
            home=request.POST.get("home", ""),
            away=request.POST.get("away", ""),
            starts_at=starts_at,
            by=request.user,
        )
    except ValueError as exc:
        messages.error(request, f"Event not created: {exc}")
        return redirect("trading-markets")
    messages.success(request, f"Created {event.name} with {event.markets.count()} markets")
    return redirect("trading-markets")


def _market_action(request: HttpRequest, market_id: int, action: Callable[[Market], str]) -> HttpResponse:
    market = get_object_or_404(Market, id=market_id)
    try:
        messages.success(request, action(market))
    except MarketStateError as exc:
        messages.error(request, str(exc))
    return redirect(request.POST.get("next") or "trading-markets")


@staff_page
@require_POST
def market_suspend_view(request: HttpRequest, market_id: int) -> HttpResponse:
    def act(market: Market) -> str:
        market_suspend(market=market, by=request.user)
        return f"Suspended {market}"

    return _market_action(request, market_id, act)


@staff_page
@require_POST
def market_resume_view(request: HttpRequest, market_id: int) -> HttpResponse:
    def act(market: Market) -> str:
        market_resume(market=market, by=request.user)
        return f"Resumed {market}"

    return _market_action(request, market_id, act)


@staff_page
@require_POST
def selection_price_view(request: HttpRequest, market_id: int) -> HttpResponse:
    def act(market: Market) -> str:
        selection = get_object_or_404(Selection, id=request.POST.get("selection_id"), market=market)
        try:
            price = Decimal(request.POST.get("price", ""))
            updated = selection_price_set(selection=selection, price=price, by=request.user)
        except (InvalidOperation, ValueError) as exc:
            raise MarketStateError(f"not a valid price: {request.POST.get('price', '')!r} ({exc})") from exc
        return f"{updated.name} priced at {updated.price}"

    return _market_action(request, market_id, act)


@staff_page
@require_POST
def market_result_view(request: HttpRequest, market_id: int) -> HttpResponse:
    winner = request.POST.get("winner", "")
    market = get_object_or_404(Market, id=market_id)
    try:
        if winner == "void":
            market_result(market=market, winners=None, by=request.user)
        else:
            selection = get_object_or_404(Selection, id=winner, market=market)
            market_result(market=market, winners=[selection.id], by=request.user)
    except MarketStateError as exc:
        messages.error(request, str(exc))
        return redirect("trading-markets")
    messages.success(request, f"Resulted {market}; settlement queued")
    return redirect("trading-settlement", market_id=market.id)


@staff_page
@require_POST
def market_settle_view(request: HttpRequest, market_id: int) -> HttpResponse:
    market = get_object_or_404(Market, id=market_id)
    try:
        market_settlement_request(market=market, by=request.user)
    except MarketStateError as exc:
        messages.error(request, str(exc))
        return redirect("trading-markets")
    return redirect("trading-settlement", market_id=market.id)


@staff_page
def settlement_page(request: HttpRequest, market_id: int) -> HttpResponse:
    market = get_object_or_404(Market.objects.select_related("event"), id=market_id)
    return render(request, "odds/trading/settlement.html", {"market": market, "page": "markets"})


@staff_page
def liability_page(request: HttpRequest) -> HttpResponse:
    return render(request, "odds/trading/liability.html", {"page": "liability"})


@staff_page
def subscriptions_page(request: HttpRequest) -> HttpResponse:
    return render(request, "odds/trading/subscriptions.html", {"page": "subscriptions"})
