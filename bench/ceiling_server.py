"""The websocket edge's ceiling on this machine: a bare server with no Django, no Channels and no
Redis, serving the edge benchmark's clients the same frames at the same rate.

It speaks just enough of the protocol for the load generator (a ``watch`` of markets, batched
market frames) and makes its own updates: the benchmark's rate over the same universe of markets,
each a market state of the real size, encoded when it is made (the reducers' work, not the
edge's). Every tick it takes the newest update of each market that moved, encodes one frame per
set of sockets that get the same markets, and writes those bytes to each of them
(``websockets.broadcast``): the least a Python server can do per delivery. ``--workers`` runs that
many processes on one port (SO_REUSEPORT), each with the same updates and its share of sockets.

    .venv/bin/python -m bench.ceiling_server --port 8765 --start-at EPOCH_S --seconds 15

Each worker runs Python's collector as the web processes do (``webapp.collector.settle``, with
``--gc-young`` and ``--gc-growth`` from their settings): with 10,000 sockets Python's default
collector pauses a process for up to a third of a second, and a ceiling that stalls on its
collector is not the least a server can do.

With ``--start-file PATH`` instead of ``--start-at``, the updates start at the epoch seconds
written to PATH, once it is there (the benchmark learns the start from the load generator once
the server is already serving).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import random
import time
from collections import defaultdict
from decimal import Decimal
from pathlib import Path

import orjson
import websockets
from websockets.asyncio.server import ServerConnection, broadcast, serve

from reducers.prices import Conflated, encode_state, market_state
from reducers.schemas import PriceUpdate, SelectionPrice
from webapp.collector import settle


class Edge:
    """Sockets by market watched, and the frames of one tick."""

    def __init__(self) -> None:
        self.watchers: dict[int, set[ServerConnection]] = defaultdict(set)

    async def serve(self, socket: ServerConnection) -> None:
        watched: list[int] = []
        try:
            async for message in socket:
                request = json.loads(message)
                if request.get("type") == "watch":
                    watched = [int(m) for m in request["markets"]]
                    for market in watched:
                        self.watchers[market].add(socket)
        except websockets.ConnectionClosed:
            pass
        finally:
            for market in watched:
                self.watchers[market].discard(socket)

    def send_tick(self, moved: dict[int, bytes]) -> int:
        """Send each socket the markets it watches among ``moved`` (newest state of each), one
        frame per distinct set of markets; returns the deliveries (market states sent)."""
        wanted: dict[ServerConnection, list[int]] = defaultdict(list)
        for market in moved:
            for socket in self.watchers.get(market, ()):
                wanted[socket].append(market)
        groups: dict[tuple[int, ...], list[ServerConnection]] = defaultdict(list)
        for socket, markets in wanted.items():
            groups[tuple(markets)].append(socket)
        delivered = 0
        for group, sockets in groups.items():
            if len(group) == 1:
                frame = moved[group[0]].decode()
            else:
                frame = '{"type":"markets","items":[' + ",".join(moved[m].decode() for m in group) + "]}"
            broadcast(sockets, frame)
            delivered += len(group) * len(sockets)
        return delivered


def state(market: int, seq: int, price: Decimal, now: int) -> bytes:
    update = PriceUpdate(market, seq, "open", (SelectionPrice(1, price),), now, now)
    return encode_state(market_state(item=Conflated(update=update, kafka_ts=now, merged=0), reducer_ts=now))


async def start_time(start_at: float | None, start_file: Path | None) -> float:
    """The given start, or the one written to the start file (waited for)."""
    if start_at is not None:
        return start_at
    assert start_file is not None
    while True:
        written = start_file.read_text().strip() if start_file.exists() else ""
        if written:
            return float(written)
        await asyncio.sleep(0.05)


async def source(
    edge: Edge,
    *,
    universe: int,
    rate: float,
    tick_ms: int,
    start_at: float | None,
    start_file: Path | None,
    seconds: float,
) -> int:
    """The benchmark's updates (same seed in every worker), sent tick by tick; returns how many."""
    rng = random.Random(1)
    seqs = [0] * (universe + 1)
    tick = tick_ms / 1000
    start_at = await start_time(start_at, start_file)
    await asyncio.sleep(max(0.0, start_at - time.time()))
    end = start_at + seconds
    budget = 0.0
    made = 0
    while (started := time.time()) < end:
        budget += rate * tick
        n = int(budget)
        budget -= n
        now = int(started * 1000)
        moved: dict[int, bytes] = {}
        for _ in range(n):
            market = rng.randint(1, universe)
            seqs[market] += 1
            moved[market] = state(market, seqs[market], Decimal(rng.randint(101, 900)) / 100, now)
        made += n
        edge.send_tick(moved)
        await asyncio.sleep(max(0.0, tick - (time.time() - started)))
    return made


async def main_async(args: argparse.Namespace) -> int:
    if args.gc_young:
        settle(young=args.gc_young, growth=args.gc_growth)
    edge = Edge()
    async with serve(edge.serve, "127.0.0.1", args.port, reuse_port=True, compression=None, max_queue=None):
        made = await source(
            edge,
            universe=args.universe,
            rate=args.rate,
            tick_ms=args.tick_ms,
            start_at=args.start_at,
            start_file=args.start_file,
            seconds=args.seconds,
        )
        await asyncio.sleep(args.linger)
    return made


def worker(args: argparse.Namespace) -> None:
    asyncio.run(main_async(args))


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--universe", type=int, default=1000)
    parser.add_argument("--rate", type=float, default=1000, help="market updates per second")
    parser.add_argument("--tick-ms", type=int, default=20, help="the edge's tick (settings.EDGE_TICK_MS)")
    start = parser.add_mutually_exclusive_group(required=True)
    start.add_argument("--start-at", type=float, help="epoch seconds the updates start")
    start.add_argument("--start-file", type=Path, help="a file the epoch seconds the updates start will be written to")
    parser.add_argument("--seconds", type=float, required=True, help="how long updates are made")
    parser.add_argument("--gc-young", type=int, default=0, help="the web processes' WEB_GC_YOUNG (0: Python's default)")
    parser.add_argument("--gc-growth", type=float, default=4.0, help="the web processes' WEB_GC_FULL_GROWTH")
    parser.add_argument("--linger", type=float, default=3, help="seconds served after the last update")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse(argv)
    others = [mp.Process(target=worker, args=(args,)) for _ in range(args.workers - 1)]
    for process in others:
        process.start()
    made = asyncio.run(main_async(args))
    for process in others:
        process.join()
    print(orjson.dumps({"published": made}).decode(), flush=True)


if __name__ == "__main__":
    main()
