"""Soak run: a steady price load and many websocket clients for a long time, watching for leaks.

One uvicorn worker serves ``--clients`` websocket clients (two client processes), each watching
20 of ``--markets`` markets, while a publisher applies ``--rate`` price updates a second through
the reducers' Redis sink (``bench.edge``'s publisher and clients). The clients connect over the
first half of the warm-up and retry a failed handshake (counted as ``open_retries``); a
connection that fails to open after four attempts, or closes once open, is a drop. Every
``--sample`` seconds the resident memory of each process (with its children) is recorded. The
run reports, per process, the growth of memory from the first to the last third of the run
(after warm-up), the clients' dropped connections, the updates merged for clients that fell
behind, and the subscription maps: the Redis maps of the control API before and after, and the
hub's pub-sub subscriptions at every sample (flat while the clients are connected) and after
they have gone.

    python -m bench.soak --duration 600 --clients 1000 --rate 1000
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import random
import signal
import socket
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from bench.harness import free_port
from store.clients import redis_client

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"


def _rss_mib(pid: int) -> float:
    import psutil

    try:
        root = psutil.Process(pid)
        return sum(p.memory_info().rss for p in [root, *root.children(recursive=True)]) / 2**20
    except psutil.NoSuchProcess:
        return 0.0


def map_sizes(redis_url: str, namespace: str) -> dict[str, int]:
    """Sizes of the subscription maps: market → channels, channel → markets, the channel index."""

    os.environ["SPORTSBOOK_NAMESPACE"] = namespace
    from reducers import keys

    client = redis_client(redis_url)
    market_sets = list(client.scan_iter(match=keys.market_channels(0).removesuffix("0") + "*", count=1000))
    channel_sets = list(client.scan_iter(match=keys.channel_markets("") + "*", count=1000))
    return {
        "market_channels_members": sum(int(client.scard(k)) for k in market_sets),
        "channel_markets_members": sum(int(client.scard(k)) for k in channel_sets),
        "channels_index": int(client.zcard(keys.channels_index())),
        # The edge's own map: the market channels its hub holds subscribed in Redis.
        "hub_subscriptions": hub_subscriptions(client),
    }


def hub_subscriptions(client: Any) -> int:
    """Market pub-sub channels with a subscriber (the hub subscribes once per market per process)."""
    from reducers import keys

    return len(client.pubsub_channels(keys.market_channel_pattern()))


def growth(samples: list[float]) -> float:
    """Percent change from the median of the first third of ``samples`` to that of the last third."""
    third = max(1, len(samples) // 3)
    first, last = statistics.median(samples[:third]), statistics.median(samples[-third:])
    return round(100.0 * (last - first) / first, 2) if first else 0.0


def run(*, duration: float, clients: int, rate: float, markets: int, sample_s: float, warmup: float) -> dict[str, Any]:
    """Run the soak in its own namespace; the caller's namespace is restored afterwards."""
    previous = os.environ.get("SPORTSBOOK_NAMESPACE")
    try:
        return _run(duration=duration, clients=clients, rate=rate, markets=markets, sample_s=sample_s, warmup=warmup)
    finally:
        if previous is None:
            os.environ.pop("SPORTSBOOK_NAMESPACE", None)
        else:
            os.environ["SPORTSBOOK_NAMESPACE"] = previous


