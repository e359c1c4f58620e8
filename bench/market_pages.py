"""The pages over a universe of live markets: the market-scale stage's page figures (bench/markets.py).

``universe`` live markets are made in the database as in-play events of ten markets each (one
match result, the list pages' headline, and nine more), spread over competitions of
``EVENTS_PER_COMPETITION``, with a price of each in the store written through the reducers' own
sink. The product's ASGI server then serves them while a mover moves the markets as often as the
demo feed moves its own (bench.views.DEMO_UPDATES_PER_MARKET_S a market a second). A punter not
logged in, straight from Django (no cache in front):

- loads the in-play list's view snapshot (``/api/views/in-play``): bytes and milliseconds;
- loads the in-play page's HTML: bytes and milliseconds;
- opens the home page and watches its markets with the page's sequences as ``since``, until the
  image: the home page's first price (bench.views' ``first_price_ms_cached`` without the cache).
"""

from __future__ import annotations

import random
import threading
import time
from datetime import timedelta
from decimal import Decimal
from typing import Any

import requests

from bench.common import competitions_remove, log, median, migrate_if_needed
from bench.views import DEMO_UPDATES_PER_MARKET_S, open_live, origin_server
from reducers.market_kinds import MATCH_RESULT, OVER_UNDER
from store.clients import redis_client

COMPETITION_PREFIX = "Benchmark Markets"
MARKETS_PER_EVENT = 10
EVENTS_PER_COMPETITION = 50
PRICES = ("2.10", "3.40", "3.50")
SNAPSHOT = "/api/views/in-play"
LIST_PAGE = "/in-play/"


def universe_create(universe: int) -> list[tuple[int, list[int]]]:
    """``universe`` in-play markets (see the module); each market's id with its selections' ids."""
    from django.utils import timezone

    from odds.catalogue.models import Competition, Event, Market, Selection, Sport

    universe_remove()
    sport, _ = Sport.objects.get_or_create(slug="football", defaults={"name": "Football"})
    events_count = max(1, universe // MARKETS_PER_EVENT)
    competitions = Competition.objects.bulk_create(
        Competition(sport=sport, name=f"{COMPETITION_PREFIX} {n + 1}")
        for n in range((events_count + EVENTS_PER_COMPETITION - 1) // EVENTS_PER_COMPETITION)
    )
    kicked_off = timezone.now() - timedelta(minutes=30)
    events = Event.objects.bulk_create(
        Event(
            competition=competitions[n // EVENTS_PER_COMPETITION],
            home=f"Markets Home {n + 1}",
            away=f"Markets Away {n + 1}",
            starts_at=kicked_off,
            status=Event.Status.IN_PLAY,
            clock="30'",
        )
        for n in range(events_count)
    )
    markets = Market.objects.bulk_create(
        Market(
            event=event,
            kind=MATCH_RESULT.key if order == 0 else OVER_UNDER.key,
            name="Match result" if order == 0 else f"Over/under {order - 0.5:g}",
            line=None if order == 0 else Decimal(order) - Decimal("0.5"),
            display_order=order,
        )
        for event in events
        for order in range(MARKETS_PER_EVENT)
    )
    selections = Selection.objects.bulk_create(
        Selection(market=market, name=name, price=Decimal(price), display_order=i)
        for market in markets
        for i, (name, price) in enumerate(
            zip(("Home", "Draw", "Away") if market.display_order == 0 else ("Over", "Under"), PRICES, strict=False)
        )
    )
    by_market: dict[int, list[int]] = {}
    for selection in selections:
        by_market.setdefault(selection.market_id, []).append(selection.id)
    return list(by_market.items())


def universe_remove() -> None:
    competitions_remove(name__startswith=COMPETITION_PREFIX)


class Mover(threading.Thread):
    """Moves random markets of the universe through the reducers' own sink (state and publish),
    ``rate`` updates a second in batches of a tenth of a second, as a micro-batch lands them."""

    def __init__(self, markets: list[tuple[int, list[int]]], *, rate: float) -> None:
        super().__init__(daemon=True)
        self.markets, self.rate = markets, rate
        self.stopped = threading.Event()
        self.seq = 0
        self.moved = 0
        from django.conf import settings

        from store.markets import MarketStore

        # One sink and connection for every batch, not one a tenth of a second.
        self.sink = MarketStore(redis_client(settings.REDIS_URL))

    def apply(self, markets: list[tuple[int, list[int]]]) -> None:
        from reducers.prices import conflate
        from reducers.schemas import PriceUpdate, SelectionPrice

        self.seq += 1
        now = int(time.time() * 1000)
        updates = []
        for market_id, selection_ids in markets:
            prices = [Decimal(p) + Decimal(random.randint(0, 20)) / 100 for p in PRICES[: len(selection_ids)]]
            book = tuple(map(SelectionPrice, selection_ids, prices))
            updates.append((PriceUpdate(market_id, self.seq, "open", book, now, now), now))
        for start in range(0, len(updates), 1000):
            self.sink.apply(conflate(updates[start : start + 1000]))
        self.moved += len(updates)

    def run(self) -> None:
        per_batch = max(1, round(self.rate / 10))
        while not self.stopped.wait(0.1):
            self.apply(random.sample(self.markets, min(per_batch, len(self.markets))))


def _load(url: str) -> tuple[float, int]:
    """Milliseconds to the whole body, and its bytes (uncompressed)."""
    started = time.perf_counter()
    response = requests.get(url, timeout=30)
    response.raise_for_status()
    return (time.perf_counter() - started) * 1000, len(response.content)


def pages_at(universe: int, *, loads: int) -> dict[str, Any]:
    """The page figures over ``universe`` live markets (see the module), each the median of
    ``loads`` loads after one unmeasured load of each."""
    from bench.common import namespace as fresh_namespace

    migrate_if_needed()
    with fresh_namespace() as namespace:
        markets = universe_create(universe)
        mover = Mover(markets, rate=universe * DEMO_UPDATES_PER_MARKET_S)
        try:
            mover.apply(markets)
            with origin_server(namespace) as origin:
                mover.start()
                _load(origin + SNAPSHOT), _load(origin + LIST_PAGE), open_live(origin, "/", since=True)
                snapshots, pages, first = [], [], []
                for _ in range(loads):
                    snapshots.append(_load(origin + SNAPSHOT))
                    pages.append(_load(origin + LIST_PAGE))
                    first.append(open_live(origin, "/", since=True))
                    time.sleep(0.1)  # the mover moves some markets between punters
        finally:
            mover.stopped.set()
            mover.join(5)
            universe_remove()
    log(f"markets: pages over {universe:,} live markets measured ({mover.moved:,} prices moved meanwhile)")
    return {
        "snapshot_ms": round(median([ms for ms, _ in snapshots]), 1),
        "snapshot_bytes": round(median([size for _, size in snapshots])),
        "list_page_ms": round(median([ms for ms, _ in pages]), 1),
        "list_page_bytes": round(median([size for _, size in pages])),
        "first_price_ms": round(median([f["ms"] for f in first]), 1),
        "home_markets": max(f["markets"] for f in first),
        "moved_per_s": round(universe * DEMO_UPDATES_PER_MARKET_S, 1),
    }
