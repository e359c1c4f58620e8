"""`make bench`'s end-to-end stage: source event → websocket frame, p50/p99/max, split by stage,
through the reducers in both trigger modes and through the floor of the pipe (one plain consumer),
measured turn about in rounds; and the footprint, the resident memory of every component during it.

A trader's suspensions (bench/suspend.py) are timed at its end when the suspend stage runs too.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterable, Iterator
from decimal import Decimal
from typing import Any

from django.conf import settings

from bench import edge
from bench.common import (
    ROOT,
    in_namespace,
    log,
    markets_define,
    markets_table_write,
    median,
    median_run,
    namespace,
)
from bench.harness import CompilerLoad, Process, compilers_settled, python, wait_until
from bench.reducers import Reducers, reducer_env, reducers_running
from bench.suspend import time_suspensions
from odds.core.kafka import producer_create
from reducers import topics
from reducers.schemas import PriceUpdate, SelectionPrice
from store import keys
from store.clients import redis_client

TARGETS = [
    ("e2e_floor_p50_ms", "End to end through one plain consumer (the floor), p50", "ms", None),
    ("e2e_floor_p99_ms", "End to end through one plain consumer (the floor), p99", "ms", None),
    ("e2e_realtime_p99_vs_floor", "Real-time p99 ÷ the floor's p99, same run", "times", "<= 1.5"),
    ("e2e_microbatch_p50_ms", "End to end, micro-batch, p50", "ms", None),
    ("e2e_microbatch_p99_ms", "End to end, micro-batch, p99", "ms", "<= 500"),
    ("e2e_realtime_p50_ms", "End to end, real-time mode, p50", "ms", "<= 20"),
    ("e2e_realtime_p99_ms", "End to end, real-time mode, p99", "ms", "<= 100"),
]
# The footprint's row, after the other stages' in the table.
FOOTPRINT_TARGETS = [
    ("stack_rss_gib", "Whole stack resident memory", "GiB", "<= 6"),
]

# Seconds of the end-to-end rate fed to fresh reducers before the end-to-end load is measured,
# at least; then on, up to E2E_WARMUP_MOST_S, until their JVM's compilers take less than
# ``bench.harness.JIT_SETTLED_CORES`` over a window of WARMUP_WINDOW_S (micro-batch at 1,000
# prices a second: 0.21 of a core 170-200 s after the start, 0.06 at 385-415 s).
E2E_WARMUP_S = 180
E2E_WARMUP_MOST_S = 540
WARMUP_WINDOW_S = 15


def service_rss_mib() -> dict[str, float]:
    """Resident memory of the shared services, found by their process names."""
    import psutil

    totals: dict[str, float] = {"kafka": 0.0, "redis": 0.0, "postgres": 0.0}
    for proc in psutil.process_iter(["name", "cmdline", "memory_info"]):
        cmd = " ".join(proc.info["cmdline"] or [])
        rss = proc.info["memory_info"].rss if proc.info["memory_info"] else 0
        if "kafka.Kafka" in cmd:
            totals["kafka"] += rss
        elif (proc.info["name"] or "").startswith("redis-server"):
            totals["redis"] += rss
        elif (proc.info["name"] or "") == "postgres":
            totals["postgres"] += rss
    return {k: round(v / 2**20) for k, v in totals.items()}


def warm_up_prices(
    producer: Any,
    client: Any,
    *,
    rate: float,
    seconds: float,
    settled: Callable[[], bool] | None = None,
    most_seconds: float = 0,
    first: int = 5001,
    count: int = 60,
) -> float:
    """Feed the reducers ``rate`` prices a second for ``seconds`` before measuring, on markets of
    their own (from ``first`` on), and wait until the last are applied: a reducer process that
    has just started spends a core on its JVM's compilers for its first minute and a half and
    a third of one for about a minute after, which a running stack does not.

    With ``settled`` (asked after every ``WARMUP_WINDOW_S`` of feed, about that window), the feed
    goes on after ``seconds`` until the last answer was yes, for at most ``most_seconds`` in all.
    Returns the seconds of prices fed."""
    markets_define(producer, client, count, first=first)
    total = max(count, int(rate * seconds))
    window, most = max(1, int(rate * WARMUP_WINDOW_S)), int(rate * most_seconds)
    quiet = settled is None
    started = time.perf_counter()
    n = 0
    while n < total or not (quiet or n >= most):
        market, seq = first + n % count, 1 + n // count
        now = int(time.time() * 1000)
        price = Decimal(150 + n % 300) / 100
        update = PriceUpdate(
            market, seq, "open", (SelectionPrice(1, price), SelectionPrice(2, Decimal("1.90"))), now, now
        )
        producer.produce(topics.prices(), key=update.key(), value=update.encode())
        producer.poll(0)
        n += 1
        if settled is not None and n % window == 0:
            quiet = settled()
        ahead = started + n / rate - time.perf_counter()
        if ahead > 0:
            time.sleep(ahead)
    producer.flush(30)
    last = {first + i % count: 1 + i // count for i in range(n - count, n)}

    def warm() -> bool:
        pipe = client.pipeline(transaction=False)
        for m in last:
            pipe.hget(keys.market_state(m), "seq")
        return all(s is not None and int(s) >= last[m] for m, s in zip(last, pipe.execute(), strict=True))

    wait_until(warm, timeout=180, what="the reducers' warm-up prices")
    return n / rate


def e2e_edge_args(*, clients: int, rate: float, duration: float, warmup: float) -> Any:
    """The end-to-end load: prices produced to Kafka at ``rate``, ``clients`` websockets watching
    20 of 1,000 markets each with batching on, latency from each update's source event."""
    return edge.parse(
        [
            "--source",
            "kafka",
            "--generator",
            "python",
            *("--clients", str(clients), "--markets", "20", "--universe", "1000", "--rate", str(rate)),
            *("--workers", "2", "--duration", str(duration), "--warmup", str(warmup), "--batch"),
        ]
    )