def _run(*, duration: float, clients: int, rate: float, markets: int, sample_s: float, warmup: float) -> dict[str, Any]:

    from bench.edge import client_process, publisher_process, server_start

    namespace = f"soak{uuid.uuid4().hex[:6]}"
    redis_url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
    port = free_port()
    env = {**os.environ, "SPORTSBOOK_NAMESPACE": namespace, "PYTHONUNBUFFERED": "1"}
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    server = server_start("uvicorn", port=port, workers=1, app="webapp.asgi:application", env=env)
    ctx = mp.get_context("spawn")
    out: Any = ctx.Queue()
    started = time.time()
    try:
        deadline = time.time() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.time() > deadline or server.poll() is not None:
                    raise RuntimeError("uvicorn did not start") from None
                time.sleep(0.3)
        before = map_sizes(redis_url, namespace)
        rng = random.Random(7)
        lists = [rng.sample(range(1, markets + 1), 20) for _ in range(clients)]
        os.environ["SPORTSBOOK_NAMESPACE"] = namespace
        total = warmup + duration
        publisher = ctx.Process(target=publisher_process, args=(namespace, markets, rate, total + 5, out))
        publisher.start()
        url = f"ws://127.0.0.1:{port}/ws/odds/"
        halves = [lists[: clients // 2], lists[clients // 2 :]]
        client_procs = [
            # Clients arrive over the first half of the warm-up, not all in the same instant, and
            # retry a failed handshake as the browser client does; a connection that closes once
            # open is a drop.
            ctx.Process(target=client_process, args=(url, half, duration, warmup, False, out, warmup / 2, 4))
            for half in halves
        ]
        for proc in client_procs:
            proc.start()
        pids: dict[str, int | None] = {"uvicorn": server.pid, "publisher": publisher.pid}
        pids.update({f"clients-{i}": p.pid for i, p in enumerate(client_procs)})
        memory: dict[str, list[float]] = {name: [] for name in pids}
        store_client = redis_client(redis_url)
        subscribed: list[int] = []  # the hub's subscriptions at each sample
        next_report = time.time() + 30
        results: list[dict[str, Any]] = []
        expected = len(client_procs) + 1
        # Read results as they come: a process that put on the queue exits only once it is read.
        while len(results) < expected:
            time.sleep(sample_s)
            while not out.empty():
                results.append(out.get())
            if time.time() - started > total + 120:
                raise RuntimeError("the soak clients did not finish")
            if not warmup <= time.time() - started <= total:
                continue
            for name, pid in pids.items():
                rss = _rss_mib(pid) if pid else 0.0
                if rss:
                    memory[name].append(round(rss, 1))
            if time.time() - started <= total - 2 * sample_s:  # every client still connected
                subscribed.append(hub_subscriptions(store_client))
            if time.time() >= next_report:
                elapsed = time.time() - started - warmup
                print(
                    f"soak: {elapsed:5.0f}/{duration:.0f} s  uvicorn {memory['uvicorn'][-1]:.0f} MiB",
                    flush=True,
                )
                next_report += 30
        publisher.join(30)
        time.sleep(1)
        after = map_sizes(redis_url, namespace)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(30)
    client_results = [r for r in results if "received" in r]
    published = sum(r.get("published", 0) for r in results)
    received = sum(r["received"] for r in client_results)
    return {
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "duration_s": duration,
        "clients": clients,
        "rate_per_s": rate,
        "published": published,
        "published_per_s": round(published / (total + 5)),
        "received": received,
        "received_per_s": round(received / duration),
        # Updates the edge merged into newer ones for clients that fell behind (each announced
        # to the client in a `conflated` frame): counted, never silently dropped.
        "merged": sum(r.get("merged", 0) for r in client_results),
        "hub_subscriptions_during": [min(subscribed), max(subscribed)] if subscribed else [],
        "open_retries": sum(r.get("open_retries", 0) for r in client_results),
        "dropped_connections": sum(r["error_count"] for r in client_results),
        "client_errors": [e for r in client_results for e in r["errors"]][:5],
        "memory_growth_pct": {name: growth(values) for name, values in memory.items() if values},
        "memory_mib": {name: [values[0], values[-1]] for name, values in memory.items() if values},
        "samples": len(memory["uvicorn"]),
        "maps_before": before,
        "maps_after": after,
    }


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=600.0, help="seconds measured (after warm-up)")
    parser.add_argument("--clients", type=int, default=1000)
    parser.add_argument("--rate", type=float, default=1000.0, help="price updates per second")
    parser.add_argument("--markets", type=int, default=1000)
    parser.add_argument("--sample", type=float, default=5.0, help="seconds between memory samples")
    parser.add_argument("--warmup", type=float, default=15.0)
    parser.add_argument("--tolerance", type=float, default=5.0, help="allowed memory growth, percent")
    parser.add_argument("--out", type=Path, default=RESULTS / "soak.json")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse(argv)
    result = run(
        duration=args.duration,
        clients=args.clients,
        rate=args.rate,
        markets=args.markets,
        sample_s=args.sample,
        warmup=args.warmup,
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    # Client processes are the load generator (they keep every latency sample): not judged.
    leaks = {k: v for k, v in result["memory_growth_pct"].items() if v > args.tolerance and not k.startswith("clients")}
    during = result["hub_subscriptions_during"]
    # Maps: back to where they were once every client has gone, and flat while they were connected.
    failed = (
        leaks
        or result["dropped_connections"]
        or result["maps_before"] != result["maps_after"]
        or (during and during[0] != during[1])
    )
    print("soak: " + ("FAILED " + json.dumps(leaks) if failed else "passed"), flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
