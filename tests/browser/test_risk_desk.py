"""The risk view and the bet ticker as a trader in Chromium, fed by the real pipe: bet events on
the bets topic → the Spark liability query → the desk's staff channels → the pages. With
``A11Y_SCREENSHOTS=DIR`` both pages are saved there at a desktop and a phone size."""

from __future__ import annotations

import itertools
import os
import time
import uuid
from decimal import Decimal
from pathlib import Path

import pytest
from django.contrib.auth.models import Group
from playwright.sync_api import Page, ViewportSize, expect

from odds.betting.models import Bet
from odds.betting.services.bets import LegRequest, bet_place
from odds.catalogue.models import Event, Market, Sport
from odds.core.outbox import outbox_relay
from odds.core.roles import TRADERS, roles_sync
from reducers import topics
from reducers.schemas import BetEvent, BetLeg
from tests.browser.axe import axe_check
from tests.factories import live_state_write, market_create, markets_define, user_create

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SIZES: dict[str, ViewportSize] = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}
SCREENSHOTS = os.environ.get("A11Y_SCREENSHOTS")
# The liability query runs every 100 ms; on a loaded machine its first batches take longer.
REDUCER_MS = 60_000
MINUS = "\u2212"  # the pages write a loss with a real minus sign
_bet_ids = itertools.count(int(time.time()) % 1_000_000 * 1000)


@pytest.fixture
def trader(page: Page, login):
    roles_sync()
    user = user_create(balance="0")
    user.is_staff = True
    user.save()
    user.groups.add(Group.objects.get(name=TRADERS))
    return login(user)


def _wait_order(page: Page, ours: tuple[int, ...], expected: list[int], *, timeout_ms: int = 5000) -> None:
    """Wait until the risk view lists the events ``ours`` in the ``expected`` order (others may
    stand between them)."""
    deadline = time.monotonic() + timeout_ms / 1000
    while True:
        shown = page.locator(".risk-event").evaluate_all("sections => sections.map((s) => Number(s.dataset.event))")
        seen = [event_id for event_id in shown if event_id in ours]
        if seen == expected or time.monotonic() > deadline:
            break
        page.wait_for_timeout(200)
    assert seen == expected, f"events {ours} listed as {seen}, expected {expected}"


def _bet(
    market: Market,
    *,
    pick: int,
    stake: str,
    user_id: int = 900_000_007,
    kind: str = "placed",
    bet_id: int | None = None,
):
    selection = list(market.selections.order_by("display_order"))[pick]
    bet_id = bet_id or next(_bet_ids)
    return BetEvent(
        event_id=f"{bet_id}:{kind}",
        type=kind,
        bet_id=bet_id,
        user_id=user_id,
        stake=Decimal(stake),
        potential_return=(Decimal(stake) * selection.price).quantize(Decimal("0.01")),
        legs=(BetLeg(selection_id=selection.id, market_id=market.id, event_id=market.event_id, price=selection.price),),
        ts=int(time.time() * 1000),
    )


def _send(producer, *events: BetEvent) -> None:
    for event in events:
        producer.produce(topics.bets(), key=event.key(), value=event.encode())
    assert producer.flush(10) == 0


def _shots(page: Page, name: str) -> None:
    """Axe's rules at both sizes; the screenshots when asked for."""
    for size, viewport in SIZES.items():
        page.set_viewport_size(viewport)
        # A punter page's drawers slide to their place for the new width: look once they are there.
        page.wait_for_timeout(300)
        if SCREENSHOTS:
            Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
            page.screenshot(path=f"{SCREENSHOTS}/{name}-{size}.png", full_page=True)
        axe_check(page)
    page.set_viewport_size(SIZES["desktop"])


