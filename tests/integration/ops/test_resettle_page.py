"""Correcting a settled market's result from the trading pages: the form, the preview of every
amount, the confirmation applied (and audited), a confirmation refused after the bets changed,
refusals that change nothing, and the link on the event page."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse

from odds.audit.models import AuditEntry
from odds.betting.models import Bet, Wallet
from odds.betting.services.settlement import market_bets_settle
from odds.catalogue.models import Market
from odds.catalogue.services.markets import market_result
from odds.core.roles import OPERATORS, roles_sync
from tests.factories import market_create, staff_sign_in, user_create
from tests.integration.betting.helpers import bet_accepted, selections_of

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture
def settled_market(punter) -> tuple[Market, Bet]:
    market = market_create(prices=("2.10", "3.40", "3.50"))
    home = selections_of(market)[0]
    bet = bet_accepted(punter, home, stake="10.00")
    market_result(market=market, winners=[home.id])
    market_bets_settle(market_id=market.id)
    market.refresh_from_db()
    return market, bet


def _form(market: Market, winner_index: int, **extra) -> dict[str, str]:
    selections = selections_of(market)
    form = {f"result_{s.id}": ("won" if i == winner_index else "lost") for i, s in enumerate(selections)}
    form.update(extra)
    return form


def test_the_event_page_links_a_settled_market_to_its_correction(staff_client, settled_market):
    market, _ = settled_market
    page = staff_client.get(reverse("trading-event", kwargs={"event_id": market.event_id})).content.decode()
    assert reverse("trading-market-resettle", kwargs={"market_id": market.id}) in page


def test_a_trader_previews_then_confirms_a_corrected_result(staff_client, staff, settled_market, punter):
    market, bet = settled_market
    url = reverse("trading-market-resettle", kwargs={"market_id": market.id})
    form = staff_client.get(url)
    assert form.status_code == 200
    assert 'name="result_' in form.content.decode()

    preview = staff_client.get(url, _form(market, 1, preview="1", reason="wrong winner entered"))
    page = preview.content.decode()
    assert preview.status_code == 200
    assert f'data-bet="{bet.id}" data-what="clawed back"' in page
    assert "\N{MINUS SIGN}£21.00" in page  # what the punter's balance gives back
    assert "Resettle 1 bet" in page
    assert Wallet.objects.get(user=punter).balance == Decimal("111.00"), "a preview moves nothing"
    digest = preview.context["preview"].digest

    done = staff_client.post(url, _form(market, 1, reason="wrong winner entered", digest=digest))
    assert done.status_code == 302
    assert done["Location"] == reverse("trading-event", kwargs={"event_id": market.event_id})
    bet.refresh_from_db()
    assert bet.status == Bet.Status.LOST
    assert Wallet.objects.get(user=punter).balance == Decimal("90.00")
    entry = AuditEntry.objects.get(kind=AuditEntry.Kind.MARKET_RESETTLE)
    assert (entry.actor, entry.reason, entry.after["moved"]) == (staff.username, "wrong winner entered", 1)


def test_a_confirmation_of_a_stale_preview_is_refused_with_the_new_preview(staff_client, settled_market, punter):
    market, bet = settled_market
    url = reverse("trading-market-resettle", kwargs={"market_id": market.id})
    refused = staff_client.post(url, _form(market, 1, reason="wrong winner", digest="0" * 32))
    assert refused.status_code == 409
    page = refused.content.decode()
    assert "changed since the preview" in page
    assert "Resettle 1 bet" in page  # the preview as the bets are now, to confirm again
    bet.refresh_from_db()
    assert bet.status == Bet.Status.WON


@pytest.mark.parametrize(
    ("form", "words"),
    [
        pytest.param({"reason": ""}, "say why the result is corrected", id="no-reason"),
        pytest.param({"winner": 0}, "the result already settled", id="unchanged"),
        pytest.param({"bad": "half"}, "won, lost or void", id="unknown-result"),
    ],
)
def test_refusals_say_why_and_change_nothing(staff_client, settled_market, punter, form, words):
    market, bet = settled_market
    url = reverse("trading-market-resettle", kwargs={"market_id": market.id})
    data = _form(market, form.get("winner", 1), reason=form.get("reason", "typo"), digest="x")
    if "bad" in form:
        data[f"result_{selections_of(market)[1].id}"] = form["bad"]
    response = staff_client.post(url, data)
    assert response.status_code == 400
    assert words in response.content.decode()
    bet.refresh_from_db()
    assert (bet.status, Wallet.objects.get(user=punter).balance) == (Bet.Status.WON, Decimal("111.00"))
    assert not AuditEntry.objects.filter(kind=AuditEntry.Kind.MARKET_RESETTLE).exists()


def test_an_unsettled_market_says_it_cannot_be_resettled(staff_client):
    market = market_create()
    response = staff_client.get(reverse("trading-market-resettle", kwargs={"market_id": market.id}))
    assert "only a settled market is resettled" in response.content.decode()
    assert 'id="resettle-preview"' not in response.content.decode()


def test_staff_without_the_result_permission_cannot_resettle(client, settled_market):
    roles_sync()
    operator = user_create(balance="0")
    operator.is_staff = True
    operator.save()
    operator.groups.add(Group.objects.get(name=OPERATORS))
    staff_sign_in(client, operator)
    market, _ = settled_market
    url = reverse("trading-market-resettle", kwargs={"market_id": market.id})
    assert client.get(url).status_code == 403
    assert client.post(url, _form(market, 1, reason="x", digest="x")).status_code == 403
