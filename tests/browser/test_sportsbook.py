"""The punter's sportsbook in Chromium against the whole running pipe: Kafka → Spark → Redis →
websocket, the REST API and PostgreSQL. Prices are produced to Kafka exactly as the feed does."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from decimal import Decimal

import pytest
from playwright.sync_api import Page, expect

from odds.betting.models import Bet
from odds.catalogue.models import Market
from tests.browser.axe import axe_check
from tests.factories import live_state_write, market_create, price_update, user_create

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LIVE = 30_000  # ms: the first price through a cold Spark query can take a while
# Trader suspension to the page, end to end. The edge and the browser take tens of milliseconds
# and are held to a second; the Spark micro-batch reducer takes most of the rest. The bound here
# is loose because the test session shares two cores with Chromium and every other test service;
# the figure that counts is `make bench`'s suspension stage (docs/performance.md).
SUSPEND_BUDGET_MS = float(os.environ.get("SUSPEND_BUDGET_MS", "5000"))


def first_selection(market: Market):
    return market.selections.order_by("display_order")[0]


def open_event(page: Page, server: str, market: Market) -> None:
    page.goto(f"{server}/event/{market.event_id}/")
    expect(page.locator("#conn-status")).to_have_attribute("data-state", "live")


def slip_leg(page: Page, selection_id: int):
    return page.locator(f'.slip-leg[data-selection-id="{selection_id}"]')


def next_seq(market: Market) -> int:
    """The market's next source sequence, from the counter the feed and traders share."""
    from odds.core.connections import redis_shared
    from store.markets import sequences_next

    return sequences_next(redis_shared(), [market.id])[0]


def priced(market: Market, *prices: str):
    return price_update(market, seq=next_seq(market), prices=prices)


def stream_live(page: Page, publish: Callable[..., None], market: Market, prices: tuple[str, ...]) -> None:
    """Give the market a live state through Kafka and wait until the event page has it."""
    update = priced(market, *prices)
    publish(update)
    box = page.locator(f'[data-market-box="{market.id}"]')
    expect(box).to_have_attribute("data-seq", str(update.seq), timeout=LIVE)


def test_two_selections_build_an_accumulator_with_the_combined_odds(asgi_server, page: Page):
    first = market_create(prices=("2.10", "3.40", "3.50"))
    second = market_create(prices=("1.85", "3.60", "4.20"))

    page.goto(f"{asgi_server}/sport/football/")
    page.locator(f'.price[data-selection="{first_selection(first).id}"]').click()
    page.locator(f'.price[data-selection="{first_selection(second).id}"]').click()

    expect(page.locator("#slip-mode-accumulator")).to_have_attribute("aria-pressed", "true")
    expect(page.locator("[data-combined-odds]")).to_have_attribute("data-combined-odds", "3.89")  # 3.885 half up
    page.get_by_label("Stake £").fill("10")
    expect(page.locator("[data-total-return]")).to_have_text("£38.85")
    expect(page.locator(f'.price[data-selection="{first_selection(first).id}"]')).to_have_attribute(
        "aria-pressed", "true"
    )
    # Anonymous punters see the prices and are asked to log in to bet.
    expect(page.locator("#slip-place")).to_have_text("Log in to place bets")
    axe_check(page)


def test_placing_a_bet_lowers_the_balance_and_lists_it_in_my_bets(asgi_server, price_query, publish, login, page: Page):
    market = market_create(prices=("2.50", "3.20", "2.90"))
    selection = first_selection(market)
    user = login(user_create(balance="100.00"))
    open_event(page, asgi_server, market)
    stream_live(page, publish, market, ("2.50", "3.20", "2.90"))
    expect(page.locator("#wallet-balance")).to_have_text("£100.00")

    page.locator(f'.price[data-selection="{selection.id}"]').click()
    page.get_by_label("Stake £").fill("5")
    expect(slip_leg(page, selection.id).locator(".leg-return")).to_have_text("Returns £12.50")
    page.locator("#slip-place").click()

    receipt = page.locator(".receipt")
    expect(receipt).to_contain_text("Bet placed")
    expect(page.locator("#wallet-balance")).to_have_text("£95.00")
    axe_check(page)
    bet = Bet.objects.get(user=user)
    assert (bet.status, bet.stake, bet.odds) == (Bet.Status.ACCEPTED, Decimal("5.00"), Decimal("2.50"))

    page.goto(f"{asgi_server}/my-bets/")
    card = page.locator(f'#bets-open .bet-card[data-bet-id="{bet.id}"]')
    expect(card).to_contain_text(selection.name)
    expect(card).to_contain_text("£12.50")
    # The live cash-out value comes from the punter's "bets" channel.
    expect(card.locator(".cash-out")).to_have_text("Cash out £4.75", timeout=LIVE)
    axe_check(page)


