"""The customer page (stake limits) and the referrals queue as a trader uses them: limits set and
audited, refused with the rule and nothing changed; a referred bet listed, accepted or declined
from the page; pages and actions closed to punters and to staff without the permission."""

from __future__ import annotations

import uuid
from decimal import Decimal

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse

from odds.audit.models import AuditEntry
from odds.betting.models import Bet, Wallet
from odds.betting.services.bets import LegRequest, bet_place
from odds.catalogue.models import Sport
from odds.core.roles import OPERATORS, roles_sync
from odds.trading.models import CustomerLimit, CustomerSportLimit
from odds.trading.services.customers import customer_limits_set
from tests.factories import market_create, staff_sign_in, user_create

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def _referred(customer, staff) -> Bet:
    customer_limits_set(customer=customer, stake_factor=Decimal("0.001"), sport_limits={}, by=staff)
    market = market_create()
    home = market.selections.order_by("display_order").first()
    assert home is not None
    bet = bet_place(
        user=customer,
        idempotency_key=uuid.uuid4().hex,
        stake=Decimal("25.00"),
        legs=[LegRequest(selection_id=home.id, price_seen=home.price)],
    ).bet
    assert bet.referred_limit == Decimal("10.00")
    return bet


def test_a_trader_sets_a_customers_factor_and_a_sports_limit_from_the_page(staff_client, staff, punter):
    sport, _ = Sport.objects.get_or_create(slug="football", defaults={"name": "Football"})
    url = reverse("trading-customer", kwargs={"user_id": punter.id})
    response = staff_client.post(url, {"stake_factor": "0.05", f"sport_{sport.id}": "£40", "note": "sharp  punter"})
    assert response.status_code == 302
    assert CustomerLimit.objects.get(user=punter).stake_factor == Decimal("0.05")
    assert CustomerSportLimit.objects.get(user=punter, sport=sport).max_stake == Decimal("40.00")
    assert Wallet.objects.get(user=punter).customer_limits
    entry = AuditEntry.objects.get(kind=AuditEntry.Kind.CUSTOMER_LIMIT_SET)
    assert (entry.object_id, entry.reason, entry.after["stake_factor"]) == (str(punter.id), "sharp punter", "0.05")
    page = staff_client.get(url).content.decode()
    assert 'value="0.05"' in page
    assert 'value="40.00"' in page
    assert "£500.00" in page  # the factor's share of the market's maximum stake


def test_a_limit_out_of_bounds_is_refused_with_the_rule_and_the_typed_value_kept(staff_client, punter):
    sport, _ = Sport.objects.get_or_create(slug="football", defaults={"name": "Football"})
    url = reverse("trading-customer", kwargs={"user_id": punter.id})
    for fields, rule in [
        ({"stake_factor": "3"}, "stake factor is a decimal from 0.001 to 1"),
        ({"stake_factor": "0.1", f"sport_{sport.id}": "forty"}, "sport&#x27;s stake limit"),
        ({f"sport_{sport.id}": "0"}, "sport&#x27;s stake limit"),
    ]:
        response = staff_client.post(url, fields)
        assert response.status_code == 400, fields
        page = response.content.decode()
        assert rule in page, fields
        assert f'value="{next(iter(fields.values()))}"' in page
    assert not CustomerLimit.objects.filter(user=punter).exists()
    assert not CustomerSportLimit.objects.filter(user=punter).exists()
    assert not AuditEntry.objects.filter(kind=AuditEntry.Kind.CUSTOMER_LIMIT_SET).exists()


