"""Fifty bets at once on one wallet: the wallet lock serialises them.

Guarantee: each idempotency key is accepted at most once and only with the money to back it;
the balance never goes negative and always equals the sum of the wallet's ledger.
"""

from __future__ import annotations

import uuid
from decimal import Decimal

import pytest

from odds.betting.models import Bet, Wallet
from odds.betting.selectors.bets import wallet_ledger_balance
from odds.betting.services.bets import LegRequest, bet_place
from tests.factories import market_create, user_create
from tests.integration.betting.helpers import selections_of
from tests.integration.betting.test_concurrency import run_together

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

BETS = 50


def test_fifty_concurrent_bets_never_overdraw_and_the_ledger_agrees(services, redis_client):
    user = user_create(balance="100.00")
    home = selections_of(market_create())[0]
    keys = [uuid.uuid4().hex for _ in range(BETS)]

    def place(i: int):
        return bet_place(
            user=user,
            idempotency_key=keys[i % 40],  # ten keys submitted twice at the same moment
            stake=Decimal("3.00"),
            legs=[LegRequest(selection_id=home.id, price_seen=home.price)],
        )

    run_together(place, BETS)
    wallet = Wallet.objects.get(user=user)
    accepted = Bet.objects.filter(user=user, status=Bet.Status.ACCEPTED)
    assert wallet.balance >= 0
    assert wallet.balance == Decimal("100.00") - Decimal("3.00") * accepted.count()
    assert accepted.count() == 33  # 100 / 3, every later one refused for insufficient funds
    assert wallet_ledger_balance(wallet=wallet) == wallet.balance
    assert (
        Bet.objects.filter(user=user).values("idempotency_key").distinct().count()
        == Bet.objects.filter(user=user).count()
    )