def test_cash_out_pays_the_live_value_into_the_wallet(asgi_server, price_query, publish, login, page: Page):
    from odds.betting.services.bets import LegRequest, bet_place

    market = market_create(prices=("2.00", "3.40", "3.80"))
    selection = first_selection(market)
    user = login(user_create(balance="50.00"))
    open_event(page, asgi_server, market)
    stream_live(page, publish, market, ("2.00", "3.40", "3.80"))
    bet = bet_place(
        user=user,
        idempotency_key="cash-out-test",
        stake=Decimal("10.00"),
        legs=[LegRequest(selection_id=selection.id, price_seen=Decimal("2.00"))],
        price_policy="none",
    ).bet

    page.goto(f"{asgi_server}/my-bets/")
    button = page.locator(f'.bet-card[data-bet-id="{bet.id}"] .cash-out')
    expect(button).to_have_text("Cash out £9.50", timeout=LIVE)  # 20.00 / 2.00 less 5 %
    publish(priced(market, "4.00", "3.40", "1.90"))
    expect(button).to_have_text("Cash out £4.75", timeout=LIVE)  # the value follows the price
    button.click()
    page.locator(f'.bet-card[data-bet-id="{bet.id}"] .cash-out-yes').click()

    expect(page.locator(f'#bets-settled .bet-card[data-bet-id="{bet.id}"]')).to_contain_text("Cashed out")
    expect(page.locator("#wallet-balance")).to_have_text("£44.75")
    axe_check(page)
    bet.refresh_from_db()
    assert (bet.status, bet.payout) == (Bet.Status.CASHED_OUT, Decimal("4.75"))


def test_a_price_change_before_placement_is_accepted_only_by_the_punter(
    asgi_server, price_query, publish, login, page: Page, redis_client
):
    market = market_create(prices=("2.50", "3.20", "2.90"))
    selection = first_selection(market)
    user = login(user_create(balance="100.00"))
    open_event(page, asgi_server, market)
    stream_live(page, publish, market, ("2.50", "3.20", "2.90"))
    page.locator(f'.price[data-selection="{selection.id}"]').click()
    page.get_by_label("Stake £").fill("5")
    expect(page.locator("#slip-policy")).to_have_value("none")

    # The price drifts on the stream: the slip shows the change and waits for the punter.
    publish(priced(market, "2.20", "3.30", "3.10"))
    leg = slip_leg(page, selection.id)
    expect(leg.locator(".leg-notice")).to_have_text("Price changed from 2.50 to 2.20", timeout=LIVE)
    expect(page.locator("#slip-place")).to_have_text("Accept price changes")
    axe_check(page)
    page.locator("#slip-place").click()
    expect(page.locator("#slip-place")).to_have_text("Place bet £5.00")

    # It moves again before the click reaches the server (state written, not yet streamed):
    # the server refuses with the new price, which the slip offers to accept.
    live_state_write(redis_client, market, prices=("2.00", "3.40", "3.30"), seq=next_seq(market))
    page.locator("#slip-place").click()
    expect(page.locator(".slip-alert")).to_have_attribute("data-code", "price_changed")
    expect(leg.locator(".leg-notice")).to_have_text("Price changed from 2.20 to 2.00")
    axe_check(page)
    assert Bet.objects.get(user=user).status == Bet.Status.REJECTED

    page.locator("#slip-place").click()  # accept 2.00
    page.locator("#slip-place").click()  # place
    expect(page.locator(".receipt")).to_contain_text("@ 2.00")
    placed = Bet.objects.filter(user=user, status=Bet.Status.ACCEPTED).get()
    assert placed.odds == Decimal("2.00")