# The paths the end-to-end stage measures: the floor of the pipe (one plain consumer instead of
# the reducers) and the reducers in each trigger mode.
E2E_FLOOR = "floor"
E2E_MODES = ("microbatch", "realtime")
# Rounds of the end-to-end stage in a full run: each round measures one window of every path, in
# the same order (``E2E_PATHS``), while the others are paused. On this shared machine a path's p99
# moved by a factor of two between windows a minute apart (the floor: 93-191 ms over six warm
# windows in a row), so the figures are the medians of the windows, every window's are kept, and
# the real-time ratio is taken between the medians of windows measured turn about with the floor's.
E2E_ROUNDS = 3
E2E_PATHS = (E2E_FLOOR, *E2E_MODES)


def e2e_order(modes: Iterable[str]) -> list[str]:
    """The paths of every round, in the order measured: the floor, then the modes asked for. The
    order stays the same from round to round, so each path is paused for the same two windows
    between its own (a minute and a half at most; a JVM frozen far longer than Spark's network
    timeout of 120 s may find its heartbeats overdue)."""
    return [path for path in E2E_PATHS if path == E2E_FLOOR or path in modes]


@contextlib.contextmanager
def floor_running() -> Iterator[Reducers]:
    """The floor of the pipe: one plain Kafka consumer running the same reducer into the same
    Redis (bench/plain_consumer.py, polling every 5 ms) in a fresh namespace, markets 1 to 1000 in
    its markets table. Stopped on the way out."""
    with namespace() as ns:
        client = redis_client(settings.REDIS_URL)
        markets_table_write(client, 1000)
        env = {**reducer_env(ns, "microbatch"), "PLAIN_CONSUMER_POLL_S": "0.005"}
        process = Process(
            "plain_consumer",
            python("-m", "bench.plain_consumer"),
            env={**os.environ, **env},
            log=ROOT / "var" / "log" / "bench-floor.log",
        ).start()
        try:
            wait_until(lambda: client.get(keys.heartbeat("plain")), timeout=60, what="the plain consumer to start")
            yield Reducers(ns, env, process, client, producer_create())
        finally:
            process.stop()


