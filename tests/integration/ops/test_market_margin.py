"""A market's margin as a trader sets it: kept on the market, audited with the margin it replaced,
refused with the rule when it is not a percentage from 0 to 25, and carried by every book the feed
prices for the market from then on (the first one at once)."""

from __future__ import annotations

import io
from decimal import Decimal

import orjson
import pytest
from django.urls import reverse

from odds.audit.models import AuditEntry
from odds.catalogue.models import Market
from odds.catalogue.services.markets import MarketStateError, market_margin_set
from odds.feed.book import overround
from odds.feed.services.feed import FeedRunner
from tests.factories import market_create

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def _margin_post(client, market: Market, margin: str, *, script: bool = False, **fields: str):
    headers = {"Accept": "application/json"} if script else {}
    url = reverse("trading-market-margin", kwargs={"market_id": market.id})
    return client.post(url, {"margin": margin, **fields}, headers=headers)


def test_a_trader_sets_a_margin_as_a_percentage_and_the_audit_keeps_the_one_it_replaced(staff_client, redis_client):
    market = market_create()
    response = _margin_post(staff_client, market, "6.25", note="derby: more margin")
    assert response.status_code == 302
    fresh = Market.objects.get(id=market.id)
    assert fresh.margin == Decimal("0.0625")
    assert fresh.version == market.version + 1
    (entry,) = AuditEntry.objects.filter(kind=AuditEntry.Kind.MARGIN_SET)
    assert (entry.before, entry.after, entry.reason) == ({"margin": None}, {"margin": "0.0625"}, "derby: more margin")
    page = staff_client.get(reverse("trading-event", kwargs={"event_id": market.event_id})).content.decode()
    assert 'value="6.25"' in page


def test_the_script_gets_the_market_row_with_its_margin(staff_client, redis_client):
    market = market_create()
    response = _margin_post(staff_client, market, "5", script=True)
    assert response.status_code == 200
    body = response.json()
    assert body["ok"] is True
    assert "margin 5.00 %" in body["message"]
    assert 'value="5"' in body["row"]


def test_a_margin_out_of_bounds_is_refused_with_the_rule_and_changes_nothing(staff_client, redis_client):
    market = market_create()
    for typed in ("30", "-2", "five", "5.125"):
        response = _margin_post(staff_client, market, typed, script=True)
        assert response.status_code == 400, typed
        assert "percentage from 0 to 25" in response.json()["message"]
    fresh = Market.objects.get(id=market.id)
    assert (fresh.margin, fresh.version) == (None, market.version)
    assert not AuditEntry.objects.filter(kind=AuditEntry.Kind.MARGIN_SET).exists()


def test_an_empty_margin_gives_the_market_back_to_the_model(staff, redis_client):
    market = market_create()
    market_margin_set(market=market, margin=Decimal("0.08"), by=staff)
    market_margin_set(market=market, margin=None, by=staff)
    assert Market.objects.get(id=market.id).margin is None
    entries = AuditEntry.objects.filter(kind=AuditEntry.Kind.MARGIN_SET).order_by("id")
    assert [e.after for e in entries] == [{"margin": "0.08"}, {"margin": None}]


def test_setting_the_margin_a_market_has_records_nothing(staff, redis_client):
    market = market_create()
    market_margin_set(market=market, margin=Decimal("0.05"), by=staff)
    version = Market.objects.get(id=market.id).version
    market_margin_set(market=market, margin=Decimal("0.05"), by=staff)
    assert Market.objects.get(id=market.id).version == version
    assert AuditEntry.objects.filter(kind=AuditEntry.Kind.MARGIN_SET).count() == 1


def test_a_settled_market_keeps_its_margin(staff, redis_client):
    market = market_create()
    Market.objects.filter(id=market.id).update(status=Market.Status.SETTLED)
    with pytest.raises(MarketStateError, match="margin can no longer change"):
        market_margin_set(market=market, margin=Decimal("0.05"), by=staff)


def _books(recording: io.BytesIO, market: Market) -> list[list[Decimal]]:
    updates = [orjson.loads(line) for line in recording.getvalue().splitlines()]
    return [[Decimal(s["price"]) for s in u["selections"]] for u in updates if u["market_id"] == market.id]


@pytest.mark.django_db(transaction=True)
def test_the_feed_prices_the_market_with_the_traders_margin_from_its_next_book(staff, kafka_topics, redis_client):
    market = market_create(prices=("2.10", "3.40", "3.50"))
    recording = io.BytesIO()
    runner = FeedRunner(rate=100, markets=10, seed=5, record=recording, speed=1, lifecycle=False)
    # Ladder prices round down (the book keeps the rounding), so a book's overround sits at its
    # margin or a little above it.
    for margin, low, high in ((Decimal("0.15"), "1.15", "1.19"), (Decimal("0"), "1.00", "1.04")):
        market_margin_set(market=market, margin=margin, by=staff)
        before = len(_books(recording, market))
        runner.sync_catalogue()
        books = _books(recording, market)
        assert len(books) == before + 1, "the new margin is published at once, not on the market's next move"
        for _ in range(5):
            runner.tick_prices(20)
        books = _books(recording, market)[before:]
        assert len(books) > 1
        for book in books:
            assert Decimal(low) <= overround(book) <= Decimal(high), (margin, book)