def test_the_risk_view_shows_each_outcomes_pl_live_and_orders_events_by_exposure(
    asgi_server, reducers_running, producer, redis_client, trader, page
):
    small, large = market_create(prices=("2.10", "3.40", "3.50")), market_create(prices=("1.50", "4.00", "6.00"))
    markets_define(redis_client, small, large)
    page.goto(f"{asgi_server}/trading/risk/")
    expect(page.locator("#desk-conn")).to_have_text("Live")

    _send(producer, _bet(small, pick=0, stake="10.00"), _bet(small, pick=1, stake="5.00"))
    event = page.locator(f'.risk-event[data-event="{small.event_id}"]')
    expect(event).to_be_visible(timeout=REDUCER_MS)
    home, draw, away = small.selections.order_by("display_order")
    # Staked £15: Home pays £21.00, Draw £17.00, nobody backed Away.
    expect(event.locator(f'tr[data-selection="{home.id}"]')).to_contain_text(f"{MINUS}£6.00")
    expect(event.locator(f'tr[data-selection="{draw.id}"]')).to_contain_text(f"{MINUS}£2.00")
    expect(event.locator(f'tr[data-selection="{away.id}"]')).to_contain_text("£15.00")
    expect(event.locator(f'tr[data-selection="{home.id}"]')).to_contain_text("worst")
    expect(event.locator('[data-role="event-worst"]')).to_have_text(f"{MINUS}£6.00")

    _send(producer, _bet(large, pick=2, stake="20.00"))  # Away at 6.00: a loss of £100.00
    ours = (small.event_id, large.event_id)
    # The session's other tests leave books of their own events: the order is read among ours.
    _wait_order(page, ours, [large.event_id, small.event_id], timeout_ms=REDUCER_MS)
    page.get_by_label("Order by").select_option("name")
    names = sorted([(small.event.name, small.event_id), (large.event.name, large.event_id)])
    _wait_order(page, ours, [event_id for _, event_id in names])
    page.get_by_label("Order by").select_option("exposure")
    page.reload()  # the first image, read from the books the reducer keeps
    for market in (small, large):
        expect(page.locator(f'.risk-event[data-event="{market.event_id}"]')).to_be_visible()
    expect(page.locator(f'.risk-event[data-event="{small.event_id}"] [data-role="event-worst"]')).to_have_text(
        f"{MINUS}£6.00"
    )
    _shots(page, "risk")

    page.locator(f'.risk-event[data-event="{large.event_id}"] h2 a').click()
    expect(page).to_have_url(f"{asgi_server}/trading/event/{large.event_id}/")


def test_the_ticker_shows_bets_newest_first_with_filters_and_links(
    asgi_server, reducers_running, producer, redis_client, trader, page
):
    market = market_create()
    markets_define(redis_client, market)
    punter = user_create(balance="0")
    page.goto(f"{asgi_server}/trading/ticker/")
    expect(page.locator("#desk-conn")).to_have_text("Live")

    first = _bet(market, pick=0, stake="2.00", user_id=punter.id)
    _send(producer, first)
    expect(page.locator(f'#ticker tr[data-bet="{first.bet_id}"]')).to_be_visible(timeout=REDUCER_MS)
    second = _bet(market, pick=2, stake="50.00", user_id=punter.id + 1000)
    _send(producer, second)
    rows = page.locator("#ticker tbody tr[data-bet]")
    expect(rows.first).to_have_attribute("data-bet", str(second.bet_id), timeout=REDUCER_MS)
    voided = _bet(market, pick=0, stake="2.00", user_id=punter.id, kind="voided", bet_id=first.bet_id)
    _send(producer, voided)
    expect(rows.first).to_have_attribute("data-kind", "voided", timeout=REDUCER_MS)
    expect(rows.first).to_contain_text("Voided")
    expect(rows.first).to_contain_text(market.event.name)

    page.get_by_label("Stake over (£)").fill("10")
    expect(page.locator(f'#ticker tr[data-bet="{first.bet_id}"]')).to_have_count(0)
    expect(page.locator(f'#ticker tr[data-bet="{second.bet_id}"]')).to_have_count(1)
    page.get_by_label("Stake over (£)").fill("")
    page.get_by_label("Customer id").fill(str(punter.id))
    expect(rows).to_have_count(2)
    expect(page).to_have_url(f"{asgi_server}/trading/ticker/?customer={punter.id}")
    page.get_by_label("In play only").check()
    expect(page.locator("#ticker tbody")).to_contain_text("No bet matches.")
    page.get_by_label("In play only").uncheck()
    customer = rows.first.get_by_role("link", name=f"#{punter.id}")
    expect(customer).to_have_attribute("href", f"/trading/customers/{punter.id}/")
    page.get_by_label("Customer id").fill("")
    expect(page.locator(f'#ticker tr[data-bet="{second.bet_id}"]')).to_have_count(1)
    _shots(page, "ticker")
    page.locator(f'#ticker tr[data-bet="{first.bet_id}"]').first.get_by_role("link", name="Home").click()
    expect(page).to_have_url(f"{asgi_server}/trading/event/{market.event_id}/#market-{market.id}")


