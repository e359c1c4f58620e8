"""The trader's markets page (search, filters, pages), the event page, actions answered in place
and the confirmation step of results and settlements."""

from __future__ import annotations

import re
from datetime import timedelta
from decimal import Decimal

import pytest
from django.urls import reverse
from django.utils import timezone

from odds.betting.models import Bet
from odds.betting.services.bets import LegRequest, bet_place
from odds.catalogue.models import Competition, Event, Market, Selection, Sport
from odds.trading.selectors.trading import (
    EventFilters,
    market_open_bets_count,
    market_result_impact,
    trading_events_page,
    trading_events_query,
)
from reducers.market_kinds import MATCH_WINNER
from tests.factories import live_state_write, market_create, user_create

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def _event(*, home: str, away: str, competition: str = "Premier", sport: str = "football", **fields) -> Event:
    sport_row, _ = Sport.objects.get_or_create(slug=sport, defaults={"name": sport.title()})
    comp, _ = Competition.objects.get_or_create(sport=sport_row, name=competition)
    starts_at = fields.pop("starts_at", timezone.now() + timedelta(days=1))
    event = Event.objects.create(competition=comp, home=home, away=away, starts_at=starts_at, **fields)
    market = Market.objects.create(
        event=event, kind=MATCH_WINNER.key, name="Winner", status=fields.get("market_status", "open")
    )
    Selection.objects.create(market=market, name=home, price=Decimal("1.90"))
    Selection.objects.create(market=market, name=away, price=Decimal("1.90"))
    return event


def _names(filters: EventFilters) -> list[str]:
    return [e.name for e in trading_events_query(filters=filters)]


def test_search_matches_a_team_or_the_competition():
    _event(home="Arsenal", away="Chelsea")
    _event(home="Leeds", away="Hull", competition="Championship")
    assert _names(EventFilters(q="chel")) == ["Arsenal v Chelsea"]
    assert _names(EventFilters(q="champion")) == ["Leeds v Hull"]


def test_sport_and_competition_filters_narrow_the_events():
    _event(home="Arsenal", away="Chelsea")
    tennis = _event(home="Alcaraz", away="Sinner", competition="Open", sport="tennis")
    assert _names(EventFilters(sport="tennis")) == ["Alcaraz v Sinner"]
    assert _names(EventFilters(competition=tennis.competition_id)) == ["Alcaraz v Sinner"]


def test_in_play_and_starting_soon_filters():
    _event(home="Live", away="Now", status=Event.Status.IN_PLAY, starts_at=timezone.now() - timedelta(minutes=30))
    _event(home="Soon", away="Later", starts_at=timezone.now() + timedelta(minutes=90))
    _event(home="Next", away="Week", starts_at=timezone.now() + timedelta(days=7))
    assert _names(EventFilters(in_play=True)) == ["Live v Now"]
    assert _names(EventFilters(soon=True)) == ["Soon v Later"]


def test_status_filter_finds_events_by_their_markets_status():
    _event(home="Open", away="Book")
    suspended = _event(home="Held", away="Book")
    suspended.markets.update(status=Market.Status.SUSPENDED)
    assert _names(EventFilters(status="suspended")) == ["Held v Book"]
    assert sorted(_names(EventFilters())) == ["Held v Book", "Open v Book"]


def test_events_come_in_pages():
    for n in range(5):
        _event(home=f"Team {n}", away="Rivals")
    page = trading_events_page(filters=EventFilters(), page_number=2, per_page=2)
    assert (page.number, page.paginator.num_pages, len(page.object_list)) == (2, 3, 2)


def test_markets_page_reads_its_filters_from_the_query_string(staff_client):
    _event(home="Arsenal", away="Chelsea")
    _event(home="Leeds", away="Hull")
    page = staff_client.get(reverse("trading-markets"), {"q": "arsenal"}).content.decode()
    assert "Arsenal v Chelsea" in page
    assert "Leeds v Hull" not in page
    assert 'value="arsenal"' in page


def test_event_page_shows_every_market_with_its_prices(staff_client):
    market = market_create()
    page = staff_client.get(reverse("trading-event", kwargs={"event_id": market.event_id}))
    assert page.status_code == 200
    body = page.content.decode()
    assert market.event.name in body
    assert f'id="market-{market.id}"' in body
    assert "3.40" in body


def test_event_page_of_an_unknown_event_is_404(staff_client):
    assert staff_client.get(reverse("trading-event", kwargs={"event_id": 999999})).status_code == 404


def test_a_scripted_suspend_answers_with_the_row_as_it_is_now(staff_client, kafka_topics, redis_client):
    market = market_create()
    response = staff_client.post(
        reverse("trading-market-suspend", kwargs={"market_id": market.id}), HTTP_ACCEPT="application/json"
    )
    body = response.json()
    assert body["ok"] is True
    assert 'data-status="suspended"' in body["row"]


def test_a_scripted_bad_price_is_refused_in_words_without_a_page(staff_client):
    market = market_create()
    home = market.selections.order_by("display_order")[0]
    response = staff_client.post(
        reverse("trading-market-price", kwargs={"market_id": market.id}),
        {"selection_id": home.id, "price": "1.001"},
        HTTP_ACCEPT="application/json",
    )
    assert response.status_code == 400
    assert "enter odds from 1.01 to 1000 with at most two decimals" in response.json()["message"]
    assert Selection.objects.get(id=home.id).price == home.price


