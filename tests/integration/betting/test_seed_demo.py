"""`manage.py seed_demo`: demo punters get funded wallets, the staff a role each and no one is a
superuser; running it again changes nothing; it runs only with the development flag, never in
production."""

from __future__ import annotations

import io
from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError

from odds.betting.models import LedgerEntry, Wallet
from odds.catalogue.models import Market
from odds.models import OutboxMessage
from reducers import topics

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture
def seeded(services, redis_client, settings):
    settings.DEMO = True
    out = io.StringIO()
    call_command("seed_demo", "--quiet", stdout=out)
    return out.getvalue()


def test_demo_punters_get_a_wallet_with_an_opening_deposit(seeded):
    balances = dict(Wallet.objects.values_list("user__username", "balance"))
    assert balances == {"alice": Decimal("1000.00"), "bob": Decimal("1000.00"), "carol": Decimal("1000.00")}
    assert LedgerEntry.objects.filter(kind=LedgerEntry.Kind.DEPOSIT).count() == 3


def test_seeding_again_deposits_nothing_more(seeded):
    call_command("seed_demo", "--quiet", stdout=io.StringIO())
    assert LedgerEntry.objects.filter(kind=LedgerEntry.Kind.DEPOSIT).count() == 3
    assert Wallet.objects.get(user__username="alice").balance == Decimal("1000.00")


def test_seeding_queues_one_definition_per_market_for_the_markets_topic(seeded):
    call_command("seed_demo", "--quiet", stdout=io.StringIO())
    assert OutboxMessage.objects.filter(topic=topics.markets()).count() == Market.objects.count() > 100


def test_seeding_reports_the_demo_balances(seeded):
    assert "alice £1,000.00" in seeded


def test_the_demo_staff_have_a_role_each_and_no_one_is_a_superuser(seeded):
    assert not User.objects.filter(is_superuser=True).exists()
    trader, operator = User.objects.get(username="trader"), User.objects.get(username="operator")
    assert (trader.is_staff, [g.name for g in trader.groups.all()]) == (True, ["Traders"])
    assert (operator.is_staff, [g.name for g in operator.groups.all()]) == (True, ["Operators"])
    assert trader.has_perm("catalogue.result_market")
    assert trader.has_perm("betting.void_bet")
    assert not operator.has_perm("catalogue.result_market")
    assert not operator.has_perm("betting.void_bet")
    assert operator.has_perm("ops.end_channel")
    assert trader.has_perm("ops.end_channel")


def test_the_demo_staff_sign_in_to_the_staff_pages_with_the_demo_authenticator(seeded):
    from django.test import Client

    from odds.feed.services.demo import DEMO_PASSWORD, DEMO_TOTP_SECRET
    from tests.factories import totp_code

    client = Client()
    response = client.post("/login/", {"username": "trader", "password": DEMO_PASSWORD})
    assert response["Location"] == "/accounts/2fa/authenticate/"
    assert client.post("/accounts/2fa/authenticate/", {"code": totp_code(DEMO_TOTP_SECRET)}).status_code == 302
    assert client.get("/trading/").status_code == 200


def test_no_demo_data_without_the_development_flag(services, settings):
    settings.DEMO = False
    with pytest.raises(CommandError, match="SPORTSBOOK_DEMO"):
        call_command("seed_demo", "--quiet", stdout=io.StringIO())
    assert not User.objects.filter(username__in=["alice", "trader"]).exists()


def test_no_demo_data_in_production_even_with_the_flag(services, settings):
    settings.DEMO = True
    settings.PRODUCTION = True
    with pytest.raises(CommandError):
        call_command("seed_demo", "--quiet", stdout=io.StringIO())
    assert not User.objects.filter(username="trader").exists()
