"""Voiding a bet from the trading pages: the reason is required, kept with the bet, shown to the
punter with their bets, and audited."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from odds.audit.models import AuditEntry
from odds.betting.models import Bet
from tests.factories import market_create
from tests.integration.betting.helpers import bet_accepted, selections_of

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def test_the_event_page_lists_the_open_bets_with_a_void_form(staff_client, punter):
    market = market_create()
    bet = bet_accepted(punter, selections_of(market)[0])
    body = staff_client.get(reverse("trading-event", kwargs={"event_id": market.event_id})).content.decode()
    assert f'data-bet="{bet.id}"' in body
    assert reverse("trading-bet-void", kwargs={"bet_id": bet.id}) in body


def test_a_void_with_a_reason_refunds_keeps_the_reason_and_audits_it(staff_client, staff, punter):
    market = market_create()
    bet = bet_accepted(punter, selections_of(market)[0])
    back = reverse("trading-event", kwargs={"event_id": market.event_id})
    url = reverse("trading-bet-void", kwargs={"bet_id": bet.id})
    response = staff_client.post(url, {"reason": "  Price was a  palpable error ", "next": back})
    assert (response.status_code, response["Location"]) == (302, back)
    voided = Bet.objects.get(id=bet.id)
    assert (voided.status, voided.payout, voided.void_reason) == ("void", voided.stake, "Price was a palpable error")
    (entry,) = AuditEntry.objects.filter(kind=AuditEntry.Kind.BET_VOID)
    assert (entry.actor, entry.reason) == (staff.username, "Price was a palpable error")


def test_a_void_without_a_reason_is_refused(staff_client, punter):
    bet = bet_accepted(punter, selections_of(market_create())[0])
    staff_client.post(reverse("trading-bet-void", kwargs={"bet_id": bet.id}), {"reason": "   "})
    assert Bet.objects.get(id=bet.id).status == Bet.Status.ACCEPTED
    assert AuditEntry.objects.count() == 0


def test_the_punter_reads_the_reason_with_their_bets(staff_client, punter):
    bet = bet_accepted(punter, selections_of(market_create())[0])
    staff_client.post(reverse("trading-bet-void", kwargs={"bet_id": bet.id}), {"reason": "Event abandoned"})
    client = Client()
    client.force_login(punter)
    body = client.get("/api/bets", {"status": "settled"}).json()
    (mine,) = [b for b in body["bets"] if b["id"] == bet.id]
    assert (mine["status"], mine["void_reason"]) == ("void", "Event abandoned")
