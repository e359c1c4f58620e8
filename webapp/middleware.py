"""The site's own middleware: the Content-Security-Policy of every HTML response, the login
throttle in front of every login form, and the staff's second factor in front of every staff
page and action.

The policy is ``CONTENT_SECURITY_POLICY`` (settings): scripts, styles and connections from this
site only, no framing, no plugins. A browser's ``'self'`` in ``connect-src`` does not reliably
cover the websocket of the same host, so ``ws://`` (or ``wss://`` over HTTPS) of the request's
own host is added.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.core.exceptions import DisallowedHost
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.http import urlencode

from odds.accounts.gate import SECOND_FACTOR_MESSAGE, STAFF_API_PATHS, second_factor_redirect
from odds.accounts.play import ENDED_PARAM, ENDED_SESSION_LIMIT, SESSION_LIMIT_SIGNED_OUT, signed_out_for_time_limit
from odds.core.auth import LOGIN_THROTTLED_URLS, LoginThrottleUnavailable, login_attempt
from odds.core.clients import client_ip
from odds.views.pages import LOGIN_UNAVAILABLE_RETRY_S, login_refused

HEADER = "Content-Security-Policy"


def content_security_policy(request: HttpRequest) -> str:
    """The policy of a page served for ``request``."""
    directives = {name: list(sources) for name, sources in settings.CONTENT_SECURITY_POLICY.items()}
    try:
        host = request.get_host()
    except DisallowedHost:
        host = ""
    if host:
        directives.setdefault("connect-src", []).append(f"{'wss' if request.is_secure() else 'ws'}://{host}")
    return "; ".join(f"{name} {' '.join(sources)}" for name, sources in directives.items())


class ContentSecurityPolicyMiddleware:
    """Adds the policy to HTML responses that do not set their own."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if response.get("Content-Type", "").startswith("text/html") and HEADER not in response:
            response[HEADER] = content_security_policy(request)
        return response


class LoginThrottleMiddleware:
    """The one login throttle (``odds.core.auth``) in front of every login form: a POST to one
    is counted before any view checks its password; over the limit it is answered 429 with
    ``Retry-After`` here, and 503 when the attempt cannot be counted."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self._paths: frozenset[str] | None = None

    def paths(self) -> frozenset[str]:
        if self._paths is None:
            self._paths = frozenset(reverse(name) for name in LOGIN_THROTTLED_URLS)
        return self._paths

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method != "POST" or request.path_info not in self.paths():
            return self.get_response(request)
        username = str(request.POST.get("username", ""))
        try:
            throttled = login_attempt(username=username, ip=client_ip(request))
        except LoginThrottleUnavailable:
            return login_refused(request, username=username, retry_after_s=LOGIN_UNAVAILABLE_RETRY_S, unavailable=True)
        if throttled is not None:
            return login_refused(request, username=username, retry_after_s=throttled.retry_after_s)
        return self.get_response(request)


class StaffSecondFactorMiddleware:
    """No staff page or action (odds.accounts.gate) for a staff session without a second factor:
    a page is redirected to set up TOTP or enter a code (then back), a staff JSON API answers 403."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        target = second_factor_redirect(request)
        if target is None:
            return self.get_response(request)
        if request.path_info.startswith(STAFF_API_PATHS):
            error = {"code": "second_factor_required", "message": SECOND_FACTOR_MESSAGE}
            return JsonResponse({"v": 1, "error": error}, status=403)
        return redirect(f"{target}?{urlencode({'next': request.get_full_path()})}")


# The JSON APIs a punter's session calls: answered with a JSON body rather than sent to a page.
API_PATHS = ("/api/", "/live/")


class PlaySessionMiddleware:
    """A login past its session time limit (odds.accounts.play) is signed out on its next request:
    a page is sent to the login page, which says why; a JSON API answers 401 ``session_limit``."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not signed_out_for_time_limit(request):
            return self.get_response(request)
        if request.path_info.startswith(API_PATHS):
            error = {"code": ENDED_SESSION_LIMIT, "message": SESSION_LIMIT_SIGNED_OUT}
            return JsonResponse({"v": 1, "error": error}, status=401)
        return redirect(f"{reverse('login')}?{urlencode({ENDED_PARAM: ENDED_SESSION_LIMIT})}")
