"""The Content-Security-Policy header on HTML responses: the directives of the settings plus the
websocket origin of the request's own host."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.integration.security.conftest import logged_in

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

REQUIRED = [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "frame-ancestors 'none'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
]


def _directives(policy: str) -> dict[str, str]:
    return {part.split(" ", 1)[0]: part for part in (p.strip() for p in policy.split(";")) if part}


@pytest.mark.parametrize("path", ["/", "/login/", "/trading/", "/admin/", "/no-such-page/"])
def test_every_html_response_carries_the_policy(staff, path):
    response = logged_in(staff).get(path)
    assert response["Content-Type"].startswith("text/html")
    directives = _directives(response["Content-Security-Policy"])
    for directive in REQUIRED:
        assert directives[directive.split(" ")[0]] == directive
    assert directives["connect-src"] == "connect-src 'self' ws://testserver"


def test_over_https_the_websocket_source_is_wss(staff):
    response = Client().get("/login/", secure=True)
    assert "connect-src 'self' wss://testserver" in response["Content-Security-Policy"]


def test_json_answers_carry_no_page_policy(punter):
    response = logged_in(punter).get("/api/wallet")
    assert "Content-Security-Policy" not in response
