"""What a punter sees beyond the prices: stakes explained, a paused stream made safe, bets
settled and cashed out live, suspended and resulted markets marked, times in their zone, phones."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from playwright.sync_api import Browser, Page, WebSocketRoute, expect

from odds.betting.models import Bet
from tests.browser.axe import axe_check
from tests.browser.test_sportsbook import LIVE, first_selection, open_event, priced, slip_leg, stream_live
from tests.factories import live_state_write, market_create, user_create

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _bet(user, selection, stake: str = "10.00", price: str = "2.00") -> Bet:
    from odds.betting.services.bets import LegRequest, bet_place

    return bet_place(
        user=user,
        idempotency_key=f"punter-{selection.id}-{stake}",
        stake=Decimal(stake),
        legs=[LegRequest(selection_id=selection.id, price_seen=Decimal(price))],
        price_policy="none",
    ).bet


def live_market(redis_client, prices: tuple[str, ...] = ("2.10", "3.40", "3.50")):
    """A market the reducers already hold as open: the slip's channel sees it tradable from its first frame."""
    market = market_create(prices=prices)
    live_state_write(redis_client, market, prices=prices)
    return market


@pytest.mark.parametrize(
    ("typed", "reason"),
    [
        ("five", "Enter an amount such as 5.00"),
        ("0", "Enter a stake above zero"),
        ("0.05", "The minimum stake is £0.10"),
        ("10000.50", "The maximum stake is £10,000.00"),
        ("2.505", "Use at most two decimal places (pence)"),
    ],
)
def test_an_invalid_stake_shows_its_reason_next_to_it(asgi_server, login, redis_client, page: Page, typed, reason):
    market = live_market(redis_client)
    selection = first_selection(market)
    login(user_create(balance="100.00"))
    page.emulate_media(reduced_motion="reduce")  # the selected price's colours, not half-way there
    open_event(page, asgi_server, market)
    page.locator(f'.price[data-selection="{selection.id}"]').click()

    stake = page.get_by_label("Stake £")
    stake.fill(typed)
    error = page.locator(f"#stake-error-{selection.id}")
    expect(error).to_have_text(reason)
    expect(error).to_have_attribute("aria-live", "polite")
    expect(stake).to_have_attribute("aria-describedby", re.compile(rf"\bstake-error-{selection.id}\b"))
    expect(stake).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#slip-place")).to_be_disabled()
    axe_check(page)

    stake.fill("5")
    expect(error).to_be_empty()
    expect(page.locator("#slip-place")).to_be_enabled()


def test_the_slip_keeps_its_selections_after_placing_when_asked(asgi_server, login, redis_client, page: Page):
    market = live_market(redis_client)
    selection = first_selection(market)
    login(user_create(balance="100.00"))
    open_event(page, asgi_server, market)
    page.locator(f'.price[data-selection="{selection.id}"]').click()
    page.get_by_label("Keep selections in the slip after placing").check()
    page.get_by_label("Stake £").fill("5")
    page.locator("#slip-place").click()

    expect(page.locator(".receipt")).to_contain_text("Bet placed")
    expect(slip_leg(page, selection.id)).to_be_visible()
    expect(page.get_by_label("Stake £")).to_have_value("")


def test_a_refused_bet_is_explained_in_words(asgi_server, login, redis_client, page: Page):
    market = live_market(redis_client)
    login(user_create(balance="1.00"))
    open_event(page, asgi_server, market)
    page.locator(f'.price[data-selection="{first_selection(market).id}"]').click()
    page.get_by_label("Stake £").fill("5")
    page.locator("#slip-place").click()

    alert = page.locator(".slip-alert")
    expect(alert).to_have_attribute("data-code", "insufficient_funds")
    expect(alert).to_have_text("Your balance is too low for this stake.")


def test_a_paused_stream_disables_place_bet_and_recovery_clears_it(
    asgi_server, price_query, login, redis_client, page: Page
):
    market = live_market(redis_client)
    selection = first_selection(market)
    login(user_create(balance="1.00"))
    blocked = {"now": False}

    def socket(ws: WebSocketRoute) -> None:
        if blocked["now"]:
            ws.close()
        else:
            ws.connect_to_server()

    page.route_web_socket(re.compile(r"/ws/odds/"), socket)
    open_event(page, asgi_server, market)
    page.locator(f'.price[data-selection="{selection.id}"]').click()
    page.get_by_label("Stake £").fill("5")
    expect(page.locator("#betslip")).to_have_attribute("data-channel-seq", re.compile(r"\d+"), timeout=LIVE)
    page.locator("#slip-place").click()  # refused: the balance is too low
    expect(page.locator(".slip-alert")).to_have_attribute("data-code", "insufficient_funds")

    blocked["now"] = True
    page.evaluate("window.oddsClient.reconnect()")
    expect(page.locator("#conn-status")).to_have_attribute("data-state", "reconnecting")
    expect(page.locator("#stream-paused")).to_be_visible()
    expect(page.locator("body")).to_have_attribute("data-stream", "down")
    place = page.locator("#slip-place")
    expect(place).to_be_disabled()
    expect(place).to_have_text("Place bet: prices paused")
    expect(page.locator(".slip-alert")).to_have_attribute("data-code", "offline")
    expect(page.locator(".slip-alert")).to_contain_text("Prices are paused while the connection is down")
    axe_check(page)

    blocked["now"] = False
    expect(page.locator("#conn-status")).to_have_attribute("data-state", "live", timeout=15_000)
    expect(page.locator("#stream-paused")).to_be_hidden()
    expect(page.locator("body")).to_have_attribute("data-stream", "live")
    expect(page.locator(".slip-alert")).to_be_empty()  # the refusal from before is out of date
    expect(place).to_be_enabled()


