"""Time to first odds: a punter opening a list of events, with and without the cache in front.

A competition of benchmark events is served by the real ASGI server with nginx in front
(infra/bin/nginx.sh, the CDN's stand-in) while a publisher moves its prices at the demo feed's
rate. The punter opens the competition's HTML page as a visitor not logged in (the page's own
assets, which a browser keeps, are not counted). Measured in one run:

- ``origin_requests_per_1000_loads``: a burst of loads of the page through the cache, and how
  many of them reached Django (the cache's own log); ``views_snapshot_origin_requests_per_1000_loads``
  the same for the page's JSON view snapshot;
- ``first_price_ms_cached``: the page through the cache, then a websocket through it that
  watches the page's markets with ``since`` the sequences the page names, until its image (the
  page is live);
- ``first_price_ms_uncached``: the page from Django itself, then a watch without ``since`` (a
  full image), as before view snapshots;
- the bytes each way, and the image right after a fresh page (from Django, watched with
  ``since``) against a full image of the same markets, with the markets moving as often as the
  demo feed moves them.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import gzip
import json
import os
import random
import re
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import requests

from bench.common import ROOT, competitions_remove, median, migrate_if_needed
from bench.edge import PRODUCT_APP, server_start
from bench.harness import free_port, wait_until
from reducers.market_kinds import MATCH_RESULT
from store.clients import redis_client

COMPETITION = "Benchmark Views"
PRICES = ("2.10", "3.40", "3.50")
# How often the demo feed moves each market: FEED_RATE (50 updates/s) over the seeded demo's 422
# markets. The benchmark's markets move as often.
DEMO_UPDATES_PER_MARKET_S = 50 / 422
# A list view shows at most this many events (odds.catalogue.selectors.catalogue.event_list).
LIST_EVENTS = 80

TARGETS = [
    (
        "origin_requests_per_1000_loads",
        "Page loads (not logged in) reaching Django, per 1,000 in a burst through the cache",
        "requests",
        "<= 10",
    ),
    (
        "views_snapshot_origin_requests_per_1000_loads",
        "View snapshot loads reaching Django, per 1,000 in a burst through the cache",
        "requests",
        "<= 10",
    ),
    ("first_price_ms_cached", "A page live: the page through the cache, then watch since it, p50", "ms", None),
    ("first_price_ms_uncached", "A page live: the page from Django, then a full image, p50", "ms", None),
    ("views_bytes_cached", "Bytes to a live page, through the cache and since", "bytes", None),
    ("views_bytes_uncached", "Bytes to a live page, from Django with a full image", "bytes", None),
    ("views_image_since_share", "Image after a fresh page (watched since it) ÷ a full image, bytes", "ratio", "<= 0.1"),
]


def log(message: str) -> None:
    print(f"[views] {message}", flush=True)


def _events_create(count: int) -> tuple[int, list[int]]:
    """Benchmark events with one match-result market each; the competition and the market ids."""
    from datetime import timedelta

    from django.utils import timezone

    from odds.catalogue.models import Competition, Event, Market, Selection, Sport

    _events_remove()
    sport, _ = Sport.objects.get_or_create(slug="football", defaults={"name": "Football"})
    competition, _ = Competition.objects.get_or_create(sport=sport, name=COMPETITION)
    starts_at = timezone.now() + timedelta(days=30)  # no lifecycle job touches them during the run
    market_ids = []
    for n in range(1, count + 1):
        event = Event.objects.create(
            competition=competition, home=f"Views Home {n}", away=f"Views Away {n}", starts_at=starts_at
        )
        market = Market.objects.create(event=event, kind=MATCH_RESULT.key, name="Match result")
        Selection.objects.bulk_create(
            Selection(market=market, name=name, price=Decimal(price), display_order=i)
            for i, (name, price) in enumerate(zip(("Home", "Draw", "Away"), PRICES, strict=True))
        )
        market_ids.append(market.id)
    return competition.id, market_ids


def _events_remove() -> None:
    competitions_remove(name=COMPETITION)


class Feed(threading.Thread):
    """Moves random benchmark markets through the reducers' own sink (state + publish)."""

    def __init__(self, market_ids: list[int], *, rate: float) -> None:
        super().__init__(daemon=True)
        self.market_ids, self.rate = market_ids, rate
        self.stopped = threading.Event()
        self.seq = 1

    def apply_all(self) -> None:
        self._apply(self.market_ids)

    def _apply(self, market_ids: list[int]) -> None:
        from django.conf import settings

        from odds.catalogue.models import Selection
        from reducers.prices import conflate
        from reducers.schemas import PriceUpdate, SelectionPrice
        from store.markets import MarketStore

        sink = MarketStore(redis_client(settings.REDIS_URL))
        self.seq += 1
        now = int(time.time() * 1000)
        updates = []
        for market_id in market_ids:
            selections = Selection.objects.filter(market_id=market_id).order_by("display_order")
            ids = list(selections.values_list("id", flat=True))
            prices = [Decimal(p) + Decimal(random.randint(0, 20)) / 100 for p in PRICES]
            updates.append(
                (PriceUpdate(market_id, self.seq, "open", tuple(map(SelectionPrice, ids, prices)), now, now), now)
            )
        sink.apply(conflate(updates))

    def run(self) -> None:
        while not self.stopped.wait(1 / self.rate):
            self._apply([random.choice(self.market_ids)])