def test_a_market_suspended_by_a_trader_reaches_the_page_within_a_second_of_the_reducer(
    asgi_server, price_query, publish, login, page: Page
):
    from odds.catalogue.services.markets import market_suspend

    market = market_create(prices=("1.90", "3.60", "4.00"))
    selection = first_selection(market)
    login(user_create(balance="100.00"))
    open_event(page, asgi_server, market)
    stream_live(page, publish, market, ("1.90", "3.60", "4.00"))
    page.locator(f'.price[data-selection="{selection.id}"]').click()
    page.get_by_label("Stake £").fill("5")
    expect(page.locator("#betslip")).to_have_attribute("data-channel-seq", re.compile(r"\d+"), timeout=LIVE)
    expect(page.locator("#slip-place")).to_be_enabled()

    suspended_at = time.time() * 1000
    market_suspend(market=market)
    expect(page.locator(f'.price[data-selection="{selection.id}"]')).to_be_disabled(timeout=LIVE)
    expect(page.locator(f'[data-market-box="{market.id}"]')).to_have_attribute("data-status", "suspended")
    expect(slip_leg(page, selection.id)).to_have_attribute("data-state", "suspended", timeout=1000)
    expect(page.locator("#slip-place")).to_be_disabled()
    expect(page.locator(".slip-alert")).to_have_attribute("data-code", "suspended")
    axe_check(page)

    # Where the time went: the frame carries the reducer's clock, the client its arrival time.
    ts = page.evaluate(f"window.oddsClient.book.get({market.id}).ts")
    arrived = page.evaluate(f"window.oddsClient.receivedAt({market.id})")
    stages = {
        "to_kafka": ts["kafka"] - suspended_at,
        "reducer": ts["reducer"] - ts["kafka"],
        "edge": arrived - ts["reducer"],
    }
    print("trader suspension → page (ms):", {k: round(v) for k, v in stages.items()})
    assert stages["edge"] < 1000, stages  # reducer → websocket → browser
    assert arrived - suspended_at < SUSPEND_BUDGET_MS, stages


def test_a_dropped_websocket_resumes_the_slip_channel_without_a_gap(
    asgi_server, price_query, publish, login, page: Page, redis_client
):
    from store import keys

    market = market_create(prices=("2.50", "3.20", "2.90"))
    selection = first_selection(market)
    login(user_create(balance="100.00"))
    open_event(page, asgi_server, market)
    stream_live(page, publish, market, ("2.50", "3.20", "2.90"))
    page.locator(f'.price[data-selection="{selection.id}"]').click()
    channel = page.wait_for_function(
        "() => { const s = window.sportsbook, id = s.slip.channelId; return id && s.client.channelSeq(id) > 0 && id }",
        timeout=LIVE,
    ).json_value()
    seen = page.evaluate(f"window.oddsClient.channelSeq({channel!r})")

    page.evaluate("window.oddsClient.stop()")
    expect(page.locator("#conn-status")).to_have_attribute("data-state", "offline")
    updates = [priced(market, price, "3.20", "2.90") for price in ("2.60", "2.70", "2.80")]
    publish(*updates)

    def logged() -> int:
        raw = redis_client.hget(keys.channel_meta(channel), "seq")
        state = redis_client.hget(keys.market_state(market.id), "seq")
        return int(raw) if raw and state and int(state) == updates[-1].seq else 0

    deadline = time.monotonic() + LIVE / 1000
    while logged() <= seen and time.monotonic() < deadline:
        time.sleep(0.1)
    assert logged() > seen, "the reducers did not stream the missed prices"

    page.evaluate("window.oddsClient.start()")
    expect(slip_leg(page, selection.id).locator(".leg-price")).to_have_attribute("data-price", "2.80", timeout=LIVE)
    expect(page.locator(f'.price[data-selection="{selection.id}"]')).to_have_attribute("data-price", "2.80")
    stats = page.evaluate("window.oddsClient.stats")
    assert stats["resumes"] == 1, stats
    assert (stats["gaps"], stats["resyncs"]) == (0, 0), stats
    assert page.evaluate(f"window.oddsClient.channelSeq({channel!r})") >= logged()
    axe_check(page)


def test_the_odds_format_is_remembered_across_pages(asgi_server, page: Page):
    market = market_create(prices=("2.50", "1.91", "4.33"))
    selections = list(market.selections.order_by("display_order"))
    page.goto(f"{asgi_server}/event/{market.event_id}/")
    page.get_by_label("Odds format").select_option("fractional")
    odds = [page.locator(f'.price[data-selection="{s.id}"] .odds') for s in selections]
    expect(odds[0]).to_have_text("6/4")
    expect(odds[1]).to_have_text("10/11")

    page.reload()
    expect(odds[2]).to_have_text("10/3")
    page.get_by_label("Odds format").select_option("american")
    expect(odds[0]).to_have_text("+150")
    expect(odds[1]).to_have_text("-110")
    axe_check(page)


