"""Accounts through the real site on Django's test client: sign-up records the profile and a
wallet that bets only once the mailed link is followed; under-18s are refused; sign-ups and
password resets are limited per address and per email; a reset link expires and works once;
staff reach no staff page or action without a second factor; a punter's own TOTP is asked for."""

from __future__ import annotations

import re
import uuid
from datetime import timedelta

import pytest
from allauth.account.models import EmailAddress
from django.contrib.auth.models import User
from django.core import mail
from django.test import Client
from django.urls import reverse

from odds.accounts.models import PunterProfile
from odds.betting.models import Wallet
from tests.factories import totp_code, totp_enable, user_create

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

PASSWORD = "lively-otter-47-saddle"


def email_new() -> str:
    return f"p-{uuid.uuid4().hex[:12]}@example.com"


def signup(client: Client, email: str, *, born: str = "1990-01-31", currency: str = "EUR"):
    body = {
        "email": email,
        "password1": PASSWORD,
        "password2": PASSWORD,
        "date_of_birth": born,
        "country": "IE",
        "currency": currency,
    }
    return client.post(reverse("account_signup"), body)


def link(message, path: str) -> str:
    found = re.search(r"https?://[^\s/]+(" + re.escape(path) + r"\S*)", message.body)
    assert found is not None, message.body
    return found.group(1)


def test_sign_up_records_the_profile_and_a_wallet_in_its_currency_that_bets_once_verified(client):
    email = email_new()
    response = signup(client, email)
    assert response.status_code == 302, response.content[:800]
    user = User.objects.get(email=email)
    profile = PunterProfile.objects.get(user=user)
    assert (profile.country, str(profile.date_of_birth)) == ("IE", "1990-01-31")
    wallet = Wallet.objects.get(user=user)
    assert (wallet.currency, wallet.email_unverified) == ("EUR", True)
    # Signed in at once.
    assert client.get(reverse("my-bets")).status_code == 200

    confirm = link(mail.outbox[-1], "/accounts/confirm-email/")
    assert mail.outbox[-1].to == [email]
    assert client.post(confirm).status_code == 302
    assert EmailAddress.objects.get(email=email).verified
    assert not Wallet.objects.get(user=user).email_unverified


def test_an_applicant_under_18_is_refused_and_nothing_is_created(client):
    email = email_new()
    response = signup(client, email, born="2010-02-02")
    assert response.status_code == 200
    assert "You must be 18 or over" in response.content.decode()
    assert not User.objects.filter(email=email).exists()


def test_sign_ups_over_the_per_email_limit_are_refused(client, settings):
    settings.SIGNUP_PER_EMAIL = 1
    email = email_new()
    signup(client, email, born="2012-01-01")  # refused for age, but counted
    response = signup(Client(), email)
    assert response.status_code == 200
    assert "Too many requests" in response.content.decode()
    assert not User.objects.filter(email=email).exists()


def test_sign_ups_over_the_per_address_limit_are_refused(settings):
    settings.SIGNUP_PER_IP = 2
    address = f"10.9.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}"
    for _ in range(2):
        signup(Client(REMOTE_ADDR=address), email_new(), born="2012-01-01")
    email = email_new()
    response = signup(Client(REMOTE_ADDR=address), email)
    assert "Too many requests" in response.content.decode()
    assert not User.objects.filter(email=email).exists()


def reset_request(client: Client, email: str):
    return client.post(reverse("account_reset_password"), {"email": email})


def test_an_unknown_email_gets_the_same_answer_as_a_known_one():
    user = user_create(balance="0")
    user.email = email_new()
    user.save()
    known = reset_request(Client(), user.email)
    unknown = reset_request(Client(), email_new())
    assert (known.status_code, known["Location"]) == (unknown.status_code, unknown["Location"])


def test_reset_requests_over_the_per_email_limit_are_refused(settings):
    settings.PASSWORD_RESET_PER_EMAIL = 2
    email = email_new()
    for _ in range(2):
        assert reset_request(Client(), email).status_code == 302
    response = reset_request(Client(), email)
    assert response.status_code == 200
    assert "Too many requests" in response.content.decode()


def reset_link(user) -> str:
    reset_request(Client(), user.email)
    return link(mail.outbox[-1], "/accounts/password/reset/key/")


def reset_with(client: Client, url: str, password: str):
    page = client.get(url)
    target = page["Location"] if page.status_code == 302 else url
    return client.post(target, {"password1": password, "password2": password})


def test_a_reset_link_works_once_and_a_notice_follows():
    user = user_create(balance="0")
    user.email = email_new()
    user.save()
    url = reset_link(user)
    assert reset_with(Client(), url, "quiet-harbour-93-lantern").status_code == 302
    user.refresh_from_db()
    assert user.check_password("quiet-harbour-93-lantern")
    assert any("Password" in m.subject and m.to == [user.email] for m in mail.outbox[-2:])
    reset_with(Client(), url, "another-harbour-11-lamp")
    user.refresh_from_db()
    assert user.check_password("quiet-harbour-93-lantern")


def test_a_reset_link_expires(monkeypatch, settings):
    from django.contrib.auth.tokens import PasswordResetTokenGenerator

    user = user_create(balance="0")
    user.email = email_new()
    user.save()
    url = reset_link(user)
    now = PasswordResetTokenGenerator()._now()
    later = now + timedelta(seconds=settings.PASSWORD_RESET_TIMEOUT + 60)
    monkeypatch.setattr(PasswordResetTokenGenerator, "_now", lambda self: later)
    reset_with(Client(), url, "quiet-harbour-93-lantern")
    user.refresh_from_db()
    assert not user.check_password("quiet-harbour-93-lantern")


STAFF_PAGE = "/trading/"


def test_staff_signed_in_with_a_password_alone_are_sent_to_set_up_totp():
    client = Client()
    client.force_login(user_create(balance="0", staff=True))
    response = client.get(STAFF_PAGE)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("mfa_activate_totp"))


def test_staff_with_an_authenticator_are_asked_for_its_code_and_admitted_with_it():
    staff = user_create(balance="0", staff=True)
    secret = totp_enable(staff)
    client = Client()
    # The admin's own login form checks the password only.
    assert client.post("/admin/login/", {"username": staff.username, "password": "pw-for-tests"}).status_code == 302
    for path in (STAFF_PAGE, "/ops/lag", "/admin/"):
        response = client.get(path)
        assert response.status_code == 302, path
        assert response["Location"].startswith(reverse("mfa_reauthenticate")), path
    api = client.get("/trading/api/liability")
    assert api.status_code == 403
    assert api.json()["error"]["code"] == "second_factor_required"

    assert client.post(reverse("mfa_reauthenticate"), {"code": "000000" if totp_code(secret) != "000000" else "1"})
    assert client.get(STAFF_PAGE).status_code == 302
    response = client.post(f"{reverse('mfa_reauthenticate')}?next={STAFF_PAGE}", {"code": totp_code(secret)})
    assert response.status_code == 302
    assert client.get(STAFF_PAGE).status_code == 200
    assert client.get("/admin/").status_code == 200


def test_a_punter_with_totp_is_asked_for_a_code_before_being_signed_in():
    punter = user_create(balance="0")
    secret = totp_enable(punter)
    client = Client()
    response = client.post(reverse("login"), {"username": punter.username, "password": "pw-for-tests"})
    assert response["Location"] == reverse("mfa_authenticate")
    assert client.get(reverse("my-bets")).status_code == 302
    assert client.post(reverse("mfa_authenticate"), {"code": totp_code(secret)}).status_code == 302
    assert client.get(reverse("my-bets")).status_code == 200
