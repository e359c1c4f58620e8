"""Who is asking: the client's address as the server resolved it.

The ASGI server (``webapp.serve``) replaces the peer's address with the one in
``X-Forwarded-For`` only when the peer is one of ``TRUSTED_PROXIES``, and then takes the
rightmost address no trusted proxy added: a direct client cannot choose its address.
"""

from __future__ import annotations

from django.http import HttpRequest


def client_ip(request: HttpRequest) -> str:
    """The client's address (per-address limits, the loopback-only ``/metrics``)."""
    return str(request.META.get("REMOTE_ADDR") or "")