def test_the_connection_state_shows_on_a_phone(asgi_server, browser: Browser):
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    try:
        page.goto(f"{asgi_server}/")
        expect(page.locator("#conn-status")).to_have_attribute("data-state", "live")
        expect(page.locator("#conn-status")).to_be_visible()
        page.evaluate("window.oddsClient.stop()")
        expect(page.locator("#conn-status")).to_have_text("Offline")
        expect(page.locator("#conn-status")).to_be_visible()
        expect(page.locator("#stream-paused")).to_be_visible()
    finally:
        context.close()


def test_a_settled_bet_brings_a_notice_and_the_new_balance_without_a_reload(asgi_server, login, page: Page):
    from odds.betting.services.settlement import market_bets_settle
    from odds.catalogue.services.markets import market_result

    market = market_create(prices=("2.50", "3.20", "2.90"))
    selection = first_selection(market)
    user = login(user_create(balance="100.00"))
    bet = _bet(user, selection, stake="5.00", price="2.50")
    page.goto(f"{asgi_server}/my-bets/")
    expect(page.locator("#conn-status")).to_have_attribute("data-state", "live")
    expect(page.locator(f'#bets-open .bet-card[data-bet-id="{bet.id}"]')).to_be_visible()
    expect(page.locator("#wallet-balance")).to_have_text("£95.00")

    market_result(market=market, winners=[selection.id])
    market_bets_settle(market_id=market.id)

    expect(page.locator("#notices .notice")).to_have_text(re.compile(r"Your bet on Home won £12\.50"))
    expect(page.locator("#wallet-balance")).to_have_text("£107.50")
    expect(page.locator(f'#bets-open .bet-card[data-bet-id="{bet.id}"]')).to_have_count(0)
    expect(page.locator(f'#bets-settled .bet-card[data-bet-id="{bet.id}"]')).to_contain_text("Won")
    axe_check(page)


def test_a_settled_market_shows_its_winner(asgi_server, page: Page):
    from odds.betting.services.settlement import market_bets_settle
    from odds.catalogue.services.markets import market_result

    market = market_create(prices=("2.50", "3.20", "2.90"))
    draw = market.selections.order_by("display_order")[1]
    market_result(market=market, winners=[draw.id])
    assert market_bets_settle(market_id=market.id).market_settled
    page.goto(f"{asgi_server}/event/{market.event_id}/")
    box = page.locator(f'[data-market-box="{market.id}"]')
    expect(box.locator(".market-winner")).to_have_text(re.compile(r"Winner: Draw"))
    expect(box.locator(f'.price[data-selection="{draw.id}"] .mark-winner')).to_be_visible()
    home = box.locator(f'.price[data-selection="{first_selection(market).id}"]')
    expect(home.locator(".mark-suspended")).to_have_text("⊘ Closed")
    axe_check(page)


def test_cash_out_asks_to_confirm_the_value_and_asks_again_when_it_moves(
    asgi_server, price_query, publish, login, page: Page
):
    market = market_create(prices=("2.00", "3.40", "3.80"))
    selection = first_selection(market)
    user = login(user_create(balance="50.00"))
    open_event(page, asgi_server, market)
    stream_live(page, publish, market, ("2.00", "3.40", "3.80"))
    bet = _bet(user, selection)

    page.goto(f"{asgi_server}/my-bets/")
    card = page.locator(f'.bet-card[data-bet-id="{bet.id}"]')
    expect(card.locator(".cash-out")).to_have_text("Cash out £9.50", timeout=LIVE)
    page.on("dialog", lambda dialog: pytest.fail(f"a browser dialog opened: {dialog.message}"))
    card.locator(".cash-out").click()
    confirm = card.locator(".cash-out-confirm")
    expect(confirm).to_be_visible()
    expect(confirm.locator(".cash-out-question")).to_have_text("Cash out this bet for £9.50?")
    expect(confirm.locator(".cash-out-yes")).to_be_focused()
    axe_check(page)

    publish(priced(market, "4.00", "3.40", "1.90"))
    expect(confirm.locator(".cash-out-question")).to_have_text("Cash out this bet for £4.75?", timeout=LIVE)
    expect(card.locator(".cash-out-note")).to_contain_text("The value changed to £4.75")
    bet.refresh_from_db()
    assert bet.status == Bet.Status.ACCEPTED  # nothing happens until the punter confirms

    confirm.locator(".cash-out-yes").click()
    expect(page.locator(f'#bets-settled .bet-card[data-bet-id="{bet.id}"]')).to_contain_text("Cashed out")
    expect(page.locator("#wallet-balance")).to_have_text("£44.75")
    expect(page.locator("#notices .notice")).to_contain_text("was cashed out for £4.75")
    bet.refresh_from_db()
    assert (bet.status, bet.payout) == (Bet.Status.CASHED_OUT, Decimal("4.75"))


