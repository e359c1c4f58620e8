"""The whole pipe in a browser: Kafka → Spark → Redis → websocket → Chromium."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from reducers import topics
from tests.browser.axe import axe_check
from tests.factories import market_create, markets_define, price_update

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_price_produced_to_kafka_appears_on_the_event_page(
    asgi_server, price_query, producer, redis_client, page: Page
):
    market = market_create(prices=("2.10", "3.40", "3.50"))
    markets_define(redis_client, market)
    home = market.selections.order_by("display_order")[0]

    page.goto(f"{asgi_server}/event/{market.event_id}/")
    expect(page.locator("#conn-status")).to_have_attribute("data-state", "live")
    odds = page.locator(f'.price[data-selection="{home.id}"] .odds')
    expect(odds).to_have_text("2.10")

    update = price_update(market, seq=1, prices=("4.20", "3.30", "1.90"))
    producer.produce(topics.prices(), key=update.key(), value=update.encode())
    producer.flush(10)

    expect(odds).to_have_text("4.20", timeout=30_000)
    axe_check(page)


def test_market_suspended_at_the_source_is_shown_suspended(
    asgi_server, price_query, producer, redis_client, page: Page
):
    market = market_create(prices=("1.90", "3.60", "4.00"))
    markets_define(redis_client, market)
    home = market.selections.order_by("display_order")[0]
    page.goto(f"{asgi_server}/event/{market.event_id}/")
    expect(page.locator("#conn-status")).to_have_attribute("data-state", "live")

    update = price_update(market, seq=1, prices=("1.90", "3.60", "4.00"), status="suspended")
    producer.produce(topics.prices(), key=update.key(), value=update.encode())
    producer.flush(10)

    expect(page.locator(f'.price[data-selection="{home.id}"]')).to_be_disabled(timeout=30_000)
    expect(page.locator(f'[data-market-box="{market.id}"]')).to_have_attribute("data-status", "suspended")
    axe_check(page)
