"""The traders' price movers page: the movers query's newest windows, each market named from the
markets table with the selection that moved most, its first and last price and the move with its
direction in words; the table alone for the page's script to read again on a ``desk.movers`` frame."""

from __future__ import annotations

import time
from decimal import Decimal

import pytest
from django.urls import reverse

from reducers.movers import Move
from store import keys
from store.markets import MarketStore
from tests.factories import market_create, markets_define
from tests.integration.betting.helpers import selections_of

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture
def windows(redis_client):
    """Two windows after every real one the session's movers query ranks (so they are the newest),
    removed again afterwards."""
    first, second = 4_100_000_000_000, 4_100_000_060_000
    yield first, second
    for window in (first, second):
        redis_client.delete(keys.movers(window), keys.movers_moves(window))
        redis_client.zrem(keys.movers_index(), str(window))


def test_the_page_names_each_mover_its_selection_prices_and_direction(staff_client, redis_client, windows):
    first, second = windows
    drifting, shortening = market_create(), market_create()
    markets_define(redis_client, drifting, shortening)
    out, into = selections_of(drifting)[2], selections_of(shortening)[0]
    MarketStore(redis_client).rank_movers(
        {
            (second, drifting.id): Move(out.id, Decimal("3.00"), Decimal("3.75"), 2500),
            (second, shortening.id): Move(into.id, Decimal("2.10"), Decimal("1.80"), -1428),
            (first, drifting.id): Move(out.id, Decimal("2.90"), Decimal("3.00"), 344),
        },
        now_ms=int(time.time() * 1000),
    )
    body = staff_client.get(reverse("trading-movers")).content.decode()
    newest = body[: body.index(f'data-window="{first // 1000}"')]
    # The newest window first, its biggest move first.
    assert newest.index(f'data-market="{drifting.id}"') < newest.index(f'data-market="{shortening.id}"')
    assert str(drifting.event) in newest
    assert out.name in newest
    assert "+25.00 %" in newest
    assert "drifting" in newest
    assert "\N{MINUS SIGN}14.28 %" in newest
    assert "shortening" in newest
    assert reverse("trading-event", kwargs={"event_id": drifting.event_id}) in newest
    assert "+3.44 %" in body[body.index(f'data-window="{first // 1000}"') :]


def test_the_table_alone_is_what_the_script_reads_again(staff_client, redis_client, windows):
    _, second = windows
    market = market_create()
    markets_define(redis_client, market)
    MarketStore(redis_client).rank_movers(
        {(second, market.id): Move(selections_of(market)[0].id, Decimal("2.00"), Decimal("2.20"), 1000)},
        now_ms=int(time.time() * 1000),
    )
    fragment = staff_client.get(reverse("trading-movers"), {"fragment": "table"}).content.decode()
    assert "+10.00 %" in fragment
    assert "<nav" not in fragment
    assert "<h1" not in fragment


def test_a_market_the_markets_table_no_longer_holds_is_shown_by_its_id(staff_client, redis_client, windows):
    _, second = windows
    MarketStore(redis_client).rank_movers(
        {(second, 987_654_321): Move(1, Decimal("5.00"), Decimal("4.00"), -2000)}, now_ms=int(time.time() * 1000)
    )
    body = staff_client.get(reverse("trading-movers")).content.decode()
    assert "(not in the markets table)" in body
    assert "987654321" in body