def warm_up_e2e(running: Reducers, *, rate: float) -> dict[str, Any]:
    """Feed the reducers the end-to-end rate before they are measured: for three minutes and on
    until their JIT compilers have settled (quick: a few seconds; E2E_WARMUP_S says why), so the
    latency is a running stack's, not a fresh JVM's. At 1,000 prices a second the reducers' JVM
    still compiled about 100 methods a second after 90 s and took 1.0 core, against 20-40 a
    second and 0.7 of a core from about 170 s on (jstat -compiler every 20 s, micro-batch):
    cores the edge and its clients need. Returns the seconds fed and the compilers' cores over
    each window of the feed."""
    compilers = CompilerLoad(running.process.pids)
    readings: list[float] = []

    def settled() -> bool:
        return compilers_settled(compilers.cores, readings)

    full = rate >= 1000
    with in_namespace(running.namespace):
        fed_s = warm_up_prices(
            running.producer,
            running.client,
            rate=rate,
            seconds=E2E_WARMUP_S if full else 3,
            settled=settled if full else None,
            most_seconds=E2E_WARMUP_MOST_S,
        )
    return {"seconds": round(fed_s), "compiler_cores": readings}


def e2e_window(path: str, index: int, result: dict[str, Any]) -> dict[str, Any]:
    """What the results keep of one window of the end-to-end stage."""
    return {
        "round": index + 1,
        "path": path,
        "p50_ms": result["p50_ms"],
        "p99_ms": result["p99_ms"],
        "max_ms": result["max_ms"],
        "deliveries_per_s": result["deliveries_per_s"],
        "stages": {k: v for k, v in result.items() if k.endswith("_p50_ms") and "_to_" in k},
        "server_rss_mib": result.get("server_rss_mib"),
    }


def e2e_figures(path: str, windows: list[dict[str, Any]]) -> dict[str, Any]:
    """A path's figures from its windows: p50, p99 and deliveries the medians of its windows',
    the max their max, the stages' p50s those of the window of the median p99."""
    mine = [w for w in windows if w["path"] == path]
    if not mine:
        return {}
    middle = median_run(mine, "p99_ms")
    return {
        f"e2e_{path}_p50_ms": round(median([w["p50_ms"] for w in mine]), 1),
        f"e2e_{path}_p99_ms": round(median([w["p99_ms"] for w in mine]), 1),
        f"e2e_{path}_max_ms": max(w["max_ms"] for w in mine),
        f"e2e_{path}_deliveries_per_s": round(median([w["deliveries_per_s"] for w in mine])),
        f"e2e_{path}_stages": middle["stages"],
    }


def e2e_ratios(windows: list[dict[str, Any]]) -> dict[str, Any]:
    """Real time's p99 against the floor's: between their medians, and round by round."""
    p99 = {(w["path"], w["round"]): w["p99_ms"] for w in windows}
    rounds = sorted({w["round"] for w in windows})
    by_round = [
        round(p99[("realtime", r)] / p99[(E2E_FLOOR, r)], 2)
        for r in rounds
        if p99.get(("realtime", r)) and p99.get((E2E_FLOOR, r))
    ]
    floor = [w["p99_ms"] for w in windows if w["path"] == E2E_FLOOR]
    realtime = [w["p99_ms"] for w in windows if w["path"] == "realtime"]
    ratio = round(median(realtime) / median(floor), 2) if floor and realtime and median(floor) else None
    return {"e2e_realtime_p99_vs_floor": ratio, "e2e_realtime_p99_vs_floor_by_round": by_round}


