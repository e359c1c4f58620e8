"""The fat-finger check: a trader's price beyond PRICE_CHANGE_CONFIRM_RATIO of the live price asks
for confirmation and changes nothing; confirmed, it applies."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.urls import reverse

from odds.audit.models import AuditEntry
from odds.catalogue.models import Selection
from odds.catalogue.services.markets import PriceChangeUnconfirmed, selection_price_set
from tests.factories import live_state_write, market_create
from tests.integration.betting.helpers import selections_of

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def _price_of(selection: Selection) -> Decimal:
    return Selection.objects.get(id=selection.id).price


def test_a_tenfold_price_is_not_applied_without_confirmation(staff, redis_client, settings):
    settings.PRICE_CHANGE_CONFIRM_RATIO = Decimal("3")
    market = market_create(prices=("3.35", "3.40", "2.10"))
    home = selections_of(market)[0]
    with pytest.raises(PriceChangeUnconfirmed, match=r"from 3.35 to 33.50"):
        selection_price_set(selection=home, price=Decimal("33.50"), by=staff)
    assert _price_of(home) == Decimal("3.35")
    assert AuditEntry.objects.count() == 0


def test_a_confirmed_tenfold_price_applies_and_the_audit_says_it_was_confirmed(staff, redis_client, settings):
    settings.PRICE_CHANGE_CONFIRM_RATIO = Decimal("3")
    market = market_create(prices=("3.35", "3.40", "2.10"))
    home = selections_of(market)[0]
    selection_price_set(selection=home, price=Decimal("33.50"), by=staff, confirmed=True)
    assert _price_of(home) == Decimal("33.50")
    (entry,) = AuditEntry.objects.filter(kind=AuditEntry.Kind.PRICE_SET)
    assert entry.after == {"price": "33.50", "confirmed": True}


def test_the_ratio_is_taken_from_the_live_price_not_the_catalogue(staff, redis_client, settings):
    settings.PRICE_CHANGE_CONFIRM_RATIO = Decimal("3")
    market = market_create(prices=("3.35", "3.40", "2.10"))
    live_state_write(redis_client, market, prices=("12.00", "3.40", "2.10"))
    home = selections_of(market)[0]
    selection_price_set(selection=home, price=Decimal("20.00"), by=staff)
    assert _price_of(home) == Decimal("20.00")


def test_the_setting_moves_the_threshold(staff, redis_client, settings):
    settings.PRICE_CHANGE_CONFIRM_RATIO = Decimal("20")
    market = market_create(prices=("3.35", "3.40", "2.10"))
    home = selections_of(market)[0]
    selection_price_set(selection=home, price=Decimal("33.50"), by=staff)
    assert _price_of(home) == Decimal("33.50")


def test_the_page_script_is_asked_to_confirm_then_applies(staff_client, redis_client, settings):
    settings.PRICE_CHANGE_CONFIRM_RATIO = Decimal("3")
    market = market_create(prices=("3.35", "3.40", "2.10"))
    home = selections_of(market)[0]
    url = reverse("trading-market-price", kwargs={"market_id": market.id})
    form = {"selection_id": str(home.id), "price": "33.50"}
    response = staff_client.post(url, form, HTTP_ACCEPT="application/json")
    assert response.status_code == 409
    assert (response.json()["confirm"], response.json()["price"]) == (True, "33.50")
    assert _price_of(home) == Decimal("3.35")
    response = staff_client.post(url, {**form, "confirm": "yes"}, HTTP_ACCEPT="application/json")
    assert (response.status_code, response.json()["ok"]) == (200, True)
    assert _price_of(home) == Decimal("33.50")


def test_a_plain_form_gets_a_confirmation_page_that_applies_the_price(staff_client, redis_client, settings):
    settings.PRICE_CHANGE_CONFIRM_RATIO = Decimal("3")
    market = market_create(prices=("3.35", "3.40", "2.10"))
    home = selections_of(market)[0]
    url = reverse("trading-market-price", kwargs={"market_id": market.id})
    response = staff_client.post(url, {"selection_id": str(home.id), "price": "33.50"})
    assert response.status_code == 409
    body = response.content.decode()
    assert "Apply 33.50" in body
    assert 'name="confirm" value="yes"' in body
    assert _price_of(home) == Decimal("3.35")
