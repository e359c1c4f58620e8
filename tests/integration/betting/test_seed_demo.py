"""`manage.py seed_demo`: demo punters get funded wallets; running it again changes nothing."""

from __future__ import annotations

import io
from decimal import Decimal

import pytest
from django.core.management import call_command

from odds.betting.models import LedgerEntry, Wallet
from odds.catalogue.models import Market
from odds.models import OutboxMessage
from reducers import topics

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture
def seeded(services, redis_client):
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