def bench_e2e(
    *,
    modes: Iterable[str] = E2E_MODES,
    clients: int,
    rate: float,
    duration: float,
    warmup: float = 8,
    rounds: int = E2E_ROUNDS,
    suspensions: int = 0,
    running: dict[str, Reducers] | None = None,
) -> dict[str, Any]:
    """Source event → websocket frame through Kafka, the reducers, Redis and the edge, for each
    trigger mode in ``modes`` and for the floor of the pipe, ``rounds`` windows each, turn about
    (``e2e_order``). The paths all run from the start, each in a namespace of its own, and all but
    the one measured are paused (``Process.pause``): measured turn about, the paths meet the same
    machine, and none shares the cores with another's idle polling. ``running``: reducers already
    started with markets 1 to 1000 defined (--quick); the others are started here.

    Real-time batches are as long as the product's (``SPARK_REALTIME_BATCH``, unless the
    environment sets it), not the reducers stage's 30 s: the end of a batch holds the prices read
    meanwhile (price topic → applied up to about 400 ms at each 30 s boundary, against at most
    about 130 ms in the seconds between), which a running stack does once a batch.

    A trader's suspensions are timed last, through the micro-batch reducers, on markets of
    their own (1001 on), with the other paths paused. The whole stack's footprint
    (``stack_rss_gib``) is the larger of the two modes'."""
    order = e2e_order(modes)
    out: dict[str, Any] = {}
    with contextlib.ExitStack() as stack:
        paths: dict[str, Reducers] = {}
        for mode in order[1:]:
            reducers = (running or {}).get(mode) or stack.enter_context(
                reducers_running(
                    mode, log_name=f"bench-e2e-{mode}.log", realtime_batch=os.environ.get("SPARK_REALTIME_BATCH")
                )
            )
            reducers.process.resume()
            log(f"end to end ({mode}): warming up")
            warm = warm_up_e2e(reducers, rate=rate)
            out[f"e2e_{mode}_warmup_s"] = warm["seconds"]
            out[f"e2e_{mode}_warmup_compiler_cores"] = warm["compiler_cores"]
            paths[mode] = reducers
        paths[E2E_FLOOR] = stack.enter_context(floor_running())
        # Paused once all are warm, not each after its own warm-up: a JVM frozen through another's
        # (three to nine minutes) would be past Spark's network timeout.
        for started in paths.values():
            started.process.pause()
        windows: list[dict[str, Any]] = []
        for index in range(rounds):
            for path in order:
                log(f"end to end, round {index + 1} of {rounds}: {path}")
                measured = paths[path]
                measured.process.resume()
                try:
                    with in_namespace(measured.namespace):
                        result = edge.run(e2e_edge_args(clients=clients, rate=rate, duration=duration, warmup=warmup))
                finally:
                    measured.process.pause()
                if not result["deliveries_per_s"]:
                    raise RuntimeError(f"end to end, round {index + 1}, {path}: no price reached a client")
                windows.append(e2e_window(path, index, result))
        for path in order:
            out.update(e2e_figures(path, windows))
        if "realtime" in order:
            out.update(e2e_ratios(windows))
        out["e2e_windows"] = windows
        services = service_rss_mib()
        for mode in order[1:]:
            last = [w for w in windows if w["path"] == mode][-1]
            footprint = {"reducers": round(paths[mode].process.rss_mib()), "web": last["server_rss_mib"], **services}
            out[f"footprint_{mode}_mib"] = footprint
            out[f"stack_rss_gib_{mode}"] = round(sum(footprint.values()) / 1024, 2)
        if suspensions and "microbatch" in paths:
            reducers = paths["microbatch"]
            reducers.process.resume()
            with in_namespace(reducers.namespace):
                out.update(time_suspensions(reducers.namespace, count=suspensions, feed_rate=50, first=1001))
        # Reducers started by the caller are theirs to stop: they go back as they came, running.
        for reducers in (running or {}).values():
            reducers.process.resume()
    out["stack_rss_gib"] = max(out.get("stack_rss_gib_microbatch", 0), out.get("stack_rss_gib_realtime", 0))
    return out


def e2e_rounds_line(results: dict[str, Any]) -> list[str]:
    """The end-to-end stage's windows, in the order measured."""
    windows = results.get("e2e_windows") or []
    if not windows:
        return []
    return [
        f"- End-to-end stage, {max(w['round'] for w in windows)} rounds (p50 / p99 ms of each window in the "
        "order measured; each figure in the table is its path's median, and the real-time ratio is that of "
        "the medians): " + ", ".join(f"{w['path']} {w['p50_ms']:g} / {w['p99_ms']:g}" for w in windows)
    ]


def markdown_lines(results: dict[str, Any]) -> list[str]:
    """The stage's lines under the table of docs/performance.md: each mode's p50 by stage and
    the resident memory of every component during its run."""
    lines: list[str] = []
    for mode in E2E_MODES:
        stages = results.get(f"e2e_{mode}_stages")
        if stages:
            split = ", ".join(f"{k.removesuffix('_p50_ms').replace('_', ' ')} {v} ms" for k, v in stages.items())
            lines.append("")
            lines.append(f"End to end, {mode}, p50 of each stage: {split}.")
        footprint = results.get(f"footprint_{mode}_mib")
        if footprint:
            lines.append(
                f"Resident memory during the {mode} end-to-end run (MiB): "
                + ", ".join(f"{k} {v:,}" for k, v in footprint.items())
                + "."
            )
    return lines
