"""A page is built from the stream's current state and its websocket starts after it: the page
shows live prices at once, its watch names what it holds, and the image brings only what moved."""

from __future__ import annotations

import json
import time

import pytest
from playwright.sync_api import Page, WebSocket, expect

from reducers.prices import conflate
from store.markets import MarketStore
from tests.factories import live_state_write, market_create, price_update

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _frames_until(frames: list[dict], kind: str, page: Page, timeout_s: float = 15) -> dict:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = [f for f in frames if f.get("type") == kind]
        if found:
            return found[0]
        page.wait_for_timeout(100)
    raise AssertionError(f"no {kind} frame within {timeout_s} s: {frames}")


def test_the_page_starts_its_stream_after_what_it_was_built_with(asgi_server, redis_client, page: Page):
    market = market_create(prices=("2.10", "3.40", "3.50"))
    live_state_write(redis_client, market, prices=("2.40", "3.20", "3.10"), seq=8)
    home = market.selections.order_by("display_order")[0]
    sent: list[dict] = []
    received: list[dict] = []

    def follow(ws: WebSocket) -> None:
        ws.on("framesent", lambda payload: sent.append(json.loads(payload)))
        ws.on("framereceived", lambda payload: received.append(json.loads(payload)))

    page.on("websocket", follow)
    page.goto(f"{asgi_server}/event/{market.event_id}/")
    expect(page.locator(f'.price[data-selection="{home.id}"] .odds')).to_have_text("2.40")  # live, not 2.10
    expect(page.locator("#conn-status")).to_have_attribute("data-state", "live")

    watch = _frames_until(sent, "watch", page)
    assert watch["since"] == {str(market.id): [8, "open"]}
    assert _frames_until(received, "image", page)["markets"] == []  # nothing moved since the page

    moved = price_update(market, seq=9, prices=("2.50", "3.20", "3.00"))
    MarketStore(redis_client).apply(conflate([(moved, 1)]))
    expect(page.locator(f'[data-market-box="{market.id}"]')).to_have_attribute("data-seq", "9")
    expect(page.locator(f'.price[data-selection="{home.id}"] .odds')).to_have_text("2.50")
