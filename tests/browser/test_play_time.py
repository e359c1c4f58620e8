"""Play time in Chromium on the real stack: the punter chooses reality checks on the play-time
page; when one falls due the dialog appears on the betting page without a reload, with the time
played and the session's net result, focus in it and Escape not skipping it; while it waits the
server refuses bets, and Continue lets the next bet go. axe checks the page and the dialog.

``SCREENSHOTS_DIR=docs/screenshots`` writes the play-time page and the dialog at desktop and
phone sizes."""

from __future__ import annotations

import os
import re
import uuid
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from django.utils import timezone
from playwright.sync_api import Page, ViewportSize, expect

from odds.betting.models import Bet, PlaySession
from tests.browser.axe import axe_check
from tests.factories import live_state_write, market_create, user_create

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SCREENSHOTS = os.environ.get("SCREENSHOTS_DIR")
SIZES: dict[str, ViewportSize] = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}


def screenshots(page: Page, name: str, *, full_page: bool = False) -> None:
    if not SCREENSHOTS:
        return
    size = page.viewport_size
    for label, viewport in SIZES.items():
        page.set_viewport_size(viewport)
        page.wait_for_timeout(200)
        page.screenshot(path=str(Path(SCREENSHOTS) / f"{name}-{label}.png"), full_page=full_page)
    if size is not None:
        page.set_viewport_size(size)


def test_a_reality_check_appears_when_due_holds_bets_and_continue_lets_the_next_go(
    asgi_server, login, redis_client, page: Page
):
    from odds.betting.services.bets import BetInvalid, LegRequest, bet_place
    from odds.core.connections import redis_shared
    from store.markets import sequences_next

    market = market_create(prices=("2.50", "3.20", "2.90"))
    live_state_write(
        redis_client, market, prices=("2.50", "3.20", "2.90"), seq=sequences_next(redis_shared(), [market.id])[0]
    )
    selection = market.selections.order_by("display_order")[0]
    user = login(user_create(balance="100.00"))

    # The punter asks for a reality check every 15 minutes.
    page.goto(f"{asgi_server}/play/")
    page.get_by_role("radio", name="15 minutes").check()
    page.get_by_role("button", name="Save").click()
    expect(page.locator(".site-messages")).to_contain_text("Saved.")
    expect(page.get_by_role("radio", name="15 minutes")).to_be_checked()
    axe_check(page)
    screenshots(page, "play-time", full_page=True)

    # A bet of £10 in this session, then the explicit clock: the session started 20 minutes ago
    # and its next check falls due 6 seconds from now.
    bet_place(
        user=user,
        idempotency_key=uuid.uuid4().hex,
        stake=Decimal("10.00"),
        legs=[LegRequest(selection.id, selection.price)],
    )
    now = timezone.now()
    session = PlaySession.objects.filter(user=user, ended_at__isnull=True).latest("id")
    assert session.reality_check_s == 900
    PlaySession.objects.filter(id=session.id).update(
        started_at=now - timedelta(minutes=20), acknowledged_at=now - timedelta(seconds=894)
    )

    page.goto(f"{asgi_server}/event/{market.event_id}/")
    expect(page.locator("#conn-status")).to_have_attribute("data-state", "live")
    page.evaluate("window.sameDocument = true")
    dialog = page.get_by_role("dialog", name="Reality check")
    expect(dialog).to_be_visible(timeout=15_000)
    assert page.evaluate("window.sameDocument === true")  # no reload: the page's timer opened it
    expect(dialog.locator("[data-reality-played]")).to_have_text("20 minutes")
    expect(dialog.locator("[data-reality-net]")).to_have_text("\u2212£10.00")  # a minus sign
    assert page.evaluate("document.activeElement.closest('dialog')?.id") == "reality-check"

    page.keyboard.press("Escape")
    page.keyboard.press("Escape")
    expect(dialog).to_be_visible()
    axe_check(page)
    screenshots(page, "reality-check")

    # While it waits, the server refuses a bet whatever sends it.
    with pytest.raises(BetInvalid, match="reality check is waiting"):
        bet_place(
            user=user,
            idempotency_key="while-waiting",
            stake=Decimal("5.00"),
            legs=[LegRequest(selection.id, selection.price)],
        )

    dialog.get_by_role("button", name="Continue").click()
    expect(dialog).to_be_hidden()
    page.locator(f'.price[data-selection="{selection.id}"]').click()
    page.get_by_label("Stake £").fill("5")
    page.locator("#slip-place").click()
    expect(page.locator(".receipt")).to_contain_text(re.compile("Bet placed"))
    assert Bet.objects.filter(user=user, stake=Decimal("5.00"), status=Bet.Status.ACCEPTED).exists()
