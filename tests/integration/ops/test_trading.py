"""Trader actions through the staff pages: events from templates, suspension, result and settlement."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.urls import reverse

from odds.betting.models import Bet
from odds.betting.services.bets import LegRequest, bet_place
from odds.catalogue.models import Event, Market
from reducers.market_kinds import KINDS, SPORTS
from tests.factories import live_state_write, market_create, user_create

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def test_football_event_is_created_with_the_markets_its_sport_offers(staff_client, kafka_topics, redis_client):
    response = staff_client.post(
        reverse("trading-event-create"),
        {"sport": "football", "competition": "Cup", "home": "Reds", "away": "Blues", "starts_at": "2030-01-01T15:00"},
    )
    assert response.status_code == 302
    event = Event.objects.get(home="Reds", away="Blues")
    kinds = list(event.markets.order_by("display_order").values_list("kind", flat=True))
    assert kinds == [offer.kind.key for offer in SPORTS["football"].offers]
    assert kinds == ["match_result", "over_under", "btts", "double_chance", "handicap"]
    for market in event.markets.all():
        prices = [s.price for s in market.selections.all()]
        assert all(p >= Decimal("1.01") for p in prices)
        # Double chance's selections win two at a time: its book is twice a one-winner book.
        assert Decimal("1.0") < sum(1 / p for p in prices) / KINDS[market.kind].winning < Decimal("1.15")


def test_tennis_event_gets_a_match_winner_and_a_total_games_market(staff_client, kafka_topics, redis_client):
    staff_client.post(
        reverse("trading-event-create"),
        {"sport": "tennis", "competition": "Open", "home": "A", "away": "B", "starts_at": "2030-01-01T15:00"},
    )
    markets = Event.objects.get(home="A", away="B").markets.order_by("display_order")
    assert list(markets.values_list("kind", "name")) == [
        ("match_winner", "Match winner"),
        ("over_under", "Total games over/under 22.5"),
    ]


def test_a_double_chance_market_is_resulted_by_the_match_outcome_and_two_selections_win(
    staff_client, kafka_topics, redis_client, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        staff_client.post(
            reverse("trading-event-create"),
            {
                "sport": "football",
                "competition": "Cup",
                "home": "Reds",
                "away": "Blues",
                "starts_at": "2030-01-01T15:00",
            },
        )
    market = Event.objects.get(home="Reds", away="Blues").markets.get(kind="double_chance")
    page = staff_client.get(reverse("trading-event", kwargs={"event_id": market.event_id})).content.decode()
    assert '<option value="draw">Draw</option>' in page
    with django_capture_on_commit_callbacks(execute=True):
        staff_client.post(
            reverse("trading-market-result", kwargs={"market_id": market.id}), {"winner": "draw", "confirm": "yes"}
        )
    results = dict(market.selections.values_list("name", "result"))
    assert results == {"Reds or draw": "won", "Draw or Blues": "won", "Reds or Blues": "lost"}


def test_suspend_button_suspends_the_market(staff_client, kafka_topics, redis_client):
    market = market_create()
    staff_client.post(reverse("trading-market-suspend", kwargs={"market_id": market.id}))
    market.refresh_from_db()
    assert market.status == Market.Status.SUSPENDED


def test_result_settles_bets_and_progress_shows_all_settled(
    staff_client, kafka_topics, redis_client, django_capture_on_commit_callbacks
):
    market = market_create()
    live_state_write(redis_client, market, prices=("2.10", "3.40", "3.50"))
    home = market.selections.order_by("display_order")[0]
    for n in range(3):
        punter = user_create(balance="20.00")
        bet_place(
            user=punter,
            idempotency_key=f"t-{n}",
            stake=Decimal("5.00"),
            legs=[LegRequest(selection_id=home.id, price_seen=Decimal("2.10"))],
        )
    with django_capture_on_commit_callbacks(execute=True):
        response = staff_client.post(
            reverse("trading-market-result", kwargs={"market_id": market.id}), {"winner": home.id, "confirm": "yes"}
        )
    assert response["Location"] == reverse("trading-settlement", kwargs={"market_id": market.id})
    progress = staff_client.get(reverse("trading-api-settlement", kwargs={"market_id": market.id})).json()
    assert (progress["settled"], progress["total"], progress["done"]) == (3, 3, True)
    assert set(Bet.objects.filter(legs__market=market).values_list("status", flat=True)) == {"won"}