def test_the_queue_lists_a_referral_and_a_trader_accepts_it(staff_client, staff, punter):
    bet = _referred(punter, staff)
    page = staff_client.get(reverse("trading-referrals")).content.decode()
    assert f'data-bet="{bet.id}"' in page
    assert "£25.00" in page
    assert "£10.00" in page
    table = staff_client.get(reverse("trading-referrals"), {"fragment": "table"}).content.decode()
    assert table.lstrip().startswith('<div class="table-scroll"')
    assert f'data-bet="{bet.id}"' in table

    url = reverse("trading-referral-decide", kwargs={"bet_id": bet.id})
    response = staff_client.post(url, {"decision": "accept"}, follow=True)
    assert f"Accepted bet {bet.id} for £25.00" in response.content.decode()
    bet.refresh_from_db()
    assert (bet.status, bet.decided_by) == (Bet.Status.ACCEPTED, staff)
    assert f'data-bet="{bet.id}"' not in staff_client.get(reverse("trading-referrals")).content.decode()
    again = staff_client.post(url, {"decision": "decline"}, follow=True).content.decode()
    assert "Not decided" in again
    assert "decided already" in again


def test_a_trader_declines_a_referral_with_a_reason_the_punter_reads(staff_client, staff, punter):
    bet = _referred(punter, staff)
    url = reverse("trading-referral-decide", kwargs={"bet_id": bet.id})
    response = staff_client.post(url, {"decision": "decline", "reason": "over our limit"}, follow=True)
    assert f"Declined bet {bet.id}; £25.00 went back" in response.content.decode()
    bet.refresh_from_db()
    assert (bet.status, bet.reject_message) == (Bet.Status.REJECTED, "A trader declined this bet: over our limit.")
    assert Wallet.objects.get(user=punter).balance == Decimal("100.00")


def test_a_decision_that_is_neither_is_refused(staff_client, staff, punter):
    bet = _referred(punter, staff)
    url = reverse("trading-referral-decide", kwargs={"bet_id": bet.id})
    response = staff_client.post(url, {"decision": "maybe"}, follow=True)
    assert "choose accept or decline" in response.content.decode()
    assert Bet.objects.get(id=bet.id).status == Bet.Status.PENDING


def test_punters_and_staff_without_the_permission_cannot_see_or_decide(client, staff, punter):
    bet = _referred(punter, staff)
    client.force_login(punter)
    assert client.get(reverse("trading-referrals")).status_code == 403
    assert client.get(reverse("trading-customer", kwargs={"user_id": punter.id})).status_code == 403
    client.logout()
    roles_sync()
    operator = user_create(balance="0")
    operator.is_staff = True
    operator.save()
    operator.groups.add(Group.objects.get(name=OPERATORS))
    staff_sign_in(client, operator)
    assert client.get(reverse("trading-referrals")).status_code == 200
    url = reverse("trading-referral-decide", kwargs={"bet_id": bet.id})
    assert client.post(url, {"decision": "accept"}).status_code == 403
    customer = reverse("trading-customer", kwargs={"user_id": punter.id})
    assert client.post(customer, {"stake_factor": "0.5"}).status_code == 403
    assert Bet.objects.get(id=bet.id).status == Bet.Status.PENDING
    assert CustomerLimit.objects.get(user=punter).stake_factor == Decimal("0.001")


def test_a_trader_offers_a_lower_stake_from_the_queue_and_it_waits_for_the_punter(staff_client, staff, punter):
    bet = _referred(punter, staff)
    url = reverse("trading-referral-offer", kwargs={"bet_id": bet.id})
    refused = staff_client.post(url, {"stake": "25.00"}, follow=True).content.decode()
    assert "no offer made: an offer is a lower stake" in refused
    response = staff_client.post(url, {"stake": "£8.50", "price": ""}, follow=True)
    page = response.content.decode()
    assert f"Offered bet {bet.id} at £8.50" in page
    assert "waiting for the punter" in page
    bet.refresh_from_db()
    assert (bet.offer_stake, bet.status) == (Decimal("8.50"), Bet.Status.PENDING)
    again = staff_client.post(
        reverse("trading-referral-decide", kwargs={"bet_id": bet.id}), {"decision": "accept"}, follow=True
    )
    assert "offer waiting" in again.content.decode()