def test_a_plain_form_action_returns_to_the_market_on_the_page_it_came_from(staff_client, kafka_topics, redis_client):
    market = market_create()
    back = reverse("trading-markets") + "?q=home"
    response = staff_client.post(reverse("trading-market-suspend", kwargs={"market_id": market.id}), {"next": back})
    assert response["Location"] == f"{back}#market-{market.id}"


def _bets_on(market: Market, *, stakes: tuple[str, ...], selection: int = 0) -> None:
    chosen = market.selections.order_by("display_order")[selection]
    for n, stake in enumerate(stakes):
        bet_place(
            user=user_create(balance="50.00"),
            idempotency_key=f"impact-{market.id}-{n}",
            stake=Decimal(stake),
            legs=[LegRequest(selection_id=chosen.id, price_seen=chosen.price)],
        )


def test_result_impact_counts_open_bets_and_their_payout(services, kafka_topics, redis_client):
    market = market_create()
    live_state_write(redis_client, market, prices=("2.10", "3.40", "3.50"))
    _bets_on(market, stakes=("5.00", "10.00"))
    home, draw = market.selections.order_by("display_order")[:2]
    wins = market_result_impact(market=market, winners=[home.id])
    assert (wins.bets, wins.stake_book, wins.payout_book) == (2, Decimal("15.00"), Decimal("31.50"))
    assert wins.stake.by_currency == {"GBP": Decimal("15.00")}
    loses = market_result_impact(market=market, winners=[draw.id])
    assert (loses.bets, loses.payout_book) == (2, Decimal("0"))
    void = market_result_impact(market=market, winners=None)
    assert (void.void, void.payout_book) == (True, Decimal("15.00"))
    assert market_open_bets_count(market_ids=[market.id]) == {market.id: 2}


def test_result_without_confirmation_shows_the_impact_and_changes_nothing(staff_client, kafka_topics, redis_client):
    market = market_create()
    live_state_write(redis_client, market, prices=("2.10", "3.40", "3.50"))
    _bets_on(market, stakes=("5.00",))
    home = market.selections.order_by("display_order")[0]
    response = staff_client.get(
        reverse("trading-market-result-confirm", kwargs={"market_id": market.id}), {"winner": home.id}
    )
    body = response.content.decode()
    assert 'data-impact="bets">1<' in body
    assert 'data-impact="payout">£10.50<' in body
    assert "has not started yet" in body
    staff_client.post(reverse("trading-market-result", kwargs={"market_id": market.id}), {"winner": home.id})
    assert Market.objects.get(id=market.id).status == Market.Status.OPEN
    assert Bet.objects.filter(status=Bet.Status.ACCEPTED).count() == 1


def test_staff_page_for_a_punter_is_the_styled_403(client, punter):
    client.force_login(punter)
    response = client.get(reverse("trading-markets"))
    assert response.status_code == 403
    body = response.content.decode()
    assert 'class="staff-theme"' in body
    assert "This page is for staff only" in body
    assert "odds/favicon" in body


def test_an_unknown_staff_page_is_the_styled_404(staff_client, settings):
    settings.DEBUG = False
    response = staff_client.get("/trading/no-such-page/")
    assert response.status_code == 404
    assert "Page not found" in response.content.decode()


def test_every_base_template_links_the_favicon(staff_client):
    for url in (reverse("home"), reverse("trading-markets"), "/admin/"):
        assert "odds/favicon" in staff_client.get(url).content.decode(), url


def test_a_suspended_market_tells_the_trader_why_who_and_how_long_and_a_long_one_is_flagged(staff_client):
    from odds.catalogue.services.markets import markets_status_set

    event = _event(home="Arsenal", away="Chelsea")
    market = event.markets.get()
    markets_status_set(
        market_ids=[market.id], status="suspended", only_from=["open"], publish=False, reason="goal", by="feed"
    )
    page = staff_client.get(reverse("trading-event", kwargs={"event_id": event.id})).content.decode()
    assert re.search(r"Goal · by feed · for <span data-duration>\d+ s</span>", page)
    assert "Long:" not in page
    Market.objects.filter(id=market.id).update(suspended_at=timezone.now() - timedelta(minutes=25))
    page = staff_client.get(reverse("trading-markets")).content.decode()
    assert 'class="suspension long"' in page
    assert "<strong>Long:</strong> Goal · by feed · for <span data-duration>25 min</span>" in page


def test_event_page_shows_the_live_price_beside_each_control_not_the_catalogue_one(staff_client, redis_client):
    market = market_create(prices=("2.10", "3.40", "3.50"))
    live_state_write(redis_client, market, prices=("1.75", "3.60", "4.50"))
    home = market.selections.order_by("display_order")[0]
    body = staff_client.get(reverse("trading-event", kwargs={"event_id": market.event_id})).content.decode()
    row = re.search(rf'<tr data-selection="{home.id}">.*?</tr>', body, re.DOTALL)
    assert row is not None
    assert re.search(r"<span data-price[^>]*>1\.75</span>", row.group(0))
    assert 'placeholder="1.75"' in row.group(0)
    assert "2.10" not in row.group(0)


def test_without_a_live_state_the_catalogue_price_stands_in_and_says_so(staff_client, redis_client):
    market = market_create(prices=("2.10", "3.40", "3.50"))
    home = market.selections.order_by("display_order")[0]
    body = staff_client.get(reverse("trading-event", kwargs={"event_id": market.event_id})).content.decode()
    row = re.search(rf'<tr data-selection="{home.id}">.*?</tr>', body, re.DOTALL)
    assert row is not None
    assert re.search(
        r"<span data-price[^>]*>2\.10</span> <span class=\"hint\" data-price-source>catalogue</span>", row.group(0)
    )
