"""Trader pages in a browser: finding events, live prices on an event page, actions answered in
place, errors in words, the settlement confirmation and the styled 403/404 pages."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from playwright.sync_api import Page, expect

from odds.catalogue.models import Market
from tests.browser.axe import axe_check
from tests.conftest import wait_for
from tests.factories import market_create, price_update, user_create

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def trader(page: Page, login):
    return login(user_create(balance="0", staff=True))


def test_search_and_sport_filter_narrow_the_markets_page(asgi_server, kafka_topics, redis_client, trader, page):
    wanted = market_create()
    other = market_create()
    page.goto(f"{asgi_server}/trading/")
    expect(page.locator(f'.event-box[data-event="{other.event_id}"]')).to_be_visible()
    search = page.get_by_role("search", name="Find events")
    search.locator('input[name="q"]').fill(wanted.event.home)
    search.locator('select[name="sport"]').select_option("football")
    search.get_by_role("button", name="Find").click()
    expect(page).to_have_url(re.compile(r"[?&]q=Home"))
    expect(page.locator(f'.event-box[data-event="{wanted.event_id}"]')).to_be_visible()
    expect(page.locator(f'.event-box[data-event="{other.event_id}"]')).to_have_count(0)
    expect(page.locator('input[name="q"]')).to_have_value(wanted.event.home)
    axe_check(page)


def test_event_page_shows_a_price_pushed_through_the_stream(
    asgi_server, price_query, publish, redis_client, trader, page
):
    market = market_create(prices=("2.10", "3.40", "3.50"))
    home = market.selections.order_by("display_order")[0]
    page.goto(f"{asgi_server}/trading/event/{market.event_id}/")
    expect(page.locator("#trading-conn")).to_have_attribute("data-state", "live", timeout=30_000)
    price = page.locator(f'tr[data-selection="{home.id}"] [data-price]')
    expect(price).to_have_text("2.10")
    page.evaluate("window.beforePush = true")

    publish(price_update(market, seq=1, prices=("4.20", "3.30", "1.90")))
    expect(price).to_have_text("4.20", timeout=30_000)
    publish(price_update(market, seq=2, prices=("4.20", "3.30", "1.90"), status="suspended"))
    expect(page.locator(f"#market-{market.id} [data-market-status]")).to_have_text("suspended", timeout=30_000)
    assert page.evaluate("window.beforePush") is True
    axe_check(page)


def test_suspend_updates_the_row_in_place_and_keeps_the_scroll_position(
    asgi_server, kafka_topics, redis_client, trader, page
):
    markets = [market_create() for _ in range(12)]
    last = markets[-1]
    page.goto(f"{asgi_server}/trading/")
    row = page.locator(f"#market-{last.id}")
    row.scroll_into_view_if_needed()
    page.evaluate("window.noReload = true")
    before = page.evaluate("window.scrollY")
    assert before > 0
    row.locator('[data-action="suspend"]').click()
    expect(page.locator(f"#market-{last.id}")).to_have_attribute("data-status", "suspended")
    expect(page.locator(f"#market-{last.id} .action-message")).to_contain_text("Suspended")
    assert page.evaluate("window.noReload") is True
    assert page.evaluate("window.scrollY") == before
    axe_check(page)


def test_a_bad_price_is_refused_in_words_next_to_its_field(asgi_server, kafka_topics, redis_client, trader, page):
    market = market_create()
    home = market.selections.order_by("display_order")[0]
    page.goto(f"{asgi_server}/trading/event/{market.event_id}/")
    form = page.locator(f'tr[data-selection="{home.id}"] form')
    form.locator('input[name="price"]').fill("1.001")
    form.get_by_role("button", name="Set price").click()
    expect(form.locator(".action-message.error")).to_have_text(
        "not a valid price: enter odds from 1.01 to 1000 with at most two decimals, such as 2.50"
    )
    expect(form.locator('input[name="price"]')).to_have_attribute("aria-invalid", "true")
    expect(page.locator("body")).not_to_contain_text("Traceback")
    axe_check(page)


def test_settling_asks_for_confirmation_with_the_bets_and_payout(
    asgi_server, kafka_topics, redis_client, celery_worker, trader, page
):
    from odds.betting.services.bets import LegRequest, bet_place
    from tests.factories import live_state_write

    market = market_create(prices=("2.00", "3.40", "3.50"))
    live_state_write(redis_client, market, prices=("2.00", "3.40", "3.50"))
    home = market.selections.order_by("display_order")[0]
    for n, stake in enumerate(("10.00", "5.00")):
        bet_place(
            user=user_create(balance="50.00"),
            idempotency_key=f"confirm-{n}",
            stake=Decimal(stake),
            legs=[LegRequest(selection_id=home.id, price_seen=home.price)],
        )
    page.goto(f"{asgi_server}/trading/event/{market.event_id}/")
    row = page.locator(f"#market-{market.id}")
    row.locator('select[name="winner"]').select_option(str(home.id))
    row.locator('[data-action="result"]').click()
    expect(page.locator('[data-impact="bets"]')).to_have_text("2")
    expect(page.locator('[data-impact="payout"]')).to_have_text("£30.00")
    expect(page.locator(".warning")).to_contain_text("has not started yet")
    axe_check(page)
    page.get_by_role("button", name="Result and settle 2 bets").click()
    expect(page).to_have_url(re.compile(rf"/trading/markets/{market.id}/settlement$"))
    # The worker settles both bets (and is done with them before the test's data is cleared).
    wait_for(lambda: Market.objects.get(id=market.id).status == Market.Status.SETTLED, timeout=60, what="settled")


def test_a_punter_on_a_staff_page_gets_the_styled_403(asgi_server, kafka_topics, page, login):
    login(user_create(balance="10.00"))
    response = page.goto(f"{asgi_server}/trading/")
    assert response is not None
    assert response.status == 403
    expect(page.get_by_role("heading", name="Not allowed")).to_be_visible()
    expect(page.locator('link[rel="icon"]')).to_have_attribute("href", re.compile(r"favicon\.svg$"))
    axe_check(page)
    response = page.goto(f"{asgi_server}/trading/event/999999/")
    assert response is not None
    assert response.status == 403
    expect(page.get_by_role("heading", name="Not allowed", exact=True)).to_be_visible()


def test_a_missing_staff_page_is_the_styled_404(asgi_server_not_debug, browser):
    page = browser.new_context().new_page()
    response = page.goto(f"{asgi_server_not_debug}/trading/no-such-page/")
    assert response is not None
    assert response.status == 404
    expect(page.get_by_role("heading", name="Page not found", exact=True)).to_be_visible()
    expect(page.locator("html")).to_have_class("staff-theme")
    axe_check(page)
    page.context.close()


def test_admin_subscriptions_page_ends_a_channel_after_confirmation(
    asgi_server, kafka_topics, redis_client, trader, page
):
    import time

    from store import keys

    punter = user_create(balance="10.00")
    channel = "browserchannel0123456789"
    now = int(time.time() * 1000)
    redis_client.hset(
        keys.channel_meta(channel),
        mapping={"user": punter.id, "spec": '{"view": "slip"}', "status": "streaming", "seq": 1, "created": now},
    )
    redis_client.zadd(keys.channels_index(), {channel: now})
    redis_client.set(keys.channel_owner(channel), f"{punter.id}:session-key")
    try:
        page.goto(f"{asgi_server}/admin/")
        page.get_by_role("link", name="Subscriptions").click()
        row = page.locator(f'#subscriptions tr[data-channel="{channel}"]')
        expect(row).to_contain_text(punter.username)
        axe_check(page)
        row.get_by_role("link", name="End…").click()
        expect(page.locator("#end-confirm")).to_contain_text(f"End channel {channel}?")
        axe_check(page)
        page.get_by_role("button", name="Yes, end the channel").click()
        expect(page.locator(".messagelist")).to_contain_text(f"Channel {channel} ended")
        assert redis_client.hget(keys.channel_ended(channel), "reason") == b"ended_by_staff"
    finally:
        redis_client.delete(
            keys.channels_index(), keys.channel_meta(channel), keys.channel_ended(channel), keys.channel_owner(channel)
        )
