"""The gate of every staff page (trading and operations), and the permissions its actions need."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse

View = Callable[..., HttpResponse]

# What a staff action needs beyond being staff: the model permissions of the roles
# (``odds.core.roles``) that may take it.
TRADE_MARKETS = "catalogue.trade_market"
RESULT_MARKETS = "catalogue.result_market"
CREATE_EVENTS = "catalogue.add_event"
VOID_BETS = "betting.void_bet"
END_CHANNELS = "ops.end_channel"
VIEW_AUDIT = "audit.view_auditentry"
SET_EXCHANGE_RATES = "trading.set_exchange_rate"
SET_CUSTOMER_LIMITS = "trading.set_customer_limits"


def staff_page(view: View | None = None, *, permission: str | None = None) -> Any:
    """Staff only: anonymous → login page (then back here), logged-in non-staff → 403, staff
    without ``permission`` (a model permission such as ``TRADE_MARKETS``) → 403."""

    def decorate(inner: View) -> View:
        @functools.wraps(inner)
        def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if not request.user.is_authenticated:
                return redirect_to_login(request.get_full_path())
            if not request.user.is_staff:
                raise PermissionDenied("staff only")
            if permission is not None and not request.user.has_perm(permission):
                raise PermissionDenied(f"this action needs the permission {permission}")
            return inner(request, *args, **kwargs)

        return wrapper

    return decorate(view) if view is not None else decorate
