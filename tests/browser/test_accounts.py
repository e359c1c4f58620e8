"""Accounts in Chromium on the real stack, mail through the real mail catcher (Mailpit): a new
punter signs up, is refused a bet until they follow the verification link from their mail, then
deposits and bets; a forgotten password is reset by the mailed link, which works once; a staff
member reaches the trading desk only with a TOTP code."""

from __future__ import annotations

import os
import re
import uuid
from decimal import Decimal
from pathlib import Path

import pytest
from allauth.account.models import EmailAddress
from django.contrib.auth.models import User
from playwright.sync_api import Page, ViewportSize, expect

from odds.accounts.models import PunterProfile
from odds.betting.models import Bet, Wallet
from tests.browser.axe import axe_check
from tests.factories import live_state_write, market_create, totp_code, totp_enable, user_create
from tests.mailpit import link_in, mail_wait, mails_to

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "lively-otter-47-saddle"
# SCREENSHOTS_DIR=docs/screenshots writes the sign-up and verification pages at desktop and phone
# sizes (as `manage.py screenshots` does for the other pages).
SCREENSHOTS = os.environ.get("SCREENSHOTS_DIR")
SIZES: dict[str, ViewportSize] = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}


def screenshots(page: Page, name: str) -> None:
    if not SCREENSHOTS:
        return
    size = page.viewport_size
    page.evaluate("document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0)")
    for label, viewport in SIZES.items():
        page.set_viewport_size(viewport)
        page.screenshot(path=str(Path(SCREENSHOTS) / f"{name}-{label}.png"), full_page=True)
    if size is not None:
        page.set_viewport_size(size)


def live_market(redis_client):
    from odds.core.connections import redis_shared
    from store.markets import sequences_next

    market = market_create(prices=("2.50", "3.20", "2.90"))
    seq = sequences_next(redis_shared(), [market.id])[0]
    live_state_write(redis_client, market, prices=("2.50", "3.20", "2.90"), seq=seq)
    return market


def place_five(page: Page, asgi_server: str, market, *, pick: bool = True, symbol: str = "£") -> None:
    """£5 on the market's first selection from its event page (``pick``: added to the slip first;
    the slip keeps a refused bet's selection)."""
    page.goto(f"{asgi_server}/event/{market.event_id}/")
    expect(page.locator("#conn-status")).to_have_attribute("data-state", "live", timeout=20_000)
    if pick:
        selection = market.selections.order_by("display_order")[0]
        page.locator(f'.price[data-selection="{selection.id}"]').click()
    page.get_by_label(f"Stake {symbol}").fill("5")
    page.locator("#slip-place").click()


def test_a_new_punter_signs_up_verifies_by_mail_deposits_bets_and_meets_a_loss_limit(
    asgi_server, redis_client, page: Page
):
    market = live_market(redis_client)
    email = f"new-{uuid.uuid4().hex[:10]}@example.com"

    page.goto(f"{asgi_server}/login/")
    page.get_by_role("link", name="Open an account").click()
    expect(page).to_have_url(re.compile(r"/accounts/signup/"))
    expect(page.get_by_role("heading", level=1)).to_have_text(re.compile("Sign Up", re.IGNORECASE))
    page.get_by_label("Email").fill(email)
    page.get_by_label(re.compile(r"^Password:?$")).fill(PASSWORD)
    page.get_by_label("Password (again)").fill(PASSWORD)
    page.get_by_label("Country").select_option("GB")
    page.get_by_label("Currency").select_option("EUR")
    # Under 18: refused, and nothing is created.
    page.get_by_label("Date of birth").fill("2015-06-01")
    axe_check(page)
    screenshots(page, "signup")
    page.locator("form.account-form button[type=submit]").click()
    expect(page.locator(".errorlist")).to_contain_text("You must be 18 or over to open an account.")
    assert not User.objects.filter(email=email).exists()

    page.get_by_label(re.compile(r"^Password:?$")).fill(PASSWORD)
    page.get_by_label("Password (again)").fill(PASSWORD)
    page.get_by_label("Date of birth").fill("1990-06-01")
    page.locator("form.account-form button[type=submit]").click()
    # Signed in at once, browsing; the profile and a wallet in the chosen currency exist.
    expect(page.locator(".user")).to_have_text(re.compile(r"\S+"))
    user = User.objects.get(email=email)
    assert PunterProfile.objects.get(user=user).country == "GB"
    wallet = Wallet.objects.get(user=user)
    assert (wallet.currency, wallet.email_unverified) == ("EUR", True)

    # Deposits are open before verification, in the wallet's currency; bets are not, and the slip
    # says why.
    page.goto(f"{asgi_server}/wallet/")
    page.get_by_label("Amount (€)").first.fill("50.00")
    page.get_by_role("button", name="Deposit").click()
    expect(page.locator("#wallet-page-balance")).to_have_text("€50.00")
    place_five(page, asgi_server, market, symbol="€")
    alert = page.locator(".slip-alert")
    expect(alert).to_have_attribute("data-code", "email_unverified")
    expect(alert).to_contain_text("Verify your email address before you bet")
    assert not Bet.objects.filter(user=user).exists()

    # The verification mail, read from the mail catcher; its link confirms the address.
    mail = mail_wait(email, subject="Confirm Your Email Address")
    link = link_in(mail, path="/accounts/confirm-email/")
    page.goto(link)
    expect(page.get_by_role("heading", level=1)).to_have_text(re.compile("Confirm Email Address", re.IGNORECASE))
    axe_check(page)
    screenshots(page, "verify")
    page.locator("form.account-form button[type=submit]").click()
    expect(page).not_to_have_url(re.compile(r"/accounts/confirm-email/"))
    assert EmailAddress.objects.get(user=user, email=email).verified
    assert not Wallet.objects.get(user=user).email_unverified

    place_five(page, asgi_server, market, pick=False, symbol="€")
    expect(page.locator(".receipt")).to_contain_text("Bet placed")
    expect(page.locator("#wallet-balance")).to_have_text("€45.00")
    assert Bet.objects.get(user=user).status == Bet.Status.ACCEPTED

    # A daily loss limit of €8: the €5 still open counts as lost, so the next €5 is refused with
    # the limit, what is left of it and when it frees up.
    page.goto(f"{asgi_server}/wallet/")
    page.get_by_label("New daily loss limit (€)").fill("8")
    page.locator('form[data-kind="loss"][data-period="day"] button').click()
    expect(page.locator("#limit-loss-day-state")).to_contain_text("€8.00 · €3.00 left")
    place_five(page, asgi_server, market, symbol="€")
    alert = page.locator(".slip-alert")
    expect(alert).to_have_attribute("data-code", "over_loss_limit")
    expect(alert).to_contain_text(
        re.compile(
            r"This bet is over your daily loss limit of €8\.00: you can stake €3\.00 more now,"
            r" and the limit frees up from \d+ \w+ \d{4}, \d\d:\d\d UTC\."
        )
    )
    assert Bet.objects.filter(user=user).count() == 1
    assert Wallet.objects.get(user=user).balance == Decimal("45.00")


