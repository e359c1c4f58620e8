"""Event lists that follow the stream, for a visitor who is not logged in: an event that kicks off
appears on In play without a reload and leaves it when it finishes; a goal changes the score on
the home page with no /live/events request (match states come over the websocket); a click or
the keyboard focus on a price survives the list being drawn anew."""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import Page, Request, expect

from odds.catalogue.models import Event
from odds.feed.matchstate import match_state_build
from reducers import topics
from reducers.subscriptions import QuerySpec, shared_channel_id
from store import keys
from tests.browser.axe import axe_check
from tests.conftest import wait_for
from tests.factories import market_create, markets_define

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def event_becomes(redis_client, market, status: str) -> None:
    """The event's status changes in the catalogue and its market's definition reaches the markets
    table, as the outbox relay and the markets query would carry it."""
    from django.db.models import F

    from odds.catalogue.models import Market

    Event.objects.filter(id=market.event_id).update(status=status)
    Market.objects.filter(id=market.id).update(version=F("version") + 1)
    markets_define(redis_client, Market.objects.select_related("event__competition__sport").get(id=market.id))


def test_a_visitor_on_in_play_sees_an_event_kick_off_and_later_finish(
    asgi_server, reducers_running, redis_client, page: Page
):
    market = market_create()
    markets_define(redis_client, market)
    fetched: list[str] = []
    page.on("request", lambda request: fetched.append(request.url) if "fragment=listing" in request.url else None)

    page.goto(f"{asgi_server}/in-play/")
    row = page.locator(f'#listing .event-row[data-event-id="{market.event_id}"]')
    expect(page.locator("#listing .empty")).to_have_text("Nothing is in play right now.")
    channel = shared_channel_id(QuerySpec(in_play=True, headline=True))
    wait_for(lambda: redis_client.exists(keys.channel_meta(channel)), timeout=60, what="the page's shared channel")

    event_becomes(redis_client, market, Event.Status.IN_PLAY)
    expect(row).to_be_visible(timeout=10_000)
    expect(row.locator(".price")).to_have_count(3)
    assert fetched, "the list was fetched again, not reloaded"
    axe_check(page)

    event_becomes(redis_client, market, Event.Status.FINISHED)
    expect(row).to_have_count(0, timeout=10_000)
    expect(page.locator("#listing .empty")).to_be_visible()


def test_a_goal_changes_the_score_on_the_home_page_with_no_live_events_request(
    asgi_server, reducers_running, producer, redis_client, page: Page
):
    market = market_create()
    Event.objects.filter(id=market.event_id).update(status=Event.Status.IN_PLAY)
    polled: list[Request] = []
    page.on("request", lambda request: polled.append(request) if "/live/events" in request.url else None)

    page.goto(f"{asgi_server}/")
    score = page.locator(f'#listing .event-row[data-event-id="{market.event_id}"] [data-score="home"]')
    expect(score).to_have_text("0")
    for seq, home in ((1, 0), (2, 1)):
        state = match_state_build(
            event_id=market.event_id,
            seq=seq,
            sport="football",
            status="in_play",
            elapsed_s=600 + seq,
            home=home,
            away=0,
            incidents=[],
            now_ms=int(time.time() * 1000),
            rate=1,
        )
        producer.produce(topics.match_states(), key=state.key(), value=state.encode())
        producer.flush(10)
    expect(score).to_have_text("1", timeout=30_000)
    page.wait_for_timeout(6_000)  # longer than the poll the page used to make
    assert polled == []


def _in_play_list(asgi_server, redis_client, page: Page, market) -> None:
    """In play open with ``market``'s event listed and the page following its shared channel."""
    Event.objects.filter(id=market.event_id).update(status=Event.Status.IN_PLAY)
    markets_define(redis_client, market)
    page.goto(f"{asgi_server}/in-play/")
    expect(page.locator(f'#listing .event-row[data-event-id="{market.event_id}"]')).to_be_visible()
    channel = shared_channel_id(QuerySpec(in_play=True, headline=True))
    wait_for(lambda: redis_client.exists(keys.channel_meta(channel)), timeout=60, what="the page's shared channel")


def test_a_click_pressed_while_the_list_is_drawn_anew_still_adds_the_price_to_the_slip(
    asgi_server, reducers_running, redis_client, page: Page
):
    market, joining = market_create(), market_create()
    _in_play_list(asgi_server, redis_client, page, market)
    price = page.locator(f'#listing .price[data-selection="{market.selections.order_by("id")[0].id}"]')
    price.hover()
    page.mouse.down()
    # Another event kicks off while the button is held: the list is fetched again meanwhile.
    with page.expect_response(lambda response: "fragment=listing" in response.url, timeout=15_000):
        event_becomes(redis_client, joining, Event.Status.IN_PLAY)
    page.wait_for_timeout(300)  # the new list arrived; with the button still held it waits
    page.mouse.up()
    expect(price).to_have_attribute("aria-pressed", "true")
    expect(page.locator(f'#listing .event-row[data-event-id="{joining.event_id}"]')).to_be_visible()
    expect(
        page.locator(f'#listing .price[data-selection="{market.selections.order_by("id")[0].id}"]')
    ).to_have_attribute("aria-pressed", "true")


def test_keyboard_focus_stays_on_the_same_price_when_the_list_is_drawn_anew(
    asgi_server, reducers_running, redis_client, page: Page
):
    market, joining = market_create(), market_create()
    _in_play_list(asgi_server, redis_client, page, market)
    selection = market.selections.order_by("-id")[0].id
    page.locator(f'#listing .price[data-selection="{selection}"]').focus()
    event_becomes(redis_client, joining, Event.Status.IN_PLAY)
    expect(page.locator(f'#listing .event-row[data-event-id="{joining.event_id}"]')).to_be_visible(timeout=10_000)
    assert page.evaluate("document.activeElement && document.activeElement.dataset.selection") == str(selection)
    page.keyboard.press("Enter")
    expect(page.locator(f'#listing .price[data-selection="{selection}"]')).to_have_attribute("aria-pressed", "true")
