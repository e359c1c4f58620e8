"""The wallet page in Chromium on the real stack: a deposit through the payment form reaches the
ledger, a deposit limit refuses a deposit over it, a time-out closes the bet slip, and a loss
limit refuses the bet after a lost one."""

from __future__ import annotations

import os
import re
import uuid
from decimal import Decimal
from pathlib import Path

import pytest
from playwright.sync_api import Page, ViewportSize, expect

from odds.betting.models import Bet, LedgerEntry, Wallet
from tests.browser.axe import axe_check
from tests.factories import live_state_write, market_create, user_create
from tests.mailpit import mail_wait

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_deposit_limit_and_time_out_from_the_wallet_page(asgi_server, login, redis_client, page: Page):
    from odds.core.connections import redis_shared
    from store.markets import sequences_next

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
    expect(page.locator("#deposit-error")).to_have_text("Enter the amount with at most two decimal places.")
    page.get_by_label("Amount (£)").first.fill("50.00")
    page.get_by_role("button", name="Deposit").click()
    row = page.locator("#ledger tbody tr").first
    expect(row).to_contain_text("Deposit")
    expect(row).to_contain_text("+£50.00")
    expect(page.locator("#wallet-page-balance")).to_have_text("£50.00")
    expect(page.locator("#wallet-balance")).to_have_text("£50.00")
    assert LedgerEntry.objects.filter(wallet__user=user, kind=LedgerEntry.Kind.DEPOSIT).count() == 1

    # A daily limit of £60: £10 is left of it, and £20 more is refused in words.
    page.get_by_label("New daily deposit limit (£)").fill("60")
    page.locator('form[data-kind="deposit"][data-period="day"] button').click()
    expect(page.locator("#limit-deposit-day-state")).to_contain_text("£60.00 · £10.00 left")
    page.get_by_label("Amount (£)").first.fill("20")
    page.get_by_role("button", name="Deposit").click()
    expect(page.locator("#deposit-error")).to_have_text(
        re.compile(
            r"over your daily deposit limit of £60\.00: you can deposit £10\.00 more now,"
            r" and the limit frees up from .+ UTC\."
        )
    )
    assert Wallet.objects.get(user=user).balance == Decimal("50.00")

    # A raise waits for the cooling-off period, shown with when it applies.
    page.get_by_label("New daily deposit limit (£)").fill("500")
    page.locator('form[data-kind="deposit"][data-period="day"] button').click()
    expect(page.locator("#limit-deposit-day-state")).to_contain_text("£500.00 from")

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
    expect(page.locator("#conn-status")).to_have_attribute("data-state", "live", timeout=20_000)
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


# SCREENSHOTS_DIR=docs/screenshots writes the wallet page with its limits at desktop and phone sizes.
SCREENSHOTS = os.environ.get("SCREENSHOTS_DIR")
SIZES: dict[str, ViewportSize] = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}


def limits_screenshots(page: Page, url: str) -> None:
    """The page at ``url`` at each size, each freshly loaded in a page of that size (a page
    resized after loading would be caught mid-way through its drawers' transitions)."""
    if not SCREENSHOTS:
        return
    for label, viewport in SIZES.items():
        sized = page.context.new_page()
        sized.set_viewport_size(viewport)
        sized.goto(url, wait_until="networkidle")
        sized.wait_for_timeout(500)
        sized.screenshot(path=str(Path(SCREENSHOTS) / f"wallet-limits-{label}.png"), full_page=True)
        sized.close()


def _live_market(redis_client):
    from odds.core.connections import redis_shared
    from store.markets import sequences_next

    market = market_create(prices=("2.50", "3.20", "2.90"))
    live_state_write(
        redis_client, market, prices=("2.50", "3.20", "2.90"), seq=sequences_next(redis_shared(), [market.id])[0]
    )
    return market


def _stake_on_first(page: Page, asgi_server: str, market, stake: str) -> None:
    page.goto(f"{asgi_server}/event/{market.event_id}/")
    expect(page.locator("#conn-status")).to_have_attribute("data-state", "live", timeout=20_000)
    selection = market.selections.order_by("display_order")[0]
    page.locator(f'.price[data-selection="{selection.id}"]').click()
    page.get_by_label("Stake £").fill(stake)
    page.locator("#slip-place").click()


def test_a_loss_limit_refuses_the_bet_after_a_lost_one_with_the_reason_in_the_slip(
    asgi_server, login, redis_client, celery_worker, page: Page
):
    from odds.betting.services.settlement import market_bets_settle
    from odds.catalogue.services.markets import market_result

    lost_on, next_on = _live_market(redis_client), _live_market(redis_client)
    user = user_create(balance="100.00")
    user.email = f"limits-{uuid.uuid4().hex[:10]}@example.com"
    user.save(update_fields=["email"])
    login(user)

    # A daily loss limit of £10, in force at once and mailed to the punter.
    page.goto(f"{asgi_server}/wallet/")
    page.get_by_label("New daily loss limit (£)").fill("10")
    page.locator('form[data-kind="loss"][data-period="day"] button').click()
    expect(page.locator("#limit-loss-day-state")).to_contain_text("£10.00 · £10.00 left")
    assert "in force now" in mail_wait(user.email, subject="Your daily loss limit is set")["Text"]
    # A weekly wager limit raised after it was set waits for the cooling-off, shown with its time.
    page.get_by_label("New weekly wager limit (£)").fill("200")
    page.locator('form[data-kind="wager"][data-period="week"] button').click()
    expect(page.locator("#limit-wager-week-state")).to_contain_text("£200.00 · £200.00 left")
    page.get_by_label("New weekly wager limit (£)").fill("900")
    page.locator('form[data-kind="wager"][data-period="week"] button').click()
    expect(page.locator("#limit-wager-week-state")).to_contain_text("£900.00 from")
    axe_check(page)
    limits_screenshots(page, f"{asgi_server}/wallet/")

    # £5 on a selection that loses, settled by the settlement service.
    _stake_on_first(page, asgi_server, lost_on, "5")
    expect(page.locator(".receipt")).to_contain_text("Bet placed")
    winner = lost_on.selections.order_by("display_order")[1]
    market_result(market=lost_on, winners=[winner.id], publish=False)
    market_bets_settle(market_id=lost_on.id)
    assert Bet.objects.get(user=user).status == Bet.Status.LOST

    # £5 lost of £10: a £6 bet is refused in words, saying what is left and when it frees up.
    _stake_on_first(page, asgi_server, next_on, "6")
    alert = page.locator(".slip-alert")
    expect(alert).to_have_attribute("data-code", "over_loss_limit")
    expect(alert).to_contain_text(
        re.compile(
            r"This bet is over your daily loss limit of £10\.00: you can stake £5\.00 more now,"
            r" and the limit frees up from \d+ \w+ \d{4}, \d\d:\d\d UTC\."
        )
    )
    axe_check(page)
    assert Bet.objects.filter(user=user).count() == 1
    assert Wallet.objects.get(user=user).balance == Decimal("95.00")

    # The wallet page shows what is left.
    page.goto(f"{asgi_server}/wallet/")
    expect(page.locator("#limit-loss-day-state")).to_contain_text("£10.00 · £5.00 left")
