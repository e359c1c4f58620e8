"""A signed-up punter whose email is not verified yet is refused every bet by the placement
statement itself, with the reason; once verified, the same bet is accepted."""

from __future__ import annotations

from decimal import Decimal

import pytest

from odds.betting.models import Bet, Wallet
from odds.betting.services.wallet import wallet_email_verified
from tests.integration.betting.helpers import bet_body, error_of, first_selection

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def test_a_bet_from_an_unverified_email_is_refused_with_the_reason_and_nothing_is_held(api, punter, market):
    Wallet.objects.filter(user=punter).update(email_unverified=True)
    response = api.post_json("/api/bets", bet_body((first_selection(market).id, "2.10"), stake="10.00"))
    assert error_of(response) == (403, "email_unverified", "account")
    assert "Verify your email address" in response.json()["error"]["message"]
    assert not Bet.objects.filter(user=punter).exists()
    assert Wallet.objects.get(user=punter).balance == Decimal("100.00")


def test_the_same_bet_is_accepted_once_the_email_is_verified(api, punter, market):
    Wallet.objects.filter(user=punter).update(email_unverified=True)
    wallet_email_verified(user=punter)
    response = api.post_json("/api/bets", bet_body((first_selection(market).id, "2.10"), stake="10.00"))
    assert response.status_code == 201, response.content
    assert Wallet.objects.get(user=punter).balance == Decimal("90.00")