def test_an_in_play_bet_shows_pending_then_its_rejection_and_the_stake_back(
    asgi_server, login, redis_client, page: Page
):
    from datetime import timedelta

    from django.utils import timezone

    from odds.betting.services.bet_delay import bets_delay_resolve
    from odds.catalogue.models import Event, Sport

    market = market_create(prices=("2.50", "3.20", "2.90"))
    Event.objects.filter(id=market.event_id).update(status=Event.Status.IN_PLAY)
    Sport.objects.filter(competitions__events=market.event_id).update(in_play_delay_s=3)
    live_state_write(redis_client, market, prices=("2.50", "3.20", "2.90"), seq=next_seq(market))
    selection = first_selection(market)
    login(user_create(balance="100.00"))
    open_event(page, asgi_server, market)

    page.locator(f'.price[data-selection="{selection.id}"]').click()
    page.get_by_label("Stake £").fill("5")
    page.locator("#slip-place").click()

    receipt = page.locator(".receipt")
    expect(receipt).to_contain_text("Bet pending")
    expect(receipt.locator(".receipt-timer")).to_have_text(re.compile(r"Decided in [1-3] s"))
    axe_check(page)
    expect(page.locator("#wallet-balance")).to_have_text("£95.00")
    # A goal: the market is suspended (and reopened) while the bet is held.
    Market.objects.filter(id=market.id).update(suspended_at=timezone.now())
    bet = Bet.objects.get(legs__market=market)
    assert bet.accept_at is not None
    time.sleep(max(0.0, (bet.accept_at - timezone.now() + timedelta(milliseconds=50)).total_seconds()))
    assert bets_delay_resolve().rejected == 1

    expect(receipt).to_contain_text("Bet not accepted")
    expect(receipt).to_contain_text("The market was suspended, so the bet was not accepted. Your stake is back")
    expect(page.locator("#wallet-balance")).to_have_text("£100.00")
    axe_check(page)


def test_an_in_play_bet_refused_for_its_price_keeps_its_selection_with_the_new_price_to_accept(
    asgi_server, price_query, publish, login, redis_client, page: Page
):
    from datetime import timedelta

    from django.utils import timezone

    from odds.betting.services.bet_delay import bets_delay_resolve
    from odds.catalogue.models import Event, Sport

    market = market_create(prices=("2.50", "3.20", "2.90"))
    Event.objects.filter(id=market.event_id).update(status=Event.Status.IN_PLAY)
    Sport.objects.filter(competitions__events=market.event_id).update(in_play_delay_s=3)
    selection = first_selection(market)
    login(user_create(balance="100.00"))
    open_event(page, asgi_server, market)
    stream_live(page, publish, market, ("2.50", "3.20", "2.90"))

    page.locator(f'.price[data-selection="{selection.id}"]').click()
    page.get_by_label("Stake £").fill("5")
    page.locator("#slip-place").click()
    expect(page.locator(".receipt")).to_contain_text("Bet pending")
    expect(page.locator(".slip-leg")).to_have_count(0)
    # The price shortens during the in-play delay: the held bet is refused for it.
    stream_live(page, publish, market, ("2.20", "3.40", "3.10"))
    bet = Bet.objects.get(legs__market=market)
    assert bet.accept_at is not None
    time.sleep(max(0.0, (bet.accept_at - timezone.now() + timedelta(milliseconds=50)).total_seconds()))
    assert bets_delay_resolve().rejected == 1

    leg = slip_leg(page, selection.id)
    expect(leg).to_have_count(1, timeout=15_000)
    expect(leg.locator(".leg-price")).to_have_text("2.20")
    expect(leg.locator(".leg-notice")).to_have_text("Price changed from 2.50 to 2.20")
    expect(page.get_by_label("Stake £")).to_have_value("5")
    place = page.locator("#slip-place")
    expect(place).to_have_text("Accept price changes")
    expect(page.locator(".slip-alert")).to_contain_text("Your selections are back in the slip")
    axe_check(page)
    place.click()
    expect(place).to_have_text("Place bet £5.00")
