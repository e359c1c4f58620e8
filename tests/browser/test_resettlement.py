"""Correcting a settled market's result in Chromium (docs/resettlement.md): from the event page a
trader gives the market its corrected result, reads the preview of every amount that will move
and confirms it; the punter's bet and balance follow; what a claw-back leaves owed is shown to the
punter and the trader and a deposit recovers it. With ``A11Y_SCREENSHOTS=DIR`` the preview and
the pages showing what is owed are saved there at a desktop and a phone size."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.contrib.auth.models import Group
from playwright.sync_api import Page, expect

from odds.audit.models import AuditEntry
from odds.betting.models import Bet, LedgerEntry, Wallet
from odds.betting.services.settlement import market_bets_settle
from odds.betting.services.wallet import ledger_post
from odds.catalogue.services.markets import market_result
from odds.core.roles import TRADERS, roles_sync
from tests.browser.test_risk_desk import _shots
from tests.factories import market_create, user_create
from tests.integration.betting.helpers import bet_accepted, corrected, resettle

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


def test_what_a_claw_back_leaves_owed_is_shown_and_the_next_deposit_recovers_it(asgi_server, login, trader, page: Page):
    market = market_create(prices=("2.10", "3.40", "3.50"))
    home, draw, _ = market.selections.order_by("display_order")
    punter = user_create(balance="100.00")
    bet = bet_accepted(punter, home, stake="10.00")
    market_result(market=market, winners=[home.id])
    market_bets_settle(market_id=market.id)
    market.refresh_from_db()
    wallet = Wallet.objects.get(user=punter)
    withdrawal = LedgerEntry.Kind.WITHDRAWAL
    ledger_post(wallet=wallet, kind=withdrawal, debit="wallet", credit="cash", amount=Decimal("100.00"))
    resettle(market, corrected(market, draw), trader)  # £21.00 clawed back from £11.00: £10.00 owed

    login(punter)
    page.goto(f"{asgi_server}/wallet/")
    expect(page.locator("#wallet-owed")).to_contain_text("You owe £10.00")
    expect(page.locator("#wallet-page-balance")).to_have_text("£0.00")
    _shots(page, "wallet-owed")
    page.get_by_label("Amount (£)").first.fill("25.00")
    page.get_by_role("button", name="Deposit").click()
    expect(page.locator("#wallet-page-balance")).to_have_text("£15.00")
    expect(page.locator("#wallet-owed")).to_have_count(0)
    rows = page.locator("#ledger tbody tr")
    expect(rows.nth(0)).to_contain_text("Owed recovered")
    expect(rows.nth(0)).to_contain_text(f"{MINUS}£10.00")
    expect(rows.nth(0)).to_contain_text(f"#{bet.id}")
    expect(rows.nth(1)).to_contain_text("Deposit")
    expect(rows.nth(1)).to_contain_text("+£25.00")

    # The trader's customer page of another punter, who still owes.
    second = user_create(balance="100.00")
    other = market_create(prices=("2.10", "3.40", "3.50"))
    o_home, o_draw, _ = other.selections.order_by("display_order")
    second_bet = bet_accepted(second, o_home, stake="10.00")
    market_result(market=other, winners=[o_home.id])
    market_bets_settle(market_id=other.id)
    other.refresh_from_db()
    ledger_post(
        wallet=Wallet.objects.get(user=second),
        kind=LedgerEntry.Kind.WITHDRAWAL,
        debit="wallet",
        credit="cash",
        amount=Decimal("105.00"),
    )
    resettle(other, corrected(other, o_draw), trader)  # £21.00 from £6.00: £15.00 owed
    login(trader)
    page.goto(f"{asgi_server}/trading/customers/{second.id}/")
    expect(page.locator("#customer-owed h2")).to_have_text("Owes £15.00")
    expect(page.locator(f'#owed-claims tr[data-bet="{second_bet.id}"]')).to_contain_text("£15.00")
    _shots(page, "customer-owed")


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
