"""The ASGI fast path of ``POST /api/bets`` (odds/api/placement.py), which no Django middleware
runs before, refuses a bet for the punter's play session as the placement service decides."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from odds.betting.models import Bet, PlaySession, Wallet
from tests.factories import market_create
from tests.integration.betting.helpers import bet_body, selections_of
from tests.integration.betting.test_placement_endpoint import post, session_of

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def test_the_fast_path_refuses_past_the_limit_and_while_a_check_waits(asgi_server, punter, redis_client):
    url, session = asgi_server, session_of(punter)
    home = selections_of(market_create(prices=("2.10", "3.40", "3.50")))[0]
    play = PlaySession.objects.create(user=punter, started_at=timezone.now() - timedelta(minutes=31), time_limit_s=1800)

    status, _, body = post(url, bet_body((home.id, "2.10")), session=session)
    assert (status, body["error"]["code"], body["error"]["field"]) == (403, "session_limit", "account")

    PlaySession.objects.filter(id=play.id).update(time_limit_s=None, reality_check_s=900)
    status, _, body = post(url, bet_body((home.id, "2.10")), session=session)
    assert (status, body["error"]["code"]) == (403, "reality_check")
    assert not Bet.objects.filter(user=punter).exists()

    PlaySession.objects.filter(id=play.id).update(acknowledged_at=timezone.now())
    status, _, body = post(url, bet_body((home.id, "2.10")), session=session)
    assert status == 201, body
    assert Wallet.objects.get(user=punter).balance == Decimal("90.00")