def test_a_forgotten_password_is_reset_by_the_mailed_link_once(asgi_server, page: Page):
    user = user_create(balance="0")
    user.email = f"reset-{uuid.uuid4().hex[:10]}@example.com"
    user.save()
    EmailAddress.objects.create(user=user, email=user.email, verified=True, primary=True)
    stranger = f"nobody-{uuid.uuid4().hex[:10]}@example.com"

    def request_reset(address: str) -> str:
        page.goto(f"{asgi_server}/login/")
        page.get_by_role("link", name="Forgotten your password?").click()
        page.get_by_label("Email").fill(address)
        page.locator("form.account-form button[type=submit]").click()
        expect(page).to_have_url(re.compile(r"/accounts/password/reset/done/"))
        return page.locator("main").inner_text()

    # An unknown email gets the very same answer as a known one.
    assert request_reset(stranger) == request_reset(user.email)
    axe_check(page)

    link = link_in(mail_wait(user.email, subject="Password Reset"), path="/accounts/password/reset/key/")
    page.goto(link)
    new_password = "quiet-harbour-93-lantern"
    page.get_by_label(re.compile(r"^New Password:?$")).fill(new_password)
    page.get_by_label("New Password (again)").fill(new_password)
    page.get_by_role("button", name="Change Password").click()
    expect(page.get_by_role("heading", level=1)).to_have_text(re.compile("Password", re.IGNORECASE))
    user.refresh_from_db()
    assert user.check_password(new_password)
    # A notice that the password changed, to the account's address.
    mail_wait(user.email, subject="Password", timeout=30)
    assert len(mails_to(user.email)) >= 2

    # The link works once.
    page.goto(link)
    expect(page.locator("main")).to_contain_text(re.compile("invalid", re.IGNORECASE))

    # And the new password signs in.
    page.context.clear_cookies()
    page.goto(f"{asgi_server}/login/")
    page.get_by_label("Username or email").fill(user.email)
    page.get_by_label("Password", exact=True).fill(new_password)
    page.get_by_role("button", name="Log in").click()
    expect(page.locator(".user")).to_have_text(user.username)


def test_staff_reach_the_trading_desk_only_with_a_totp_code(asgi_server, page: Page):
    staff = user_create(balance="0", staff=True)
    secret = totp_enable(staff)

    page.goto(f"{asgi_server}/trading/")
    expect(page).to_have_url(re.compile(r"/login/"))
    page.get_by_label("Username or email").fill(staff.username)
    page.get_by_label("Password", exact=True).fill("pw-for-tests")
    page.get_by_role("button", name="Log in").click()
    expect(page).to_have_url(re.compile(r"/accounts/2fa/authenticate/"))
    axe_check(page)

    # A wrong code: refused, and the trading desk stays closed.
    page.get_by_label("Code").fill("000000" if totp_code(secret) != "000000" else "111111")
    page.get_by_role("button", name="Sign In").click()
    expect(page.locator(".errorlist, .form-error").first).to_be_visible()
    page.goto(f"{asgi_server}/trading/")
    expect(page).to_have_url(re.compile(r"/login/\?next=/trading/$"))

    # The password again, then the authenticator's code: in.
    page.goto(f"{asgi_server}/login/?next=/trading/")
    page.get_by_label("Username or email").fill(staff.username)
    page.get_by_label("Password", exact=True).fill("pw-for-tests")
    page.get_by_role("button", name="Log in").click()
    page.get_by_label("Code").fill(totp_code(secret))
    page.get_by_role("button", name="Sign In").click()
    expect(page).to_have_url(f"{asgi_server}/trading/")
    expect(page.get_by_role("heading", level=1)).to_be_visible()