def test_the_ticker_shows_a_held_bet_and_a_refused_one_with_its_reason(
    asgi_server, reducers_running, producer, redis_client, trader, page
):
    """Bets placed through the real placement statement, relayed from the outbox: one held by the
    in-play delay, one refused because the price moved."""
    pre_match, in_play = market_create(prices=("2.10", "3.40", "3.50")), market_create(prices=("1.80", "3.60", "4.20"))
    Event.objects.filter(id=in_play.event_id).update(status=Event.Status.IN_PLAY)
    Sport.objects.filter(competitions__events=in_play.event_id).update(in_play_delay_s=5)
    markets_define(redis_client, pre_match, in_play)
    live_state_write(redis_client, pre_match, prices=("2.00", "3.40", "3.50"))
    punter = user_create(balance="50.00")
    page.goto(f"{asgi_server}/trading/ticker/")
    expect(page.locator("#desk-conn")).to_have_text("Live")

    def place(market: Market, price: str) -> Bet:
        home = market.selections.order_by("display_order").first()
        assert home is not None
        return bet_place(
            user=punter,
            idempotency_key=uuid.uuid4().hex,
            stake=Decimal("5.00"),
            legs=[LegRequest(selection_id=home.id, price_seen=Decimal(price))],
        ).bet

    refused, held = place(pre_match, "2.10"), place(in_play, "1.80")
    assert (refused.status, held.status) == (Bet.Status.REJECTED, Bet.Status.PENDING)
    assert outbox_relay().sent >= 2
    refused_row = page.locator(f'#ticker tr[data-bet="{refused.id}"]')
    expect(refused_row).to_have_attribute("data-kind", "rejected", timeout=REDUCER_MS)
    expect(refused_row).to_contain_text("Rejected")
    expect(refused_row).to_contain_text("the price moved from 2.10 to 2.00")
    held_row = page.locator(f'#ticker tr[data-bet="{held.id}"]')
    expect(held_row).to_have_attribute("data-kind", "pending", timeout=REDUCER_MS)
    expect(held_row).to_contain_text("in-play delay, decided at")

    page.get_by_label("What").select_option("rejected")
    expect(page).to_have_url(f"{asgi_server}/trading/ticker/?kind=rejected")
    expect(refused_row).to_have_count(1)
    expect(held_row).to_have_count(0)
    page.get_by_label("What").select_option("pending")
    expect(held_row).to_have_count(1)
    expect(refused_row).to_have_count(0)
    page.reload()  # the first image, from the ticker's log, filtered as the address says
    expect(held_row).to_have_count(1)
    expect(refused_row).to_have_count(0)
    page.get_by_label("What").select_option("")
    expect(refused_row).to_have_count(1)
    _shots(page, "ticker-decisions")
    # Neither is in any book: the risk view has no event for them.
    page.goto(f"{asgi_server}/trading/risk/")
    expect(page.locator("#desk-conn")).to_have_text("Live")
    for market in (pre_match, in_play):
        expect(page.locator(f'.risk-event[data-event="{market.event_id}"]')).to_have_count(0)
