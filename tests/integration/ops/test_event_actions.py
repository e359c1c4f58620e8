"""Suspending or resuming a whole event or competition: every market moves in one action, each
bound for bets before the commit and produced to the price topic as its own record, audited as
one event-wide row beside each market's own."""

from __future__ import annotations

import orjson
import pytest
from django.urls import reverse

from odds.audit.models import AuditEntry
from odds.catalogue.models import Event, Market
from odds.catalogue.services.markets import (
    competition_markets_resume,
    competition_markets_suspend,
    event_markets_resume,
    event_markets_suspend,
)
from store import keys
from tests.factories import market_create

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def _event_with_markets(count: int) -> tuple[Event, list[Market]]:
    first = market_create()
    markets = [first]
    for _ in range(count - 1):
        extra = market_create()
        Market.objects.filter(id=extra.id).update(event=first.event)
        markets.append(Market.objects.get(id=extra.id))
    return first.event, markets


def _statuses(markets: list[Market]) -> list[str]:
    return [Market.objects.get(id=m.id).status for m in markets]


def test_suspending_an_event_suspends_every_open_market_and_binds_each_for_bets(staff, redis_client):
    event, markets = _event_with_markets(3)
    Market.objects.filter(id=markets[2].id).update(status=Market.Status.CLOSED)
    moved = event_markets_suspend(event=event, by=staff, note="crowd trouble")
    assert sorted(m.id for m in moved) == sorted(m.id for m in markets[:2])
    assert _statuses(markets) == ["suspended", "suspended", "closed"]
    for market in markets[:2]:
        # Bets go by the decision from now on: it is where placement reads prices.
        decision = redis_client.hget(keys.trader_decision(market.id), "state")
        assert decision is not None
        assert orjson.loads(decision)["status"] == "suspended"
    assert redis_client.hget(keys.trader_decision(markets[2].id), "state") is None


def test_an_event_wide_action_is_one_event_row_and_one_row_per_market(staff, redis_client):
    event, markets = _event_with_markets(2)
    event_markets_suspend(event=event, by=staff, note="crowd trouble")
    (row,) = AuditEntry.objects.filter(kind=AuditEntry.Kind.EVENT_SUSPEND)
    assert (row.object_type, row.object_id, row.reason) == ("event", str(event.id), "crowd trouble")
    assert sorted(row.after["markets"]) == sorted(m.id for m in markets)
    assert AuditEntry.objects.filter(kind=AuditEntry.Kind.MARKET_SUSPEND).count() == 2


def test_resuming_an_event_reopens_its_suspended_markets(staff, redis_client):
    event, markets = _event_with_markets(2)
    event_markets_suspend(event=event, by=staff)
    moved = event_markets_resume(event=event, by=staff)
    assert len(moved) == 2
    assert _statuses(markets) == ["open", "open"]
    assert AuditEntry.objects.filter(kind=AuditEntry.Kind.EVENT_RESUME).count() == 1


def test_an_event_with_nothing_to_move_records_nothing(staff, redis_client):
    event, _ = _event_with_markets(1)
    assert event_markets_resume(event=event, by=staff) == []
    assert AuditEntry.objects.count() == 0


def test_suspending_a_competition_suspends_the_markets_of_all_its_events(staff, redis_client):
    first, second = market_create(), market_create()
    assert first.event.competition_id == second.event.competition_id
    competition = first.event.competition
    assert len(competition_markets_suspend(competition=competition, by=staff)) == 2
    assert _statuses([first, second]) == ["suspended", "suspended"]
    (row,) = AuditEntry.objects.filter(kind=AuditEntry.Kind.COMPETITION_SUSPEND)
    assert row.object_id == str(competition.id)
    assert len(competition_markets_resume(competition=competition, by=staff)) == 2
    assert _statuses([first, second]) == ["open", "open"]


def test_the_event_page_suspends_and_resumes_the_whole_event(staff_client, redis_client):
    event, markets = _event_with_markets(2)
    page = reverse("trading-event", kwargs={"event_id": event.id})
    response = staff_client.post(reverse("trading-event-suspend", kwargs={"event_id": event.id}), {"next": page})
    assert (response.status_code, response["Location"]) == (302, page)
    assert _statuses(markets) == ["suspended", "suspended"]
    staff_client.post(reverse("trading-event-resume", kwargs={"event_id": event.id}), {"next": page})
    assert _statuses(markets) == ["open", "open"]
    body = staff_client.get(page).content.decode()
    assert "Resumed 2 markets of" in body
    assert reverse("trading-competition-suspend", kwargs={"competition_id": event.competition_id}) in body


def test_the_trading_list_offers_the_event_and_the_filtered_competition(staff_client):
    market = market_create()
    body = staff_client.get(reverse("trading-markets"), {"competition": market.event.competition_id}).content.decode()
    assert reverse("trading-event-suspend", kwargs={"event_id": market.event_id}) in body
    assert reverse("trading-competition-resume", kwargs={"competition_id": market.event.competition_id}) in body
