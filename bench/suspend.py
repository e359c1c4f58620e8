"""How long a suspension takes to reach a punter's screen.

A trader's suspension travels like any price: a snapshot with status ``suspended`` on the price
topic, the price reducer, Redis state and pub-sub, the edge, the websocket. This stage runs the
reducers as `make up` does (micro-batch, ``local[4]``) beside a feed of ``feed_rate`` updates/s
over other markets, connects one websocket client watching the markets it suspends, and times
each suspension and reopening from the moment it is produced to Kafka to the moment the client
receives the ``market.status`` message.

    python -m bench.suspend --count 20
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import subprocess
import threading
import time
from decimal import Decimal
from typing import Any

from bench.common import ROOT, markets_define, median, namespace, percentile
from bench.harness import Process, free_port, python, wait_until
from store.clients import redis_client

WATCHED_COUNT = 10  # markets suspended and reopened in turn; the feed never touches them
FEED_MARKETS = 190  # the feed's markets, after the watched ones

TARGETS = [
    ("suspend_p50_ms", "Trader suspension → punter's websocket, p50", "ms", None),
    ("suspend_p99_ms", "Trader suspension → punter's websocket, p99", "ms", "<= 250"),
    ("suspend_max_ms", "Trader suspension → punter's websocket, slowest", "ms", "<= 1,000"),
]


def _feed(producer: Any, rate: float, first: int, stop: threading.Event) -> None:
    """Background prices for markets the client does not watch, at ``rate`` a second."""
    from reducers import topics
    from reducers.schemas import PriceUpdate, SelectionPrice

    seqs: dict[int, int] = {}
    n = 0
    while not stop.is_set():
        market = first + n % FEED_MARKETS
        seqs[market] = seqs.get(market, 0) + 1
        now = int(time.time() * 1000)
        price = Decimal(150 + n % 300) / 100
        update = PriceUpdate(market, seqs[market], "open", (SelectionPrice(1, price),), now, now)
        producer.produce(topics.prices(), key=update.key(), value=update.encode())
        producer.poll(0)
        n += 1
        stop.wait(1 / rate)
    producer.flush(5)


async def _time_suspensions(url: str, producer: Any, count: int, watched: list[int]) -> list[float]:
    import websockets
    from websockets.typing import Origin

    from reducers import topics
    from reducers.schemas import PriceUpdate, SelectionPrice

    seqs = dict.fromkeys(watched, 0)
    latencies: list[float] = []
    # The page origin of the server itself: the handshake checks scheme, host and port.
    page_origin = "http" + url.removeprefix("ws").split("/ws/", 1)[0]

    async def next_text(deadline: float, what: str) -> str:
        """The next text frame, or TimeoutError once ``deadline`` has passed: the server's
        heartbeats arrive every few seconds, so a wait per frame alone would never end."""
        while True:
            left = deadline - time.perf_counter()
            if left <= 0:
                raise TimeoutError(f"no {what}")
            raw = await asyncio.wait_for(ws.recv(), timeout=left)
            if isinstance(raw, str):
                return raw

    async with websockets.connect(url, origin=Origin(page_origin), compression=None) as ws:
        await ws.send(json.dumps({"type": "watch", "markets": watched}))
        # The watch is answered with an image of the markets: only then is every change to them
        # sent as it happens (an opening applied before would be in the image instead).
        watch_deadline = time.perf_counter() + 60
        while not (await next_text(watch_deadline, "image after the watch")).startswith('{"type":"image"'):
            pass
        status = dict.fromkeys(watched, "open")
        # Every watched market opens first, so each timed update below changes its status.
        for market in watched:
            seqs[market] += 1
            now = int(time.time() * 1000)
            opening = PriceUpdate(market, seqs[market], "open", (SelectionPrice(1, Decimal("2.00")),), now, now)
            producer.produce(topics.prices(), key=opening.key(), value=opening.encode())
        producer.flush(10)
        opened: set[int] = set()
        open_deadline = time.perf_counter() + 60
        while len(opened) < len(watched):  # each watched market's opening state has arrived
            raw = await next_text(open_deadline, f"opening state of {sorted(set(watched) - opened)}")
            if raw.startswith('{"type":"market"'):
                opened.add(json.loads(raw)["market_id"])
        for i in range(count):
            market = watched[i % len(watched)]
            status[market] = "suspended" if status[market] == "open" else "open"
            seqs[market] += 1
            now = int(time.time() * 1000)
            update = PriceUpdate(market, seqs[market], status[market], (SelectionPrice(1, Decimal("2.00")),), now, now)
            sent = time.perf_counter()
            producer.produce(topics.prices(), key=update.key(), value=update.encode())
            producer.flush(10)
            deadline = sent + 30
            while True:
                raw = await next_text(deadline, f"market.status {status[market]} of market {market} within 30 s")
                if not raw.startswith('{"type":"market.status"'):
                    continue
                message = json.loads(raw)
                if message["market_id"] == market and message["status"] == status[market]:
                    latencies.append((time.perf_counter() - sent) * 1000)
                    break
            await asyncio.sleep(0.5)
    return latencies


def time_suspensions(ns: str, *, count: int, feed_rate: float, first: int) -> dict[str, Any]:
    """Time ``count`` suspensions and reopenings through the reducers already running in ``ns``,
    on markets from ``first`` on (defined here), beside a feed of ``feed_rate`` updates/s."""
    from django.conf import settings

    from bench.edge import PRODUCT_APP, server_command
    from odds.core.kafka import producer_create

    client = redis_client(settings.REDIS_URL)
    watched = list(range(first, first + WATCHED_COUNT))
    producer = producer_create()
    markets_define(producer, client, WATCHED_COUNT + FEED_MARKETS, first=first)
    port = free_port()
    server = subprocess.Popen(
        server_command("uvicorn", port=port, workers=2, app=PRODUCT_APP),
        cwd=ROOT,
        env={**os.environ, "SPORTSBOOK_NAMESPACE": ns},
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    stop = threading.Event()
    feed = threading.Thread(target=_feed, args=(producer_create(), feed_rate, first + WATCHED_COUNT, stop), daemon=True)
    try:
        wait_until(lambda: _listening(port), timeout=30, what="uvicorn to listen")
        feed.start()
        latencies = asyncio.run(_time_suspensions(f"ws://127.0.0.1:{port}/ws/odds/", producer, count, watched))
    finally:
        stop.set()
        if feed.is_alive():
            feed.join(5)
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(20)
    return {
        "suspend_p50_ms": round(median(latencies), 1),
        "suspend_p90_ms": round(percentile(latencies, 0.9), 1),
        "suspend_p99_ms": round(percentile(latencies, 0.99), 1),
        "suspend_max_ms": round(max(latencies), 1),
        "suspend_count": len(latencies),
        "suspend_feed_rate": feed_rate,
    }


def bench_suspend(*, count: int = 20, feed_rate: float = 50) -> dict[str, Any]:
    """The stage on its own: reducers as `make up` runs them, in a fresh namespace."""
    from django.conf import settings

    from store import keys

    with namespace() as ns:
        client = redis_client(settings.REDIS_URL)
        env = {
            "SPORTSBOOK_NAMESPACE": ns,
            "SPARK_TRIGGER_MODE": "microbatch",
            "SPARK_CHECKPOINT_DIR": str(ROOT / "var" / "bench-checkpoints" / ns),
        }
        reducer = Process(
            "reducers",
            python("-m", "spark.jobs.reducers"),
            env={**os.environ, **env},
            log=ROOT / "var" / "log" / "bench-suspend.log",
        ).start()
        try:
            wait_until(lambda: client.get(keys.heartbeat("reducers")), timeout=180, what="reducers to start")
            return time_suspensions(ns, count=count, feed_rate=feed_rate, first=1)
        finally:
            reducer.stop()


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--feed-rate", type=float, default=50)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
    import django

    django.setup()
    print(json.dumps(bench_suspend(count=args.count, feed_rate=args.feed_rate), indent=2))


if __name__ == "__main__":
    main()