def test_a_suspended_price_is_marked_and_announced(asgi_server, price_query, publish, page: Page):
    from tests.browser.test_sportsbook import next_seq
    from tests.factories import price_update

    market = market_create(prices=("2.50", "3.20", "2.90"))
    selection = first_selection(market)
    open_event(page, asgi_server, market)
    stream_live(page, publish, market, ("2.50", "3.20", "2.90"))
    price = page.locator(f'.price[data-selection="{selection.id}"]')
    expect(price.locator(".mark-suspended")).to_be_hidden()

    publish(price_update(market, seq=next_seq(market), prices=("2.50", "3.20", "2.90"), status="suspended"))
    expect(price).to_be_disabled(timeout=LIVE)
    expect(price.locator(".mark-suspended")).to_be_visible()
    expect(price.locator(".mark-suspended")).to_have_text(re.compile(r"Suspended"))
    expect(page.locator("#price-announcer")).to_contain_text("Home, Draw, Away")
    expect(page.locator("#price-announcer")).to_contain_text("suspended")
    expect(page.locator("#price-announcer")).to_have_attribute("aria-live", "polite")
    axe_check(page)


def test_start_times_are_shown_in_the_punters_time_zone(asgi_server, browser: Browser):
    from datetime import UTC, datetime

    from odds.catalogue.models import Event

    market = market_create()
    Event.objects.filter(id=market.event_id).update(starts_at=datetime(2030, 6, 1, 19, 45, tzinfo=UTC))
    context = browser.new_context(timezone_id="Asia/Tokyo")
    page = context.new_page()
    try:
        page.goto(f"{asgi_server}/event/{market.event_id}/")
        expect(page.locator(".event-head [data-scoreboard] time")).to_have_text("Sunday 2 June, 04:45")
    finally:
        context.close()


def test_on_a_phone_long_names_wrap_and_the_slip_button_covers_no_price(asgi_server, browser: Browser):
    from odds.catalogue.models import Event

    market = market_create()
    for _ in range(8):
        market_create()
    long_name = "Borussia Mönchengladbach Amateure Under Twenty-Threes"
    Event.objects.filter(id=market.event_id).update(home=long_name)
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    try:
        page.goto(f"{asgi_server}/sport/football/")
        name = page.locator(".team-name", has_text=long_name)
        expect(name).to_be_visible()
        assert name.evaluate("n => n.scrollWidth <= n.clientWidth + 1"), "the name is cut off"
        page.locator(".price").first.click()  # the slip button appears with a selection
        page.locator(".slip-close").click()
        page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
        toggle = page.locator(".slip-toggle").bounding_box()
        assert toggle is not None
        # Every price's box read in one go: the live list may re-render its rows between two
        # reads, and a row's old nodes then have no box.
        boxes = page.locator(".price:visible").evaluate_all(
            "prices => prices.map((p) => { const r = p.getBoundingClientRect();"
            " return {x: r.x, y: r.y, width: r.width, height: r.height}; })"
        )
        assert boxes, "prices on the page"
        for box in boxes:
            overlaps = box["y"] < toggle["y"] + toggle["height"] and toggle["y"] < box["y"] + box["height"]
            overlaps = overlaps and box["x"] < toggle["x"] + toggle["width"] and toggle["x"] < box["x"] + box["width"]
            assert not overlaps, (box, toggle)
    finally:
        context.close()


def test_a_euro_punter_stakes_and_reads_every_amount_in_euros(asgi_server, login, redis_client, page: Page):
    market = live_market(redis_client)
    selection = first_selection(market)
    login(user_create(balance="100.00", currency="EUR"))
    open_event(page, asgi_server, market)
    expect(page.locator("#wallet-balance")).to_have_text("€100.00")
    page.locator(f'.price[data-selection="{selection.id}"]').click()

    stake = page.get_by_label("Stake €")
    stake.fill("0.05")
    expect(page.locator(f"#stake-error-{selection.id}")).to_have_text("The minimum stake is €0.10")
    stake.fill("€5")
    expect(page.locator("#slip-place")).to_have_text("Place bet €5.00")
    page.locator("#slip-place").click()

    expect(page.locator(".receipt")).to_contain_text("Stake €5.00")
    expect(page.locator("#wallet-balance")).to_have_text("€95.00")
    assert "£" not in page.locator("#betslip").inner_text()