@contextlib.contextmanager
def origin_server(namespace: str) -> Iterator[str]:
    """The product's ASGI server (two uvicorn workers) in ``namespace``, answering; yields its URL."""
    port = free_port()
    env = {**os.environ, "SPORTSBOOK_NAMESPACE": namespace, "PYTHONUNBUFFERED": "1"}
    server = server_start("uvicorn", port=port, workers=2, app=PRODUCT_APP, env=env)
    try:
        origin = f"http://127.0.0.1:{port}"
        wait_until(lambda: _answers(origin), timeout=60, what="the ASGI server")
        yield origin
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(20)


@contextlib.contextmanager
def _stack(namespace: str) -> Iterator[tuple[str, str, Path]]:
    """The ASGI server and nginx in front of it; yields both URLs and the cache's access log."""
    with origin_server(namespace) as origin:
        var = Path(tempfile.mkdtemp(prefix="sportsbook-views-"))
        listen = f"127.0.0.1:{free_port()}"
        proxy_env = {
            **os.environ,
            "SPORTSBOOK_NAMESPACE": namespace,
            "SPORTSBOOK_VAR": str(var),
            "PROXY_LISTEN": listen,
            "PROXY_UPSTREAM": origin.removeprefix("http://"),
        }
        script = ROOT / "infra" / "bin" / "nginx.sh"
        try:
            subprocess.run([str(script), "start"], env=proxy_env, check=True, capture_output=True, timeout=60)
            yield origin, f"http://{listen}", var / "log" / "nginx-access.log"
        finally:
            subprocess.run([str(script), "stop"], env=proxy_env, capture_output=True, timeout=60)


def _answers(url: str) -> bool:
    try:
        return requests.get(f"{url}/api/openapi.json", timeout=2).status_code == 200
    except requests.RequestException:
        return False


def _origin_requests(log_path: Path, path: str) -> int:
    lines = [line for line in log_path.read_text().splitlines() if f'"GET {path} ' in line]
    return sum(1 for line in lines if "upstream=-" not in line)


HELD_SCRIPT = re.compile(r'<script id="held-markets" type="application/json">(.*?)</script>', re.S)
PAGE_MARKET = re.compile(r'data-market="(\d+)"')


def _page_markets(html: str) -> tuple[list[int], dict[str, list[Any]]]:
    """The markets a page shows and what it names as held (its ``held-markets`` script)."""
    markets = list(dict.fromkeys(int(m) for m in PAGE_MARKET.findall(html)))
    found = HELD_SCRIPT.search(html)
    return markets, (json.loads(found.group(1)) if found else {})


