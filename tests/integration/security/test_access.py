"""Who may open what: the admin refuses everyone but staff; punters cannot reach each other's data.

The staff pages, lag dashboard and trader APIs are covered route by route in
tests/integration/ops/test_staff_only.py; channel ownership in tests/integration/streaming/test_streams.py.
"""

from __future__ import annotations

import pytest
from django.contrib import admin
from django.urls import reverse

from tests.integration.security.conftest import logged_in

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

ADMIN_MODELS = [
    pytest.param(model, id=f"{model._meta.app_label}.{model._meta.model_name}") for model in admin.site._registry
]


def _changelist(model) -> str:
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")


@pytest.mark.parametrize("model", ADMIN_MODELS)
def test_anonymous_visitor_is_sent_to_the_admin_login_from_every_admin_list(client, model):
    response = client.get(_changelist(model))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("admin:login"))


@pytest.mark.parametrize("model", ADMIN_MODELS)
def test_punter_is_refused_every_admin_list(punter, model):
    response = logged_in(punter).get(_changelist(model))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("admin:login"))


def test_punter_cannot_add_a_market_through_the_admin(punter):
    from odds.catalogue.models import Market

    before = Market.objects.count()
    response = logged_in(punter).post(reverse("admin:catalogue_market_add"), {"name": "sneaky"})
    assert response.status_code == 302
    assert Market.objects.count() == before


def test_staff_opens_the_admin_index(staff):
    assert logged_in(staff).get(reverse("admin:index")).status_code == 200


def test_another_punters_bet_is_not_found_not_forbidden(punter, services):
    """Ids of other punters' bets cannot be probed: 404, the same as a bet that does not exist."""
    from decimal import Decimal

    from odds.betting.models import Bet
    from tests.factories import market_create, user_create
    from tests.integration.betting.helpers import bet_accepted, selections_of

    other = user_create(balance="50.00")
    bet = bet_accepted(other, selections_of(market_create())[0])
    client = logged_in(punter)
    response = client.post(f"/api/bets/{bet.id}/cash-out", data={"quote": "1.00"}, content_type="application/json")
    assert response.status_code == 404
    assert Bet.objects.get(pk=bet.pk).stake == Decimal("10.00")
