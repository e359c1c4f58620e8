"""The trading desk as a trader (a member of the Traders role, not a superuser) in Chromium: the
audit log and its CSV, event-wide suspend and resume, the fat-finger question, and voiding a bet
with a reason the punter then reads in My bets, a market's margin, the price movers."""

from __future__ import annotations

import re
import time
from decimal import Decimal
from pathlib import Path

import pytest
from django.contrib.auth.models import Group
from playwright.sync_api import Browser, Page, expect

from odds.betting.models import Bet
from odds.catalogue.models import Market
from odds.core.roles import TRADERS, roles_sync
from reducers import topics
from reducers.movers import Move
from reducers.schemas import decode_price_update
from store import keys
from store.markets import MarketStore
from tests.browser.axe import axe_check
from tests.conftest import wait_for
from tests.factories import market_create, markets_define, user_create
from tests.integration.betting.helpers import bet_accepted, selections_of
from tests.integration.topic_records import records_from_start

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def trader(page: Page, login):
    roles_sync()
    user = user_create(balance="0")
    user.is_staff = True
    user.save()
    user.groups.add(Group.objects.get(name=TRADERS))
    return login(user)


def _second_market_on(event_id: int) -> Market:
    extra = market_create()
    Market.objects.filter(id=extra.id).update(event_id=event_id)
    return Market.objects.get(id=extra.id)


def test_a_suspension_appears_in_the_audit_log_and_its_csv(asgi_server, kafka_topics, redis_client, trader, page):
    market = market_create()
    page.goto(f"{asgi_server}/trading/event/{market.event_id}/")
    page.locator(f'#market-{market.id} [data-action="suspend"]').click()
    expect(page.locator(f"#market-{market.id}")).to_have_attribute("data-status", "suspended")

    page.get_by_role("link", name="Audit", exact=True).click()
    filters = page.get_by_role("search", name="Filter the audit log")
    filters.locator('select[name="kind"]').select_option("market_suspend")
    filters.locator('input[name="object"]').fill(f"market:{market.id}")
    filters.get_by_role("button", name="Filter").click()
    row = page.locator("#audit tbody tr[data-audit]")
    expect(row).to_have_count(1)
    expect(row).to_contain_text(trader.username)
    expect(row).to_contain_text("status: open")
    expect(row).to_contain_text("status: suspended")
    axe_check(page)

    with page.expect_download() as download:
        page.get_by_role("link", name="Export CSV").click()
    text = Path(download.value.path()).read_text(encoding="utf-8")
    lines = text.strip().splitlines()
    assert len(lines) == 2
    assert f",{trader.username},market_suspend,market,{market.id}," in lines[1]


def test_suspend_all_and_resume_all_move_every_market_of_the_event(
    asgi_server, kafka_topics, redis_client, trader, page
):
    first = market_create()
    second = _second_market_on(first.event_id)
    page.goto(f"{asgi_server}/trading/event/{first.event_id}/")
    page.get_by_role("button", name=f"Suspend all markets of {first.event.name}").click()
    expect(page.locator(".flash")).to_contain_text("Suspended 2 markets of")
    for market in (first, second):
        expect(page.locator(f"#market-{market.id}")).to_have_attribute("data-status", "suspended")
    axe_check(page)

    # One record each to the price topic, as the trader's.
    def suspended_records() -> set[int]:
        found = set()
        for record in records_from_start(topics.prices()):
            update = decode_price_update(record.value())
            if update.market_id in (first.id, second.id) and update.status == "suspended":
                found.add(update.market_id)
        return found

    wait_for(lambda: suspended_records() == {first.id, second.id}, timeout=30, what="both records")

    page.get_by_role("button", name=f"Resume all markets of {first.event.name}").click()
    expect(page.locator(".flash")).to_contain_text("Resumed 2 markets of")
    for market in (first, second):
        expect(page.locator(f"#market-{market.id}")).to_have_attribute("data-status", "open")


def test_a_tenfold_price_asks_first_and_applies_once_confirmed(asgi_server, kafka_topics, redis_client, trader, page):
    market = market_create(prices=("3.35", "3.40", "2.10"))
    home = selections_of(market)[0]
    page.goto(f"{asgi_server}/trading/event/{market.event_id}/")
    form = page.locator(f'tr[data-selection="{home.id}"] form')
    form.locator('input[name="price"]').fill("33.50")
    form.get_by_role("button", name="Set price").click()
    expect(form.locator(".action-message.error")).to_contain_text("from 3.35 to 33.50")
    apply = form.get_by_role("button", name="Apply 33.50")
    expect(apply).to_be_focused()
    axe_check(page)
    assert str(selections_of(market)[0].price) == "3.35"

    apply.click()
    expect(page.locator(f'tr[data-selection="{home.id}"] .action-message')).to_contain_text("priced at 33.50")
    wait_for(lambda: str(selections_of(market)[0].price) == "33.50", timeout=10, what="the confirmed price")


