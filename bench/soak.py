"""Soak run: a steady price load and many websocket clients for a long time, watching for leaks.

One uvicorn worker serves ``--clients`` websocket clients (two client processes), each watching
20 of ``--markets`` markets, while a publisher applies ``--rate`` price updates a second through
the reducers' Redis sink (``bench.edge``'s publisher and clients). A share of the clients
(``--channel-share``) are logged-in punters holding subscriber channels instead: each creates a
slip and a bets view through the control API, attaches and begins them, and follows a shared
query on the same socket, checking every frame's sequence; the publisher then fans each batch
out to the channels as the price reducer does, ``bench.plain_channels`` applies the command
topic and the markets table (the reducers' own processors, no Spark), and a few market
definitions change at every sample (kick-offs, and back), so the query channels move too. At the
end the punters end their channels (``DELETE``) and the sweeper ends the shared ones. The clients connect over the
first half of the warm-up and retry a failed handshake (counted as ``open_retries``); a
connection that fails to open after four attempts, or closes once open, is a drop. Every
``--sample`` seconds the resident memory of each process (with its children) is recorded. The
run reports, per process, the growth of memory from the first to the last third of the run
(after warm-up), the clients' dropped connections, the updates merged for clients that fell
behind, and the subscription maps: the Redis maps of the control API before and after (and at
every sample: flat while the channels live), and the hub's pub-sub subscriptions at every sample
(flat while the clients are connected) and after they have gone.

    python -m bench.soak --duration 600 --clients 1000 --rate 1000
"""

from __future__ import annotations

import argparse
import contextlib
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
from collections.abc import Iterator
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
    """Sizes of the subscription maps: market → channels, channel → markets (punters' channels and
    shared query channels apart: a query's markets move with the markets table), the channel
    index, and the hub's own subscriptions."""

    os.environ["SPORTSBOOK_NAMESPACE"] = namespace
    from reducers.subscriptions import is_shared_channel
    from store import keys

    client = redis_client(redis_url)
    market_sets = list(client.scan_iter(match=keys.market_channels(0).removesuffix("0") + "*", count=1000))
    prefix = keys.channel_markets("")
    channel_sets = [k.decode() for k in client.scan_iter(match=prefix + "*", count=1000)]
    pipe = client.pipeline(transaction=False)
    for key in (*market_sets, *channel_sets):
        pipe.scard(key)
    sizes = [int(n) for n in pipe.execute()]
    shared = [is_shared_channel(k.removeprefix(prefix)) for k in channel_sets]
    of_channels = sizes[len(market_sets) :]
    return {
        "market_channels_members": sum(sizes[: len(market_sets)]),
        "channel_markets_members": sum(n for n, q in zip(of_channels, shared, strict=True) if not q),
        "query_markets_members": sum(n for n, q in zip(of_channels, shared, strict=True) if q),
        "channels_index": int(client.zcard(keys.channels_index())),
        # The edge's own map: the market channels its hub holds subscribed in Redis.
        "hub_subscriptions": hub_subscriptions(client),
        "hub_channel_subscriptions": len(client.pubsub_channels(keys.subscriber_channel("*"))),
    }


def hub_subscriptions(client: Any) -> int:
    """Market pub-sub channels with a subscriber (the hub subscribes once per market per process)."""
    from store import keys

    return len(client.pubsub_channels(keys.market_channel_pattern()))


