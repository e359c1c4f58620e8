"""The wallet page in Chromium on the real stack: a deposit through the payment form reaches the
ledger, a deposit limit refuses a deposit over it, and a time-out closes the bet slip."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from playwright.sync_api import Page, expect

from odds.betting.models import Bet, LedgerEntry, Wallet
from tests.browser.axe import axe_check
from tests.factories import live_state_write, market_create, user_create

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_deposit_limit_and_time_out_from_the_wallet_page(asgi_server, login, redis_client, page: Page):
    from odds.core.connections import redis_shared
    from odds.core.sequences import sequences_next

    market = market_create(prices=("2.50", "3.20", "2.90"))
    live_state_write(
        redis_client, market, prices=("2.50", "3.20", "2.90"), seq=sequences_next(redis_shared(), [market.id])[0]
    )
    user = login(user_create(balance="0"))

    page.goto(f"{asgi_server}/")
    page.locator("a.balance").click()
    expect(page).to_have_url(f"{asgi_server}/wallet/")

    # A deposit: typed in pounds and pence, checked before it is sent.
    page.get_by_label("Amount (£)").first.fill("12.345")
    page.get_by_role("button", name="Deposit").click()
    expect(page.locator("#deposit-error")).to_have_text("Enter pounds and pence: at most two decimal places.")
    page.get_by_label("Amount (£)").first.fill("50.00")
    page.get_by_role("button", name="Deposit").click()
    row = page.locator("#ledger tbody tr").first
    expect(row).to_contain_text("Deposit")
    expect(row).to_contain_text("+£50.00")
    expect(page.locator("#wallet-page-balance")).to_have_text("£50.00")
    expect(page.locator("#wallet-balance")).to_have_text("£50.00")
    assert LedgerEntry.objects.filter(wallet__user=user, kind=LedgerEntry.Kind.DEPOSIT).count() == 1

    # A daily limit of £60: £10 is left of it, and £20 more is refused in words.
    page.get_by_label("New daily limit (£)").fill("60")
    page.locator('form[data-period="day"] button').click()
    expect(page.locator("#limit-day-state")).to_contain_text("£60.00 · £10.00 left")
    page.get_by_label("Amount (£)").first.fill("20")
    page.get_by_role("button", name="Deposit").click()
    expect(page.locator("#deposit-error")).to_have_text(re.compile(r"you can deposit £10\.00 more in the 24 hours"))
    assert Wallet.objects.get(user=user).balance == Decimal("50.00")

    # A raise waits for the cooling-off period, shown with when it applies.
    page.get_by_label("New daily limit (£)").fill("500")
    page.locator('form[data-period="day"] button').click()
    expect(page.locator("#limit-day-state")).to_contain_text("£500.00 from")

    # A 24-hour time-out.
    page.get_by_label("Time-out for 24 hours").check()
    page.get_by_role("button", name="Start the break").click()
    expect(page.locator("#break-error")).to_contain_text("Tick the box")
    page.get_by_label("I understand this cannot be undone before it ends.").check()
    page.get_by_role("button", name="Start the break").click()
    expect(page.locator("#wallet-break-notice")).to_contain_text("You are taking a time-out until")
    expect(page.get_by_role("button", name="Deposit")).to_be_disabled()
    axe_check(page)

    # The bet slip says the bet is refused, and until when.
    page.goto(f"{asgi_server}/event/{market.event_id}/")
    expect(page.locator("#conn-status")).to_have_attribute("data-state", "live")
    selection = market.selections.order_by("display_order")[0]
    page.locator(f'.price[data-selection="{selection.id}"]').click()
    page.get_by_label("Stake £").fill("5")
    page.locator("#slip-place").click()
    alert = page.locator(".slip-alert")
    expect(alert).to_have_attribute("data-code", "excluded")
    expect(alert).to_contain_text(
        re.compile(r"Your break from betting runs until .+ UTC: betting and deposits are closed")
    )
    assert not Bet.objects.filter(user=user).exists()
    expect(page.locator("#wallet-balance")).to_have_text("£50.00")
