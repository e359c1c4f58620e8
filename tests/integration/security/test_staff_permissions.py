"""Staff actions check the model permissions of a role, not only that the user is staff: a
staff member without a role can look but not result a market, void a bet or end a channel; the
Traders role can; the Operators role ends channels but neither results nor voids."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from django.test import Client

from odds.betting.models import Bet
from odds.catalogue.models import Market
from odds.core.roles import OPERATORS, TRADERS, roles_sync
from tests.factories import market_create, sign_in, user_create
from tests.integration.betting.helpers import bet_accepted, selections_of

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def staff_member(role: str | None) -> Client:
    """A logged-in staff member (never superuser) in ``role``, or in none."""
    roles_sync()
    user = user_create(balance="0")
    user.is_staff = True
    user.save()
    if role is not None:
        user.groups.add(Group.objects.get(name=role))
    client = Client()
    sign_in(client, user)
    return client


def result(client: Client, market: Market):
    home = selections_of(market)[0]
    return client.post(f"/trading/markets/{market.id}/result", {"winner": str(home.id), "confirm": "yes"})


def void(client: Client, bet: Bet):
    body = {"action": "void", "_selected_action": [str(bet.id)], "confirm": "yes"}
    return client.post("/admin/betting/bet/", body, follow=True)


@pytest.mark.parametrize("role", [None, OPERATORS])
def test_staff_without_the_permission_cannot_result_a_market(services, role):
    market = market_create()
    assert result(staff_member(role), market).status_code == 403
    market.refresh_from_db()
    assert market.status == Market.Status.OPEN


@pytest.mark.parametrize("role", [None, OPERATORS])
def test_staff_without_the_permission_cannot_void_a_bet(services, role):
    bet = bet_accepted(user_create(), selections_of(market_create())[0])
    void(staff_member(role), bet)
    assert Bet.objects.get(id=bet.id).status == Bet.Status.ACCEPTED


def test_a_trader_results_markets_and_voids_bets(services, redis_client):
    trader = staff_member(TRADERS)
    bet = bet_accepted(user_create(), selections_of(market_create())[0])
    void(trader, bet)
    assert Bet.objects.get(id=bet.id).status == Bet.Status.VOID
    market = market_create()
    assert result(trader, market).status_code == 302
    market.refresh_from_db()
    assert market.status == Market.Status.CLOSED


def test_staff_without_a_role_cannot_end_a_punters_channel(services):
    response = staff_member(None).post("/trading/api/channels/some-channel-id/end")
    assert response.status_code == 403
    assert "ops.end_channel" in response.json()["error"]["message"]
