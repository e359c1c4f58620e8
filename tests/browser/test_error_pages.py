"""The site's own error pages, as the stack `make up` runs serves them (DEBUG off unless a
developer sets DJANGO_DEBUG): a bad link is the site's 404 in its own look, never Django's
technical page listing every route; an error is the site's 500; Redis away its 503."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.template.loader import render_to_string
from django.test import Client
from playwright.sync_api import Page

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SIZES = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}
# Where the shots go: the test's own directory, or ERROR_PAGE_SHOTS (docs/screenshots/ for the docs).
SHOTS = os.environ.get("ERROR_PAGE_SHOTS")


def _shot(page: Page, name: str, tmp_path: Path) -> None:
    for size, viewport in SIZES.items():
        page.set_viewport_size(viewport)  # type: ignore[arg-type]
        page.screenshot(path=str(Path(SHOTS or tmp_path) / f"{name}-{size}.png"), full_page=True)


def _styled(page: Page) -> bool:
    """The site's stylesheet applied: the page's background is the site's, not the browser's white."""
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    return background not in ("rgba(0, 0, 0, 0)", "rgb(255, 255, 255)")


def test_a_bad_link_gets_the_sites_own_404_page(asgi_server, page: Page, tmp_path):
    response = page.goto(f"{asgi_server}/no-such-page/at/all")
    assert response is not None
    assert response.status == 404
    text = page.inner_text("body")
    assert "Page not found" in text
    # Django's technical 404 lists the URL patterns (staff and ops routes among them).
    assert "URLconf" not in text
    assert "trading/" not in text
    assert _styled(page)
    _shot(page, "not-found", tmp_path)


def test_an_error_gets_the_sites_own_500_page(asgi_server, page: Page, tmp_path, monkeypatch):
    from odds.views import pages

    def broken(**kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(pages, "event_scores", broken)
    client = Client(raise_request_exception=False)
    response = client.get("/live/events?ids=1")
    assert response.status_code == 500
    html = response.content.decode()
    assert "Something went wrong" in html
    assert "Traceback" not in html
    assert "RuntimeError" not in html
    # In the browser, with the site's stylesheet.
    page.goto(f"{asgi_server}/login/")
    page.set_content(render_to_string("500.html", {}))
    page.wait_for_load_state("networkidle")
    assert _styled(page)
    _shot(page, "server-error", tmp_path)


def test_redis_away_gets_the_sites_own_503_page(asgi_server, page: Page, tmp_path):
    page.goto(f"{asgi_server}/login/")
    page.set_content(render_to_string("503.html", {"retry_after_s": 5}))
    page.wait_for_load_state("networkidle")
    assert "Back in a moment" in page.inner_text("body")
    assert _styled(page)
    _shot(page, "unavailable", tmp_path)
