"""Every page carries a Content-Security-Policy and runs under it in Chromium: no violation is
reported (no inline script or style is blocked) and the websocket still connects."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.browser.axe import axe_check
from tests.factories import market_create, user_create

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Recorded from the first script of the document; Playwright's init scripts are not subject to
# the page's policy.
RECORD_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__cspViolations.push(`${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`);
});
"""


def _visit(page: Page, url: str) -> tuple[str, list[str]]:
    console: list[str] = []
    page.on("console", lambda message: console.append(message.text))
    page.add_init_script(RECORD_VIOLATIONS)
    response = page.goto(url)
    assert response is not None
    assert response.status == 200, url
    page.wait_for_load_state("networkidle")
    violations = page.evaluate("window.__cspViolations")
    refused = [text for text in console if "Content Security Policy" in text]
    return response.headers.get("content-security-policy", ""), violations + refused


def test_punter_pages_have_the_policy_and_run_without_violations(asgi_server, login, page: Page):
    market = market_create()
    login(user_create())
    for path in ["/", f"/event/{market.event_id}/", "/in-play/", "/my-bets/", "/wallet/"]:
        policy, violations = _visit(page, f"{asgi_server}{path}")
        assert "default-src 'self'" in policy, path
        assert "frame-ancestors 'none'" in policy
        assert f"ws://{asgi_server.removeprefix('http://')}" in policy
        assert violations == [], (path, violations)
        axe_check(page)
    # The live connection is allowed by connect-src.
    expect(page.locator("#conn-status")).to_have_attribute("data-state", "live")


def test_login_page_has_the_policy_and_runs_without_violations(asgi_server, page: Page):
    policy, violations = _visit(page, f"{asgi_server}/login/")
    assert "form-action 'self'" in policy
    assert violations == []
    axe_check(page)


def test_staff_pages_have_the_policy_and_run_without_violations(asgi_server, login, page: Page):
    market_create()
    login(user_create(staff=True))
    for path in [
        "/trading/",
        "/trading/liability",
        "/trading/subscriptions",
        "/ops/lag",
        "/ops/backups",
        "/admin/",
        "/admin/catalogue/market/",
    ]:
        policy, violations = _visit(page, f"{asgi_server}{path}")
        assert "object-src 'none'" in policy, path
        assert violations == [], (path, violations)
        axe_check(page)
