"""`make bench`: the whole pipe measured on this machine, each figure against its baseline.

Stages (each a median of several runs where it is cheap enough to repeat):
  feed      records/s the idempotent producer (acks=all) sustains
  reducers  updates/s from Kafka to Redis state + pub-sub, micro-batch and real-time mode
  edge      deliveries/s and p99 of the hub edge, plain Channels and a bare server (k6 clients), same run
  markets   end to end over 1,000 and 10,000 live markets at the same price rate (bench/markets.py)
  sockets   the hub against the bare server at 1k, 5k and 10k logged-in sockets: throughput, CPU,
            memory per socket, sockets accepted a second (bench/sockets.py)
  e2e       source event → websocket frame, p50/p99/max, split by stage, both trigger modes and
            the floor (one plain consumer), measured turn about in rounds
  footprint resident memory of every component during the end-to-end run
  views     time to first odds: pages and view snapshots through the cache (bench/views.py)
  suspend   a trader's suspension from the price topic to a punter's websocket (bench/suspend.py)
  bets      bet placement latency at a steady rate under stream load (bench/bets.py)
  channels  subscriber channels and shared query channels at scale: the fan-out per batch at 1k,
            5k and 10k channels, the query stage, and 10,000 channels held by k6 clients against
            a plain watch in the same run (bench/channels.py)
  game      the predictor game: answers into the Spark game query's state, a goal settling every
            punter at once, the reducers' memory with the state held (bench/game.py)
  desk      the trading desk: a bet accepted → its ticker and liability frames on a trader's
            websocket at the bets stage's rate (bench/desk.py)
  up        `make up` to a healthy /healthz

Each stage lives in a module of its own (bench/<stage>.py: feed, reducers, edge, e2e with the
footprint, views, suspend, bets, channels, game, desk, up), which exposes its ``bench_<stage>()`` and its rows
of the table; this module reads the command line and runs the stages in order. bench/report.py
writes bench/results/<date>.json, bench/results/latest.json, PNG plots under docs/img/ and the
table in docs/performance.md. `--quick` (used by `make test` as a smoke test) runs every stage
small and fast, asserts nothing about speed, and writes only under bench/results/quick/.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import django

django.setup()

from bench import (
    bets,
    channels,
    desk,
    e2e,
    edge,
    feed,
    game,
    game_held,
    markets,
    reducers,
    report,
    sockets,
    suspend,
    up,
    views,
)
from bench.common import RESULTS, cpu_probe_ms, log, machine


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small and fast: a smoke test of every stage")
    parser.add_argument(
        "--merge", action="store_true", help="keep the last full run's figures for the stages not run (with --only)"
    )
    parser.add_argument(
        "--only",
        nargs="*",
        default=None,
        help=(
            "stages to run (feed reducers e2e markets edge sockets views suspend bets channels game game_held desk up)"
        ),
    )
    args = parser.parse_args(argv)
    quick = args.quick
    stages = set(
        args.only
        or [
            "feed",
            "reducers",
            "edge",
            "sockets",
            "views",
            "e2e",
            "markets",
            "suspend",
            "bets",
            "channels",
            "game",
            "game_held",
            "desk",
            "up",
        ]
    )
    results: dict[str, Any] = {
        "machine": machine(),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "quick": quick,
    }
    started = mark = time.perf_counter()
    stage_seconds: dict[str, float] = {}
    results["stage_seconds"] = stage_seconds
    probes: dict[str, float] = {"start": cpu_probe_ms()}
    results["cpu_probe_ms"] = probes

    def lap(stage: str) -> None:
        nonlocal mark
        now = time.perf_counter()
        stage_seconds[stage] = round(now - mark, 1)
        probes[stage] = cpu_probe_ms()
        mark = time.perf_counter()

    if "feed" in stages:
        log("feed → Kafka")
        results.update(feed.bench_feed(records=20_000 if quick else 300_000, runs=1 if quick else 3))
        lap("feed")
    # --quick runs the reducer and end-to-end stages of a mode in one reducer process: starting
    # Spark is most of a quick run's time. A full run starts one per stage (their settings differ).
    shared = quick and {"reducers", "e2e"} <= stages
    e2e_args: dict[str, Any] = {
        "clients": 50 if quick else 1000,
        "rate": 200 if quick else 1000,
        "duration": 4 if quick else 15,
        "warmup": 4 if quick else 8,
        "rounds": 1 if quick else e2e.E2E_ROUNDS,
        "suspensions": (4 if quick else 20) if "suspend" in stages else 0,
    }
    with contextlib.ExitStack() as shared_reducers:
        running: dict[str, reducers.Reducers] = {}
        for mode in e2e.E2E_MODES:
            records = 3_000 if quick else reducers.REDUCER_RECORDS[mode]
            if shared:
                # Short real-time batches: a quick backlog's last records wait for the end of one.
                running[mode] = shared_reducers.enter_context(
                    reducers.reducers_running(mode, log_name=f"bench-quick-{mode}.log", realtime_batch="5 seconds")
                )
                log(f"reducers ({mode})")
                results.update(reducers.bench_reducers(mode=mode, records=records, running=running[mode]))
                lap(f"reducers_{mode}")
                # Paused while the next stages run; the end-to-end stage lets it go on.
                running[mode].process.pause()
                if mode == "microbatch":
                    reducers.reducer_baselines(results, records=records)
                    lap("reducers_baselines")
            elif "reducers" in stages and mode == "microbatch":
                reducers.reducer_rounds(results, records=records)
                lap("reducers_microbatch_rounds")
            elif "reducers" in stages:
                log(f"reducers ({mode})")
                results.update(reducers.bench_reducers(mode=mode, records=records))
                lap(f"reducers_{mode}")
        if "e2e" in stages:
            log("end to end: the floor (one plain consumer) and the reducers in each mode, turn about")
            results.update(e2e.bench_e2e(**e2e_args, running=running))
            lap("e2e")
        if "markets" in stages:
            log("markets: end to end over 1,000 and 10,000 live markets at the same price rate")
            results.update(
                markets.bench_markets(
                    universes=markets.QUICK_UNIVERSES,
                    clients=50,
                    rate=200,
                    duration=5,
                    warmup=4,
                    rounds=1,
                    records=5_000,
                    page_loads=3,
                    running=running.get("microbatch"),
                )
                if quick
                else markets.bench_markets()
            )
            lap("markets")
    if "edge" in stages:
        log("edge: the hub, plain Channels and a bare server, driven by k6")
        results.update(
            edge.bench_edge(
                clients=50 if quick else 1000,
                rates=[200] if quick else [50, 100, 250, 500, 750, 1000, 1500, 2000, 3000],
                duration=3 if quick else 10,
                warmup=2 if quick else 4,
                workers=2,
                server_choices=["uvicorn"] if quick else sorted(edge.SERVERS),
                server_rate=200 if quick else 750,
            )
        )
        lap("edge")
    if "sockets" in stages:
        log("sockets: the hub and a bare server at 1k, 5k and 10k logged-in sockets")
        results.update(
            sockets.bench_sockets(counts=sockets.QUICK_COUNTS, rates=sockets.QUICK_RATES, duration=3, warmup=2)
            if quick
            else sockets.bench_sockets()
        )
        lap("sockets")
    if "views" in stages:
        log("time to first odds: view snapshots through the cache")
        results.update(views.bench_views(burst=200 if quick else 1000, loads=5 if quick else 20))
        lap("views")
    if "suspend" in stages and "e2e" not in stages:
        log("trader suspension → websocket")
        results.update(suspend.bench_suspend(count=6 if quick else 20))
        lap("suspend")
    if "bets" in stages:
        log("bets under stream load")
        results.update(
            bets.bench_bets(
                rate=20,
                duration=3,
                warmup=1,
                punters=30,
                stream_rate=200,
                stream_clients=20,
                ceiling_s=2,
                search=(20, 40),
                search_duration=3,
                search_warmup=1,
            )
            if quick
            else bets.bench_bets()
        )
        lap("bets")
    if "channels" in stages:
        log("channels: the fan-out at 1k, 5k and 10k channels, the query stage, and channels held by k6 clients")
        results.update(channels.bench_channels(quick=quick))
        lap("channels")
    if "game" in stages:
        log("game: punters answer the open questions of live matches, a goal in each settles them all")
        results.update(game.bench_game(quick=quick))
        game.game_ratio(results)
        lap("game")
    if "game_held" in stages:
        log("game_held: a game bucket's batches with idle punters held (no Spark)")
        results.update(game_held.bench_game_held())
        lap("game_held")
    if "desk" in stages:
        log("desk: bets at the bets stage's rate → the ticker and liability frames on a trader's socket")
        results.update(desk.bench_desk(quick=quick))
        desk.desk_ratio(results)
        lap("desk")
    if "up" in stages and not quick:
        log("make up → healthy")
        results.update(up.bench_up())
        lap("up")
    elif quick:
        results.update({"up_to_healthy_s": None, "up_note": "not measured in --quick"})
    results["stages"] = sorted(stages)
    results["stage_dates"] = dict.fromkeys(sorted(stages), results["date"])
    if args.merge and not quick and (RESULTS / "latest.json").exists():
        results = merged(json.loads((RESULTS / "latest.json").read_text()), results)
    results["bench_seconds"] = round(time.perf_counter() - started)
    path = report.write(results, quick=quick)
    log(f"results: {path}")
    if not quick:
        log(f"table: {report.write_markdown(results)}")
    print(json.dumps({k: v for k, v in results.items() if not isinstance(v, (list, dict))}, indent=2))


def merged(earlier: dict[str, Any], results: dict[str, Any]) -> dict[str, Any]:
    """This run's ``results`` over an ``earlier`` run's (``--merge``): the stages not run keep
    their figures and the date of the run that measured them (``stage_dates``), and their seconds
    (``stage_seconds``); the machine's speed probes stay with the run that took them
    (``cpu_probe_ms`` this run's, ``cpu_probe_ms_by_run`` every earlier run's still in the table,
    by date)."""
    dates = earlier.get("stage_dates") or dict.fromkeys(earlier.get("stages", []), earlier["date"])
    out = {**earlier, **results, "stages": sorted(set(earlier.get("stages", [])) | set(results["stages"]))}
    out["stage_dates"] = {**dates, **results["stage_dates"]}
    out["stage_seconds"] = {**(earlier.get("stage_seconds") or {}), **results["stage_seconds"]}
    by_run = {**(earlier.get("cpu_probe_ms_by_run") or {})}
    if earlier.get("cpu_probe_ms"):
        by_run[earlier["date"]] = earlier["cpu_probe_ms"]
    kept = set(out["stage_dates"].values()) - {results["date"]}
    out["cpu_probe_ms_by_run"] = {date: probes for date, probes in sorted(by_run.items()) if date in kept}
    out.pop("merged_from", None)
    return out


if __name__ == "__main__":
    main()