def open_live(base: str, path: str, *, since: bool) -> dict[str, float]:
    """Load the page from ``base``, open the websocket there and watch its markets (with the
    page's sequences as ``since`` or without): milliseconds until the image, and bytes."""
    from websockets.sync.client import connect
    from websockets.typing import Origin

    started = time.perf_counter()
    # What crosses the wire: the body as sent (compressed when the server compresses it).
    response = requests.get(base + path, timeout=30, stream=True, headers={"Accept-Encoding": "gzip"})
    response.raise_for_status()
    wire = response.raw.read(decode_content=False)
    body = gzip.decompress(wire) if response.headers.get("Content-Encoding") == "gzip" else wire
    page_ms = (time.perf_counter() - started) * 1000
    markets, held = _page_markets(body.decode())
    watch: dict[str, Any] = {"type": "watch", "markets": markets}
    if since:
        watch["since"] = held
    ws_url = base.replace("http://", "ws://") + "/ws/odds/"
    with connect(ws_url, origin=Origin(base), open_timeout=10) as ws:
        ws.recv(timeout=10)  # hello
        ws.send(json.dumps(watch))
        while True:
            frame = str(ws.recv(timeout=10))
            if frame.startswith('{"type":"image"'):
                break
    return {
        "ms": (time.perf_counter() - started) * 1000,
        "page_ms": page_ms,
        "page_bytes": len(wire),
        "image_bytes": len(frame),
        "markets": len(markets),
    }


def _burst(url: str, count: int) -> tuple[list[int], float]:
    """``count`` loads of ``url`` by 16 visitors at once: the statuses and the seconds taken."""
    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        statuses = list(pool.map(lambda _: requests.get(url, timeout=30).status_code, range(count)))
    return statuses, time.perf_counter() - started


def bench_views(*, events: int = LIST_EVENTS, burst: int = 1_000, loads: int = 20) -> dict[str, Any]:
    """Every ``views`` key, measured in one run (see the module's docstring)."""
    feed_rate = events * DEMO_UPDATES_PER_MARKET_S
    from bench.common import namespace as fresh_namespace

    migrate_if_needed()
    with fresh_namespace() as namespace:
        competition_id, market_ids = _events_create(events)
        feed = Feed(market_ids, rate=feed_rate)
        try:
            feed.apply_all()
            with _stack(namespace) as (origin, cache, access_log):
                page = f"/sport/football/{competition_id}/"
                snapshot = f"/api/views/sport/football/{competition_id}"
                feed.start()
                log(f"a burst of {burst} page loads through the cache")
                statuses, burst_s = _burst(cache + page, burst)
                log(f"a burst of {burst} snapshot loads through the cache")
                snapshot_statuses, _ = _burst(cache + snapshot, burst)
                time.sleep(0.5)  # the cache's log of the last answers
                origin_hits = _origin_requests(access_log, page)
                snapshot_origin_hits = _origin_requests(access_log, snapshot)
                log(f"{loads} punters opening the page, with and without the cache and since")
                cached, uncached, fresh = [], [], []
                for _ in range(loads):
                    cached.append(open_live(cache, page, since=True))
                    uncached.append(open_live(origin, page, since=False))
                    fresh.append(open_live(origin, page, since=True))
                    time.sleep(0.2)  # the feed moves some markets between punters
        finally:
            feed.stopped.set()
            _events_remove()
    image_since = median([f["image_bytes"] for f in fresh])
    image_full = median([u["image_bytes"] for u in uncached])
    return {
        "origin_requests_per_1000_loads": round(origin_hits * 1000 / burst, 1),
        "views_snapshot_origin_requests_per_1000_loads": round(snapshot_origin_hits * 1000 / burst, 1),
        "views_burst_loads": burst,
        "views_burst_s": round(burst_s, 2),
        "views_burst_errors": sum(1 for s in statuses + snapshot_statuses if s != 200),
        "views_page_markets": max(c["markets"] for c in cached),
        "first_price_ms_cached": round(median([c["ms"] for c in cached]), 1),
        "first_price_ms_uncached": round(median([u["ms"] for u in uncached]), 1),
        "views_page_ms_cached": round(median([c["page_ms"] for c in cached]), 1),
        "views_page_ms_uncached": round(median([u["page_ms"] for u in uncached]), 1),
        "views_bytes_cached": round(median([c["page_bytes"] + c["image_bytes"] for c in cached])),
        "views_bytes_uncached": round(median([u["page_bytes"] + u["image_bytes"] for u in uncached])),
        "views_image_since_bytes": round(image_since),
        "views_image_full_bytes": round(image_full),
        "views_image_since_share": round(image_since / image_full, 3) if image_full else None,
        "views_events": events,
        "views_feed_rate": round(feed_rate, 1),
    }
