"""Content-Security-Policy on every HTML response.

The policy is ``CONTENT_SECURITY_POLICY`` (settings): scripts, styles and connections from this
site only, no framing, no plugins. A browser's ``'self'`` in ``connect-src`` does not reliably
cover the websocket of the same host, so ``ws://`` (or ``wss://`` over HTTPS) of the request's
own host is added.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.core.exceptions import DisallowedHost
from django.http import HttpRequest, HttpResponse

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
