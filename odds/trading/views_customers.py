"""Customers' stake limits and the referrals queue (docs/referral.md): traders set a customer's
stake factor and per-sport limits, and accept or decline the bets referred to them."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from django.contrib import messages
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from odds.betting.services.referrals import REASON_MAX_CHARS, ReferralRefused, referral_decide, referral_offer
from odds.core.staff import SET_CUSTOMER_LIMITS, staff_page
from odds.core.text import DECIMAL_TEXT
from odds.trading.selectors.customers import CustomerView, customer_view, open_referrals
from odds.trading.services.customers import LimitRefused, customer_limits_set
from odds.trading.views import next_url
from reducers.money import money_text
from reducers.trading import (
    OFFER_REFUSED,
    OFFER_WINDOW_S,
    REFERRAL_WINDOW_S,
    SPORT_LIMIT_REFUSED,
    stake_factor_from_text,
)

NOTE_MAX_CHARS = 200


def _amount(text: str, *, refused: str = SPORT_LIMIT_REFUSED) -> Decimal | None:
    """An amount or a price as typed: empty → None; ``ValueError`` with ``refused`` for what is
    not a decimal."""
    raw = text.strip().lstrip("£€$").strip()
    if not raw:
        return None
    if len(raw) > 12 or not DECIMAL_TEXT.fullmatch(raw):
        raise ValueError(refused)
    try:
        return Decimal(raw)
    except InvalidOperation:
        raise ValueError(refused) from None


@staff_page
def customer_page(request: HttpRequest, user_id: int) -> HttpResponse:
    """A customer's stake limits (a post sets them: traders) and newest bets."""
    customer = get_object_or_404(User.objects.select_related("wallet"), id=user_id)
    if request.method == "POST":
        if not request.user.has_perm(SET_CUSTOMER_LIMITS):
            raise PermissionDenied(f"this action needs the permission {SET_CUSTOMER_LIMITS}")
        view = customer_view(customer=customer)
        try:
            factor = stake_factor_from_text(request.POST.get("stake_factor", ""))
            limits = {row.sport.id: _amount(request.POST.get(f"sport_{row.sport.id}", "")) for row in view.sports}
            changed = customer_limits_set(
                customer=customer,
                stake_factor=factor,
                sport_limits=limits,
                by=request.user,
                note=" ".join(request.POST.get("note", "").split())[:NOTE_MAX_CHARS],
            )
        except (ValueError, LimitRefused) as refused:
            messages.error(request, f"Limits not changed: {refused}")
            return _customer(request, view, typed=request.POST, status=400)
        if changed:
            messages.success(request, f"Limits of {customer.get_username()} set")
        else:
            messages.info(request, "Nothing changed")
        return redirect("trading-customer", user_id=customer.id)
    return _customer(request, customer_view(customer=customer))


def _customer(
    request: HttpRequest, view: CustomerView, *, typed: QueryDict | None = None, status: int = 200
) -> HttpResponse:
    """The customer page; after a refused post, with what the trader typed."""
    factor = typed.get("stake_factor", "") if typed is not None else _plain(view.stake_factor, normal=True)
    sports = [
        (row, typed.get(f"sport_{row.sport.id}", "") if typed is not None else _plain(row.max_stake))
        for row in view.sports
    ]
    return render(
        request,
        "odds/trading/customer.html",
        {"page": "referrals", "view": view, "factor": factor, "sports": sports},
        status=status,
    )


def _plain(value: Decimal | None, *, normal: bool = False) -> str:
    """A limit as the form shows it: a factor without trailing zeros (0.1), an amount in pence."""
    if value is None:
        return ""
    return f"{value.normalize():f}" if normal else str(value)


@staff_page
def referrals_page(request: HttpRequest) -> HttpResponse:
    """The referred bets waiting for a trader; ``?fragment=table`` is the table alone, which the
    page reads again when a bet is referred or decided."""
    context = {
        "page": "referrals",
        "referrals": open_referrals(),
        "window_s": REFERRAL_WINDOW_S,
        "offer_window_s": OFFER_WINDOW_S,
        "reason_max": REASON_MAX_CHARS,
        "can_decide": request.user.has_perm(SET_CUSTOMER_LIMITS),
    }
    if request.GET.get("fragment") == "table":
        return render(request, "odds/trading/_referrals.html", context)
    return render(request, "odds/trading/referrals.html", context)


@require_POST
@staff_page(permission=SET_CUSTOMER_LIMITS)
def referral_decide_view(request: HttpRequest, bet_id: int) -> HttpResponse:
    """Accept or decline one referred bet (``decision``: ``accept`` or ``decline``; a decline may
    carry a ``reason`` the punter reads)."""
    back = next_url(request, default=reverse("trading-referrals"))
    decision = request.POST.get("decision", "")
    if decision not in ("accept", "decline"):
        messages.error(request, f"Bet {bet_id}: choose accept or decline")
        return redirect(back)
    try:
        bet = referral_decide(
            bet_id=bet_id, accept=decision == "accept", by=request.user, reason=request.POST.get("reason", "")
        )
    except ReferralRefused as refused:
        messages.error(request, f"Not decided: {refused}")
        return redirect(back)
    stake = money_text(bet.stake, bet.user.wallet.currency)
    if bet.status == "accepted":
        messages.success(request, f"Accepted bet {bet.id} for {stake}")
    elif decision == "accept":
        messages.error(request, f"Bet {bet.id} could not be accepted: {bet.reject_message}; the stake went back")
    else:
        messages.success(request, f"Declined bet {bet.id}; {stake} went back to {bet.user.get_username()}")
    return redirect(back)


@require_POST
@staff_page(permission=SET_CUSTOMER_LIMITS)
def referral_offer_view(request: HttpRequest, bet_id: int) -> HttpResponse:
    """Offer the punter of a referred bet a lower ``stake`` and/or, on a single, another
    ``price`` (either may be empty), with an optional ``reason``."""
    back = next_url(request, default=reverse("trading-referrals"))
    try:
        stake = _amount(request.POST.get("stake", ""), refused=OFFER_REFUSED)
        price = _amount(request.POST.get("price", ""), refused=OFFER_REFUSED)
        bet = referral_offer(
            bet_id=bet_id, stake=stake, price=price, by=request.user, reason=request.POST.get("reason", "")
        )
    except (ValueError, ReferralRefused) as refused:
        messages.error(request, f"Bet {bet_id}: no offer made: {refused}")
        return redirect(back)
    assert bet.offer_stake is not None
    assert bet.offer_return is not None
    currency = bet.user.wallet.currency
    at = f" at {bet.offer_price}" if bet.offer_price is not None else ""
    messages.success(
        request,
        f"Offered bet {bet.id} at {money_text(bet.offer_stake, currency)}{at} "
        f"(returns {money_text(bet.offer_return, currency)}); the punter has {OFFER_WINDOW_S} s to take it",
    )
    return redirect(back)
