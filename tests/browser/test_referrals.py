"""Referral in Chromium (docs/referral.md): a punter's bet above their limit is pending with a
countdown until a trader answers, and its refusal reads the trader's reason; a trader sees a
referral arrive on the queue without a reload and accepts it there. With ``A11Y_SCREENSHOTS=DIR``
the queue and the customer page are saved there at a desktop and a phone size."""

from __future__ import annotations

import re
import uuid
from decimal import Decimal

import pytest
from django.contrib.auth.models import Group
from playwright.sync_api import Page, expect

from odds.betting.models import Bet
from odds.betting.services.bets import LegRequest, bet_place
from odds.betting.services.referrals import referral_decide, referral_offer
from odds.core.outbox import outbox_relay
from odds.core.roles import TRADERS, roles_sync
from odds.trading.services.customers import customer_limits_set
from tests.browser.axe import axe_check
from tests.browser.test_risk_desk import REDUCER_MS, _shots
from tests.browser.test_sportsbook import first_selection, open_event
from tests.factories import market_create, markets_define, user_create

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def trader(page: Page, login):
    roles_sync()
    user = user_create(balance="0")
    user.is_staff = True
    user.save()
    user.groups.add(Group.objects.get(name=TRADERS))
    return user


def test_a_referred_bet_is_pending_with_a_countdown_until_a_trader_declines_it(
    asgi_server, login, redis_client, trader, page: Page
):
    market = market_create(prices=("2.50", "3.20", "2.90"))
    punter = user_create(balance="100.00")
    customer_limits_set(customer=punter, stake_factor=Decimal("0.001"), sport_limits={}, by=trader)
    login(punter)
    open_event(page, asgi_server, market)
    selection = first_selection(market)
    page.locator(f'.price[data-selection="{selection.id}"]').click()
    page.get_by_label("Stake £").fill("15")
    page.locator("#slip-place").click()

    receipt = page.locator(".receipt")
    expect(receipt).to_contain_text("Bet pending")
    expect(receipt.locator(".receipt-timer")).to_have_text(re.compile(r"Decided in (60|5\d) s"))
    expect(page.locator("#wallet-balance")).to_have_text("£85.00")
    axe_check(page)

    bet = Bet.objects.get(user=punter)
    referral_decide(bet_id=bet.id, accept=False, by=trader, reason="above what we lay on this market")
    expect(receipt).to_contain_text("Bet not accepted")
    expect(receipt).to_contain_text("A trader declined this bet: above what we lay on this market.")
    expect(page.locator("#wallet-balance")).to_have_text("£100.00")


def test_a_trader_sees_a_referral_arrive_and_accepts_it_from_the_queue(
    asgi_server, reducers_running, redis_client, trader, login, page: Page
):
    market = market_create(prices=("2.10", "3.40", "3.50"))
    markets_define(redis_client, market)
    punter = user_create(balance="500.00")
    customer_limits_set(customer=punter, stake_factor=Decimal("0.01"), sport_limits={}, by=trader)
    login(trader)
    page.goto(f"{asgi_server}/trading/referrals/")
    expect(page.locator("#desk-conn")).to_have_text("Live")

    home = first_selection(market)
    bet = bet_place(
        user=punter,
        idempotency_key=uuid.uuid4().hex,
        stake=Decimal("150.00"),
        legs=[LegRequest(selection_id=home.id, price_seen=home.price)],
    ).bet
    assert bet.referred_limit == Decimal("100.00")
    assert outbox_relay().sent >= 1
    row = page.locator(f'#referral-table tr[data-bet="{bet.id}"]')
    expect(row).to_be_visible(timeout=REDUCER_MS)  # through the ticker's frame, without a reload
    expect(row).to_contain_text("£150.00")
    expect(row).to_contain_text("£100.00")
    expect(row.locator("time.referral-due")).to_contain_text(re.compile(r"\(in \d+ s\)"))
    _shots(page, "referrals")

    row.get_by_role("button", name="Accept").click()
    expect(page.locator(".flash")).to_contain_text(f"Accepted bet {bet.id} for £150.00")
    expect(row).to_have_count(0)
    bet.refresh_from_db()
    assert (bet.status, bet.decided_by) == (Bet.Status.ACCEPTED, trader)

    page.goto(f"{asgi_server}/trading/customers/{punter.id}/")
    expect(page.get_by_label("Stake factor")).to_have_value("0.01")
    expect(page.locator(f'#customer-bets tr[data-bet="{bet.id}"]')).to_contain_text("referred")
    _shots(page, "customer")


def test_a_punter_takes_a_traders_lower_offer_from_the_slip(asgi_server, login, redis_client, trader, page: Page):
    market = market_create(prices=("2.50", "3.20", "2.90"))
    punter = user_create(balance="100.00")
    customer_limits_set(customer=punter, stake_factor=Decimal("0.001"), sport_limits={}, by=trader)
    login(punter)
    open_event(page, asgi_server, market)
    selection = first_selection(market)
    page.locator(f'.price[data-selection="{selection.id}"]').click()
    page.get_by_label("Stake £").fill("15")
    page.locator("#slip-place").click()
    receipt = page.locator(".receipt")
    expect(receipt).to_contain_text("Bet pending")

    bet = Bet.objects.get(user=punter)
    referral_offer(bet_id=bet.id, stake=Decimal("10.00"), price=None, by=trader)
    offer = receipt.get_by_role("group", name=f"The trader's offer on bet {bet.id}")
    expect(offer).to_contain_text("A trader offers a stake of £10.00 · Returns £25.00")
    expect(receipt.locator(".receipt-timer")).to_have_text(re.compile(r"Answer in (30|[12]\d) s"))
    axe_check(page)
    _shots(page, "referral-offer")
    offer.get_by_role("button", name="Take the offer").click()
    expect(receipt).to_contain_text("Bet placed")
    expect(receipt).to_contain_text("Stake £10.00")
    expect(page.locator("#wallet-balance")).to_have_text("£90.00")
    bet.refresh_from_db()
    assert (bet.status, bet.stake) == (Bet.Status.ACCEPTED, Decimal("10.00"))
