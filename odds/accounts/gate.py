"""The staff's second factor: no staff page or staff action (``STAFF_PATHS``) for a session that
has not used one. A staff member signed in with their password alone (the site's login without a
TOTP device yet, the admin's login form) is sent to set up TOTP, or to enter a code from the
device they have; allauth.mfa records the code in the session's authentication records."""

from __future__ import annotations

from allauth.account.authentication import get_authentication_records
from allauth.mfa.models import Authenticator
from django.http import HttpRequest
from django.urls import reverse

# Everything under these is for staff only (pages, their JSON APIs, the admin).
STAFF_PATHS = ("/trading/", "/ops/", "/admin/")
# The admin's own ways in and out, which the gate must not block.
OPEN_STAFF_PATHS = ("/admin/login/", "/admin/logout/")
# The JSON APIs among them: refused with a JSON body rather than sent to a page.
STAFF_API_PATHS = ("/trading/api/", "/ops/api/")
SECOND_FACTOR_MESSAGE = "Staff pages and actions need a second factor: sign in with your authenticator code."


def is_staff_path(path: str) -> bool:
    return path.startswith(STAFF_PATHS) and not path.startswith(OPEN_STAFF_PATHS)


def signed_in_with_second_factor(request: HttpRequest) -> bool:
    """Whether this session's user has used a second factor in this session."""
    return any(record.get("method") == "mfa" for record in get_authentication_records(request, request.user))


def second_factor_redirect(request: HttpRequest) -> str | None:
    """Where a staff member must go before ``request`` (set up TOTP, or enter a code), or None
    when the request may go on: not a staff path, not a staff member, or a second factor used."""
    # The path first: reading the user loads the session, which makes every response vary by
    # cookie (and public pages uncacheable by the proxy).
    if not is_staff_path(request.path_info):
        return None
    user = request.user
    if not user.is_authenticated or not user.is_staff:
        return None
    if signed_in_with_second_factor(request):
        return None
    has_totp = Authenticator.objects.filter(user=user, type=Authenticator.Type.TOTP).exists()
    return reverse("mfa_reauthenticate" if has_totp else "mfa_activate_totp")