def test_a_voided_bet_shows_the_trader_reason_in_my_bets(
    asgi_server, kafka_topics, redis_client, trader, page, browser: Browser
):
    market = market_create()
    punter = user_create(balance="50.00")
    bet = bet_accepted(punter, selections_of(market)[0])
    page.goto(f"{asgi_server}/trading/event/{market.event_id}/")
    row = page.locator(f'#open-bets tr[data-bet="{bet.id}"]')
    row.get_by_role("textbox").fill("The price was a palpable error")
    row.get_by_role("button", name="Void").click()
    expect(page.locator(".flash")).to_contain_text(f"Voided bet {bet.id}")
    expect(page.locator(f'#open-bets tr[data-bet="{bet.id}"]')).to_have_count(0)
    axe_check(page)
    assert Bet.objects.get(id=bet.id).status == Bet.Status.VOID

    from django.test import Client

    client = Client()
    client.force_login(punter)
    context = browser.new_context()
    context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": asgi_server}])
    mine = context.new_page()
    mine.goto(f"{asgi_server}/my-bets/")
    mine.get_by_role("tab", name="Settled").click()
    card = mine.locator(f'#bets-settled .bet-card[data-bet-id="{bet.id}"]')
    expect(card.locator(".bet-void-reason")).to_have_text(
        re.compile(r"Voided by the bookmaker: The price was a palpable error\.")
    )
    axe_check(mine)
    context.close()


def test_the_event_page_prices_each_control_at_the_live_price(asgi_server, kafka_topics, redis_client, trader, page):
    from tests.factories import live_state_write

    market = market_create(prices=("3.35", "3.40", "2.10"))
    live_state_write(redis_client, market, prices=("2.95", "3.40", "2.30"))
    home = selections_of(market)[0]
    page.goto(f"{asgi_server}/trading/event/{market.event_id}/")
    row = page.locator(f'tr[data-selection="{home.id}"]')
    expect(row.locator("[data-price]")).to_have_text("2.95")
    expect(row.locator('input[name="price"]')).to_have_attribute("placeholder", "2.95")
    expect(row.locator("[data-price-source]")).to_have_count(0)
    axe_check(page)


def test_a_trader_sets_a_markets_margin_and_a_margin_out_of_bounds_is_refused_with_the_rule(
    asgi_server, kafka_topics, redis_client, trader, page
):
    market = market_create()
    page.goto(f"{asgi_server}/trading/event/{market.event_id}/")
    row = page.locator(f"#market-{market.id}")
    margin = row.get_by_label("Margin %")
    expect(margin).to_have_attribute("placeholder", "model")
    margin.fill("40")
    row.get_by_role("button", name="Set margin").click()
    expect(row.get_by_role("alert")).to_contain_text("percentage from 0 to 25")
    assert Market.objects.get(id=market.id).margin is None

    margin.fill("7.5")
    row.get_by_role("button", name="Set margin").click()
    expect(page.locator(f"#market-{market.id}").get_by_text("margin 7.50 %")).to_be_visible()
    expect(page.locator(f"#market-{market.id}").get_by_label("Margin %")).to_have_value("7.5")
    axe_check(page)
    assert Market.objects.get(id=market.id).margin == Decimal("0.075")


def test_the_movers_page_shows_a_window_that_moves_while_it_is_open(
    asgi_server, kafka_topics, redis_client, trader, page
):
    # After every real window the session's movers query ranks, so it is the newest.
    window = 4_200_000_000_000
    market = market_create()
    markets_define(redis_client, market)
    home = selections_of(market)[0]
    try:
        page.goto(f"{asgi_server}/trading/movers/")
        expect(page.locator("#desk-conn")).to_have_text("Live")
        expect(page.locator(f'#movers tr[data-market="{market.id}"]')).to_have_count(0)
        MarketStore(redis_client).rank_movers(
            {(window, market.id): Move(home.id, Decimal("2.10"), Decimal("2.60"), 2380)}, now_ms=int(time.time() * 1000)
        )
        row = page.locator(f'#movers tr[data-market="{market.id}"]')
        expect(row).to_contain_text("+23.80 %")
        expect(row).to_contain_text(home.name)
        expect(row).to_contain_text("drifting")
        axe_check(page)
        page.set_viewport_size({"width": 390, "height": 844})
        expect(row).to_be_visible()
        axe_check(page)
    finally:
        redis_client.delete(keys.movers(window), keys.movers_moves(window))
        redis_client.zrem(keys.movers_index(), str(window))