def growth(samples: list[float]) -> float:
    """Percent change from the median of the first third of ``samples`` to that of the last third."""
    third = max(1, len(samples) // 3)
    first, last = statistics.median(samples[:third]), statistics.median(samples[-third:])
    return round(100.0 * (last - first) / first, 2) if first else 0.0


# A channel client's views (a slip and a bets view) and the definitions each sample changes.
CHANNELS_PER_CLIENT = 2
CHURN_PER_SAMPLE = 10


def run(
    *,
    duration: float,
    clients: int,
    rate: float,
    markets: int,
    sample_s: float,
    warmup: float,
    channel_share: float = 0.0,
) -> dict[str, Any]:
    """Run the soak in its own namespace; the caller's namespace is restored afterwards.
    ``channel_share``: the share of the clients holding channels (they need Kafka, and punters in
    the database this process uses, which the server is pointed at)."""
    previous = os.environ.get("SPORTSBOOK_NAMESPACE")
    try:
        return _run(
            duration=duration,
            clients=clients,
            rate=rate,
            markets=markets,
            sample_s=sample_s,
            warmup=warmup,
            channel_share=channel_share,
        )
    finally:
        if previous is None:
            os.environ.pop("SPORTSBOOK_NAMESPACE", None)
        else:
            os.environ["SPORTSBOOK_NAMESPACE"] = previous


def channel_publisher_process(namespace: str, markets: int, rate: float, seconds: float, out: Any) -> None:
    """The source when clients hold channels: each batch applied through the reducers' sink and
    fanned out to the subscriber channels as the price reducer does (its store, its journal)."""
    os.environ["SPORTSBOOK_NAMESPACE"] = namespace

    from bench.edge import paced_updates
    from reducers.prices import conflate
    from store.channels import ChannelStore, FanOutJournal
    from store.markets import MarketStore

    client = redis_client(os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
    sink, channels = MarketStore(client), ChannelStore(client)
    journal = FanOutJournal(channels, query="prices", of="markets")
    sent = frames = 0
    for batch in paced_updates(markets, rate, seconds):
        with journal.batch() as key:
            applied = sink.apply(conflate([(update, update.produce_ts) for update in batch]), journal=key)
            frames += channels.fan_out(applied, journal=key)
        sent += len(batch)
    out.put({"published": sent, "frames": frames})


def _request(port: int, method: str, path: str, headers: dict[str, str], body: bytes | None = None) -> int:
    """One request to the server under test; its status (0: no answer)."""
    import http.client

    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        response.read()
        return response.status
    except (OSError, http.client.HTTPException):
        return 0
    finally:
        connection.close()


def _create(port: int, headers: dict[str, str], spec: dict[str, Any]) -> str | None:
    import http.client

    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("POST", "/api/streams", body=json.dumps(spec).encode(), headers=headers)
        response = connection.getresponse()
        body = response.read()
        return str(json.loads(body)["channel"]) if response.status == 201 else None
    except (OSError, http.client.HTTPException, ValueError, KeyError):
        return None
    finally:
        connection.close()


async def _channel_clients_main(
    port: int, plans: list[dict[str, Any]], duration: float, warmup: float, out: Any, ramp_s: float
) -> None:
    """Punters holding channels, one socket each: create their views, attach, begin, follow the
    query; count every frame and every sequence gap until the end, then end their channels."""
    import asyncio

    import websockets
    from websockets.typing import Origin

    from reducers.subscriptions import is_shared_channel

    origin = f"http://127.0.0.1:{port}"
    url = f"ws://127.0.0.1:{port}/ws/odds/"
    counts = {"frames": 0, "query_frames": 0, "gaps": 0, "query_gaps": 0, "errors": 0, "failed_requests": 0}
    problems: list[str] = []
    stop_at = time.time() + warmup + duration

    async def one(plan: dict[str, Any], delay: float) -> None:
        await asyncio.sleep(delay)
        cookie = f"{plan['cookies'][0]}={plan['session']}; {plan['cookies'][1]}={plan['csrf']}"
        headers = {
            "Content-Type": "application/json",
            "Cookie": cookie,
            "Origin": origin,
            plan["csrf_header"]: plan["csrf"],
        }
        ids = [await asyncio.to_thread(_create, port, headers, spec) for spec in plan["specs"]]
        counts["failed_requests"] += sum(1 for i in ids if i is None)
        held = [i for i in ids if i is not None]
        seqs: dict[str, int] = {}
        async with websockets.connect(
            url, origin=Origin(origin), additional_headers={"Cookie": cookie}, max_queue=None, compression=None
        ) as ws:
            for channel_id in held:
                await ws.send(json.dumps({"type": "attach", "channel": channel_id}))
            await ws.send(json.dumps({"type": "query", "query": plan["query"]}))
            attached = 0
            try:
                async with asyncio.timeout(max(0.0, stop_at - time.time())):
                    while True:
                        frame = json.loads(await ws.recv())
                        kind = frame.get("type")
                        if "seq" in frame:
                            channel_id = frame["channel"]
                            shared = is_shared_channel(channel_id)
                            last = seqs.get(channel_id)
                            image = kind == "view.image" or frame.get("image") is True
                            if last is not None and frame["seq"] > last + 1 and not image:
                                counts["query_gaps" if shared else "gaps"] += 1
                                problems.append(f"{channel_id}: {last} then {frame['seq']}")
                            if last is None or frame["seq"] > last:
                                seqs[channel_id] = frame["seq"]
                            counts["query_frames" if shared else "frames"] += 1
                        elif kind == "attached" and "query" not in frame:
                            attached += 1
                            if attached == len(held):
                                for channel_id in held:
                                    path = f"/api/streams/{channel_id}/begin"
                                    status = await asyncio.to_thread(_request, port, "POST", path, headers, b"{}")
                                    counts["failed_requests"] += status != 202
                        elif kind in ("error", "ended"):
                            counts["errors"] += 1
                            problems.append(json.dumps(frame)[:200])
            except TimeoutError:
                pass
        for channel_id in held:
            status = await asyncio.to_thread(_request, port, "DELETE", f"/api/streams/{channel_id}", headers)
            counts["failed_requests"] += status != 202

    step = ramp_s / max(1, len(plans))
    results = await asyncio.gather(*(one(p, i * step) for i, p in enumerate(plans)), return_exceptions=True)
    errors = [repr(r) for r in results if isinstance(r, BaseException)]
    out.put({"channel_clients": len(plans), **counts, "dropped": len(errors), "problems": (errors + problems)[:5]})


def channel_client_process(*args: Any) -> None:
    """A process of channel-holding clients: ``_channel_clients_main``'s arguments, in its order."""
    import asyncio

    asyncio.run(_channel_clients_main(*args))


def channel_plans(clients: int, *, markets: int, cookies: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """Each channel client's punter, its views (a slip and a bets view) and the query it follows."""
    from django.conf import settings

    from bench.channels import channel_specs, query_specs

    specs = channel_specs(clients * CHANNELS_PER_CLIENT, universe=markets, seed=11)
    queries = query_specs(min(10, clients) or 1)
    names = (settings.SESSION_COOKIE_NAME, settings.CSRF_COOKIE_NAME)
    header = settings.CSRF_HEADER_NAME.removeprefix("HTTP_").replace("_", "-")
    return [
        {
            "session": session,
            "csrf": csrf,
            "cookies": names,
            "csrf_header": header,
            "specs": specs[i * CHANNELS_PER_CLIENT : (i + 1) * CHANNELS_PER_CLIENT],
            "query": queries[i % len(queries)],
        }
        for i, (session, csrf) in enumerate(cookies)
    ]


def churn(producer: Any, definitions: list[Any], *, step: int, count: int = CHURN_PER_SAMPLE) -> None:
    """Kick ``count`` scheduled events off (even steps) or back (odd steps), each a new version of
    its definition on the markets topic: the shared query channels move."""
    import dataclasses

    from reducers import topics

    scheduled = [d for d in definitions if d.event_status == "scheduled"][:count]
    for definition in scheduled:
        moved = dataclasses.replace(
            definition, version=definition.version + step + 1, event_status="in_play" if step % 2 == 0 else "scheduled"
        )
        producer.produce(topics.markets(), key=moved.key(), value=moved.encode())
    producer.flush(10)


@contextlib.contextmanager
def channel_reducer(namespace: str, *, markets: int) -> Iterator[tuple[Any, list[Any], Any]]:
    """The namespace's topics, the markets table with ``markets`` benchmark markets, and
    ``bench.plain_channels`` applying the command topic and the markets table (the reducers'
    processors, no Spark); yields (producer, the definitions, the process). Removed afterwards."""
    from bench.channels import market_definitions
    from bench.harness import Process, python, wait_until
    from odds.core.kafka import admin_client, producer_create, topics_ensure
    from reducers import topics
    from reducers.topics import all_topics
    from store import keys

    os.environ["SPORTSBOOK_NAMESPACE"] = namespace
    topics_ensure()
    client = redis_client(os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
    env = {**os.environ, "SPORTSBOOK_NAMESPACE": namespace}
    reducer = Process(
        "plain-channels", python("-m", "bench.plain_channels"), env=env, log=ROOT / "var" / "log" / "soak-channels.log"
    ).start()
    try:
        wait_until(lambda: client.get(keys.heartbeat("plain-channels")), timeout=60, what="bench.plain_channels")
        producer = producer_create()
        definitions = market_definitions(markets, now_ms=int(time.time() * 1000))
        for definition in definitions:
            producer.produce(topics.markets(), key=definition.key(), value=definition.encode())
        producer.flush(30)
        wait_until(
            lambda: client.scard(keys.market_definitions_index()) >= markets, timeout=120, what="the markets table"
        )
        yield producer, definitions, reducer
    finally:
        reducer.stop()
        admin_client().delete_topics([t.name for t in all_topics()], operation_timeout=30)
        for key in client.scan_iter(match=f"{namespace}:*", count=1000):
            client.delete(key)


def sweep_shared(redis_url: str, namespace: str, *, timeout: float = 60) -> dict[str, int]:
    """End every channel left (the shared query channels, once nobody follows them) as the
    sweeper does, and wait until the maps hold no channel; returns the maps then."""
    from bench.harness import wait_until
    from odds.streaming.services.streams import streams_expire

    os.environ["SPORTSBOOK_NAMESPACE"] = namespace
    streams_expire(idle_ms=0)

    channel_maps = ("market_channels_members", "channel_markets_members", "query_markets_members", "channels_index")

    def emptied() -> bool:
        sizes = map_sizes(redis_url, namespace)
        return not any(sizes[k] for k in channel_maps)

    with contextlib.suppress(TimeoutError):  # what is left is the result's to show
        wait_until(emptied, timeout=timeout, interval=1, what="the channel maps to empty")
    return map_sizes(redis_url, namespace)


def _run(
    *,
    duration: float,
    clients: int,
    rate: float,
    markets: int,
    sample_s: float,
    warmup: float,
    channel_share: float,
) -> dict[str, Any]:
    from bench.edge import client_process, publisher_process, server_start

    namespace = f"soak{uuid.uuid4().hex[:6]}"
    redis_url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
    holders = round(clients * channel_share)
    with contextlib.ExitStack() as stack:
        env = {**os.environ, "SPORTSBOOK_NAMESPACE": namespace, "PYTHONUNBUFFERED": "1"}
        env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        plans: list[dict[str, Any]] = []
        producer: Any = None
        definitions: list[Any] = []
        reducer: Any = None
        if holders:
            from bench.channels import punters
            from bench.common import database_url

            producer, definitions, reducer = stack.enter_context(channel_reducer(namespace, markets=markets))
            plans = channel_plans(
                holders, markets=markets, cookies=stack.enter_context(punters(holders, run=namespace))
            )
            env["DATABASE_URL"] = database_url()
        result = _soak(
            namespace=namespace,
            redis_url=redis_url,
            env=env,
            duration=duration,
            watchers=clients - holders,
            plans=plans,
            rate=rate,
            markets=markets,
            sample_s=sample_s,
            warmup=warmup,
            churning=(producer, definitions),
            extra_pids={"channel_reducer": reducer.pid} if reducer is not None else {},
            publisher=channel_publisher_process if holders else publisher_process,
            watcher=client_process,
            server_start=server_start,
        )
        if holders:
            # The punters ended their channels as they left; the sweeper ends the shared ones.
            result["maps_after_clients"] = result["maps_after"]
            result["maps_after"] = sweep_shared(redis_url, namespace)
        return result


def _soak(
    *,
    namespace: str,
    redis_url: str,
    env: dict[str, str],
    duration: float,
    watchers: int,
    plans: list[dict[str, Any]],
    rate: float,
    markets: int,
    sample_s: float,
    warmup: float,
    churning: tuple[Any, list[Any]],
    extra_pids: dict[str, int],
    publisher: Any,
    watcher: Any,
    server_start: Any,
) -> dict[str, Any]:
    from bench.edge import PRODUCT_APP

    port = free_port()
    server = server_start("uvicorn", port=port, workers=1, app=PRODUCT_APP, env=env)
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
        lists = [rng.sample(range(1, markets + 1), 20) for _ in range(watchers)]
        os.environ["SPORTSBOOK_NAMESPACE"] = namespace
        total = warmup + duration
        source = ctx.Process(target=publisher, args=(namespace, markets, rate, total + 5, out))
        source.start()
        url = f"ws://127.0.0.1:{port}/ws/odds/"
        halves = [h for h in (lists[: watchers // 2], lists[watchers // 2 :]) if h]
        client_procs = [
            # Clients arrive over the first half of the warm-up, not all in the same instant, and
            # retry a failed handshake as the browser client does; a connection that closes once
            # open is a drop.
            ctx.Process(target=watcher, args=(url, half, duration, warmup, False, out, warmup / 2, 4))
            for half in halves
        ]
        if plans:
            client_procs.append(
                ctx.Process(target=channel_client_process, args=(port, plans, duration, warmup, out, warmup / 2))
            )
        for proc in client_procs:
            proc.start()
        pids: dict[str, int | None] = {"uvicorn": server.pid, "publisher": source.pid, **extra_pids}
        pids.update({f"clients-{i}": p.pid for i, p in enumerate(client_procs)})
        memory: dict[str, list[float]] = {name: [] for name in pids}
        store_client = redis_client(redis_url)
        subscribed: list[int] = []  # the hub's subscriptions at each sample
        channel_maps: list[dict[str, int]] = []  # the channel maps at each sample
        next_report = time.time() + 30
        results: list[dict[str, Any]] = []
        expected = len(client_procs) + 1
        producer, definitions = churning
        step = 0
        # Read results as they come: a process that put on the queue exits only once it is read.
        while len(results) < expected:
            time.sleep(sample_s)
            while not out.empty():
                results.append(out.get())
            if time.time() - started > total + 180:
                raise RuntimeError("the soak clients did not finish")
            if not warmup <= time.time() - started <= total:
                continue
            for name, pid in pids.items():
                rss = _rss_mib(pid) if pid else 0.0
                if rss:
                    memory[name].append(round(rss, 1))
            if time.time() - started <= total - 2 * sample_s:  # every client still connected
                subscribed.append(hub_subscriptions(store_client))
                if plans:
                    channel_maps.append(map_sizes(redis_url, namespace))
            if plans:
                churn(producer, definitions, step=step)
                step += 1
            if time.time() >= next_report:
                elapsed = time.time() - started - warmup
                print(
                    f"soak: {elapsed:5.0f}/{duration:.0f} s  uvicorn {memory['uvicorn'][-1]:.0f} MiB",
                    flush=True,
                )
                next_report += 30
        source.join(30)
        time.sleep(1)
        after = map_sizes(redis_url, namespace)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(30)
    client_results = [r for r in results if "received" in r]
    channel_results = [r for r in results if "channel_clients" in r]
    published = sum(r.get("published", 0) for r in results)
    received = sum(r["received"] for r in client_results)
    result = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "duration_s": duration,
        "clients": watchers + len(plans),
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
        "dropped_connections": sum(r["error_count"] for r in client_results)
        + sum(r["dropped"] for r in channel_results),
        "client_errors": [e for r in client_results for e in r["errors"]][:5],
        "memory_growth_pct": {name: growth(values) for name, values in memory.items() if values},
        "memory_mib": {name: [values[0], values[-1]] for name, values in memory.items() if values},
        "samples": len(memory["uvicorn"]),
        "maps_before": before,
        "maps_after": after,
    }
    if plans:
        during = {
            name: [min(m[name] for m in channel_maps), max(m[name] for m in channel_maps)] if channel_maps else []
            for name in ("market_channels_members", "channel_markets_members", "channels_index")
        }
        result.update(
            {
                "channel_clients": len(plans),
                "channels": sum(len(p["specs"]) for p in plans),
                "channel_frames": sum(r["frames"] for r in channel_results),
                "channel_frames_published": sum(r.get("frames", 0) for r in results if "published" in r),
                "channel_gaps": sum(r["gaps"] for r in channel_results),
                "query_frames": sum(r["query_frames"] for r in channel_results),
                "query_gaps": sum(r["query_gaps"] for r in channel_results),
                "channel_errors": sum(r["errors"] for r in channel_results),
                "channel_failed_requests": sum(r["failed_requests"] for r in channel_results),
                "channel_problems": [p for r in channel_results for p in r["problems"]][:5],
                # Punters' channels: flat while they live; the shared queries' markets move with
                # the definitions changed at every sample, and must not grow.
                "channel_maps_during": during,
                "query_maps_growth_pct": growth([float(m["query_markets_members"]) for m in channel_maps]),
            }
        )
    return result


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=600.0, help="seconds measured (after warm-up)")
    parser.add_argument("--clients", type=int, default=1000)
    parser.add_argument("--rate", type=float, default=1000.0, help="price updates per second")
    parser.add_argument("--markets", type=int, default=1000)
    parser.add_argument("--sample", type=float, default=5.0, help="seconds between memory samples")
    parser.add_argument("--warmup", type=float, default=15.0)
    parser.add_argument("--tolerance", type=float, default=5.0, help="allowed memory growth, percent")
    parser.add_argument(
        "--channel-share",
        type=float,
        default=0.25,
        help="share of the clients that are punters holding a slip and a bets channel and following a query",
    )
    parser.add_argument("--out", type=Path, default=RESULTS / "soak.json")
    return parser.parse_args(argv)


def channel_faults(result: dict[str, Any], *, tolerance: float) -> list[str]:
    """What the channels of a soak run did wrong: a sequence gap, an error frame, a refused
    request, a punter's channel maps that moved while they lived, the shared queries' maps grown."""
    if "channels" not in result:
        return []
    faults = [
        f"{key} {result[key]}"
        for key in ("channel_gaps", "query_gaps", "channel_errors", "channel_failed_requests")
        if result[key]
    ]
    faults += [
        f"{name} moved {span}" for name, span in result["channel_maps_during"].items() if span and span[0] != span[1]
    ]
    if result["query_maps_growth_pct"] > tolerance:
        faults.append(f"query maps grew {result['query_maps_growth_pct']} %")
    if not result["channel_frames"]:
        faults.append("no channel frame arrived")
    return faults


def main(argv: list[str] | None = None) -> None:
    args = parse(argv)
    if args.channel_share > 0:
        import django

        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
        django.setup()  # the punters holding channels and their sessions
    result = run(
        duration=args.duration,
        clients=args.clients,
        rate=args.rate,
        markets=args.markets,
        sample_s=args.sample,
        warmup=args.warmup,
        channel_share=args.channel_share,
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    # Client processes are the load generator (they keep every latency sample): not judged.
    leaks = {k: v for k, v in result["memory_growth_pct"].items() if v > args.tolerance and not k.startswith("clients")}
    during = result["hub_subscriptions_during"]
    # Maps: back to where they were once every client has gone, and flat while they were connected.
    faults = channel_faults(result, tolerance=args.tolerance)
    failed = (
        leaks
        or faults
        or result["dropped_connections"]
        or result["maps_before"] != result["maps_after"]
        or (during and during[0] != during[1])
    )
    print("soak: " + ("FAILED " + json.dumps({**leaks, "channels": faults}) if failed else "passed"), flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
