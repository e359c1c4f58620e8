"""Correcting a settled market's result in Chromium (docs/resettlement.md): from the event page a
trader gives the market its corrected result, reads the preview of every amount that will move
and confirms it; the punter's bet and balance follow. With ``A11Y_SCREENSHOTS=DIR`` the preview
is saved there at a desktop and a phone size."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.contrib.auth.models import Group
from playwright.sync_api import Page, expect

from odds.audit.models import AuditEntry
from odds.betting.models import Bet, Wallet
from odds.betting.services.settlement import market_bets_settle
from odds.catalogue.services.markets import market_result
from odds.core.roles import TRADERS, roles_sync
from tests.browser.test_risk_desk import _shots
from tests.factories import market_create, user_create
from tests.integration.betting.helpers import bet_accepted

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

MINUS = "\N{MINUS SIGN}"


@pytest.fixture
def trader(page: Page):
    roles_sync()
    user = user_create(balance="0")
    user.is_staff = True
    user.save()
    user.groups.add(Group.objects.get(name=TRADERS))
    return user


def test_a_trader_corrects_a_result_from_the_event_page_after_reading_what_moves(
    asgi_server, login, trader, page: Page
):
    market = market_create(prices=("2.10", "3.40", "3.50"))
    home, draw, away = market.selections.order_by("display_order")
    winner_backer, draw_backer = user_create(balance="100.00"), user_create(balance="100.00")
    paid = bet_accepted(winner_backer, home, stake="10.00")
    lost = bet_accepted(draw_backer, draw, stake="10.00")
    market_result(market=market, winners=[home.id])
    market_bets_settle(market_id=market.id)

    login(trader)
    page.goto(f"{asgi_server}/trading/event/{market.event_id}/")
    page.locator(f'#market-{market.id} [data-action="resettle"]').click()
    expect(page.locator("h1")).to_contain_text("Correct the result")
    page.get_by_label(f"Corrected result of {home.name}").select_option("lost")
    page.get_by_label(f"Corrected result of {draw.name}").select_option("won")
    page.get_by_label("Why").fill("draw entered as a home win")
    page.get_by_role("button", name="Preview").click()

    preview = page.locator("#resettle-preview")
    expect(preview).to_contain_text(f"{home.name}: won → lost")
    expect(preview.locator(f'tr[data-bet="{paid.id}"]')).to_contain_text(f"{MINUS}£21.00")
    expect(preview.locator(f'tr[data-bet="{paid.id}"]')).to_contain_text("clawed back")
    expect(preview.locator(f'tr[data-bet="{lost.id}"]')).to_contain_text("+£34.00")
    expect(preview.locator("#resettle-totals")).to_contain_text("£34.00")
    _shots(page, "resettle")
    assert Wallet.objects.get(user=winner_backer).balance == Decimal("111.00"), "a preview moves nothing"

    page.get_by_role("button", name="Resettle 2 bets").click()
    expect(page.locator(".flash")).to_contain_text(f"Resettled {market.name}: 2 bets moved")
    expect(page.locator(f"#market-{market.id}")).to_be_visible()
    assert Bet.objects.get(id=paid.id).status == Bet.Status.LOST
    assert Bet.objects.get(id=lost.id).status == Bet.Status.WON
    assert Wallet.objects.get(user=winner_backer).balance == Decimal("90.00")
    assert Wallet.objects.get(user=draw_backer).balance == Decimal("124.00")
    entry = AuditEntry.objects.get(kind=AuditEntry.Kind.MARKET_RESETTLE)
    assert (entry.actor, entry.reason) == (trader.username, "draw entered as a home win")
    assert away.name in entry.after["results"]


def test_a_resettled_bet_reaches_the_ticker_with_what_the_correction_did(
    asgi_server, login, trader, reducers_running, redis_client, page: Page
):
    """The correction's record on the bets topic, relayed from the outbox through the liability
    query to a trader's ticker: the bet's row says which outcome it moved to and the balance."""
    from odds.betting.services.resettlement import market_resettle, resettlement_preview
    from odds.core.outbox import outbox_relay
    from tests.browser.test_risk_desk import REDUCER_MS
    from tests.factories import markets_define

    market = market_create(prices=("2.10", "3.40", "3.50"))
    markets_define(redis_client, market)
    home, draw, away = market.selections.order_by("display_order")
    bet = bet_accepted(user_create(balance="100.00"), home, stake="10.00")
    market_result(market=market, winners=[home.id])
    market_bets_settle(market_id=market.id)
    market.refresh_from_db()
    login(trader)
    page.goto(f"{asgi_server}/trading/ticker/")
    expect(page.locator("#desk-conn")).to_have_text("Live")

    results = {home.id: "lost", draw.id: "won", away.id: "lost"}
    preview = resettlement_preview(market=market, results=results)
    market_resettle(market_id=market.id, results=results, digest=preview.digest, by=trader, reason="draw")
    assert outbox_relay().sent >= 1
    row = page.locator(f'#ticker tr[data-bet="{bet.id}"][data-kind="resettled"]')
    expect(row).to_have_count(1, timeout=REDUCER_MS)
    expect(row).to_contain_text("Resettled")
    expect(row).to_contain_text(f"result corrected: won → lost, balance {MINUS}£21.00")
    _shots(page, "ticker-resettled")
