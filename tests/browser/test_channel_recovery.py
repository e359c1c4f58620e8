"""The bet slip recovers by itself when its subscriber channel ends on the server."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from odds.streaming.services.streams import stream_end
from tests.browser.axe import axe_check
from tests.browser.test_sportsbook import LIVE, first_selection, open_event, priced, slip_leg, stream_live
from tests.factories import market_create, user_create

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# The slip's channel id once it has streamed at least one frame.
SLIP_CHANNEL = (
    "() => { const s = window.sportsbook, id = s.slip.channelId; return id && s.client.channelSeq(id) > 0 && id }"
)


def test_the_slip_resubscribes_when_a_trader_ends_its_channel(asgi_server, price_query, publish, login, page: Page):
    market = market_create(prices=("2.50", "3.20", "2.90"))
    selection = first_selection(market)
    login(user_create(balance="100.00"))
    open_event(page, asgi_server, market)
    stream_live(page, publish, market, ("2.50", "3.20", "2.90"))
    page.locator(f'.price[data-selection="{selection.id}"]').click()
    ended = page.wait_for_function(SLIP_CHANNEL, timeout=LIVE).json_value()

    assert stream_end(channel_id=ended)
    replacement = page.wait_for_function(
        f"() => {{ const id = ({SLIP_CHANNEL})(); return id && id !== {ended!r} && id }}", timeout=LIVE
    ).json_value()
    assert replacement != ended

    publish(priced(market, "2.65", "3.20", "2.90"))
    expect(slip_leg(page, selection.id).locator(".leg-price")).to_have_attribute("data-price", "2.65", timeout=LIVE)
    axe_check(page)
