"""Names typed by traders or carried by the feed (events, teams, markets, selections) are shown
as text: HTML and script in them never reach a page as markup, in the punter pages, the trader
pages or the admin."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from odds.catalogue.models import Competition, Event, Market, Selection, Sport
from reducers.market_kinds import MATCH_RESULT
from tests.integration.security.conftest import logged_in

pytestmark = [pytest.mark.integration]

SCRIPT = "<script>window.pwned=1</script>"
IMAGE = '<img src=x onerror="window.pwned=2">'


def hostile_market() -> Market:
    sport, _ = Sport.objects.get_or_create(slug="football", defaults={"name": "Football"})
    competition, _ = Competition.objects.get_or_create(sport=sport, name=f"League {IMAGE}")
    event = Event.objects.create(
        competition=competition, home=SCRIPT, away=IMAGE, starts_at=timezone.now() + timedelta(hours=1)
    )
    market = Market.objects.create(event=event, kind=MATCH_RESULT.key, name=SCRIPT, status="open")
    for i, name in enumerate((SCRIPT, "Draw", IMAGE)):
        Selection.objects.create(market=market, name=name, price=Decimal("2.50"), display_order=i)
    return market


def _pages(market: Market) -> list[str]:
    return [
        "/",
        f"/event/{market.event_id}/",
        "/in-play/",
        "/trading/",
        f"/trading/markets/{market.pk}/settlement",
        "/admin/catalogue/market/",
        f"/admin/catalogue/market/{market.pk}/change/",
        "/admin/catalogue/event/",
        f"/admin/catalogue/event/{market.event_id}/change/",
        "/admin/catalogue/selection/",
    ]


@pytest.mark.django_db
def test_hostile_names_are_escaped_on_every_page(services, staff, redis_client):
    market = hostile_market()
    client = logged_in(staff)
    for url in _pages(market):
        response = client.get(url)
        assert response.status_code == 200, url
        html = response.content.decode()
        assert SCRIPT not in html, url
        assert IMAGE not in html, url
    event_page = client.get(f"/event/{market.event_id}/").content.decode()
    assert "&lt;script&gt;window.pwned=1&lt;/script&gt;" in event_page


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_hostile_names_run_no_script_in_the_browser(asgi_server, page, redis_client):
    market = hostile_market()
    page.goto(f"{asgi_server}/event/{market.event_id}/")
    page.wait_for_load_state("networkidle")
    assert page.evaluate("window.pwned") is None
    assert SCRIPT in page.inner_text("body")
