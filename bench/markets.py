"""Market scale: the same price rate end to end (feed → Kafka → reducers → Redis → websocket)
over 1,000 and over 10,000 live markets, in the same run, through one micro-batch reducer
process, measured turn about in rounds.

The reducers are started with every market of the larger universe defined through the markets
topic (as the feed defines its markets), warmed up as the end-to-end stage's are, then each round
measures one window at each universe: prices produced to Kafka at ``rate`` a second over markets
1 to ``universe``, ``clients`` websockets each watching 20 of them with batching on, latency from
each price's source event to its arrival (bench.edge, ``--source kafka``). The price rate is the
same at both sizes, so the reducers and Redis do the same work a second over ten times the state;
each client gets a tenth of the frames at 10,000 (it watches 20 of ten times as many).

    .venv/bin/python -m bench.run --only markets
"""

from __future__ import annotations

import contextlib
from typing import Any

from bench import edge
from bench.common import in_namespace, log, markets_define, median
from bench.e2e import warm_up_e2e
from bench.reducers import Reducers, reducers_running

UNIVERSES = (1000, 10_000)
QUICK_UNIVERSES = (200, 1000)
ROUNDS = 3

TARGETS = [
    ("e2e_1k_markets_p99_ms", "End to end p99 over 1,000 live markets (micro-batch)", "ms", None),
    ("e2e_10k_markets_p99_ms", "End to end p99 over 10,000 live markets, same price rate", "ms", None),
    ("e2e_10k_vs_1k_markets", "10,000 markets' p99 ÷ 1,000 markets', same run", "times", "<= 1.5"),
]


def edge_args(*, universe: int, clients: int, rate: float, duration: float, warmup: float) -> Any:
    return edge.parse(
        [
            "--source",
            "kafka",
            "--generator",
            "python",
            *("--clients", str(clients), "--markets", "20", "--universe", str(universe), "--rate", str(rate)),
            *("--workers", "2", "--duration", str(duration), "--warmup", str(warmup), "--batch"),
        ]
    )


def label(universe: int) -> str:
    return f"{universe // 1000}k" if universe % 1000 == 0 else str(universe)


def markets_summary(windows: list[dict[str, Any]], universes: tuple[int, ...]) -> dict[str, Any]:
    """Each universe's median p50 and p99 over its windows; the largest's p99 against the
    smallest's (``e2e_10k_vs_1k_markets``)."""
    out: dict[str, Any] = {"markets_universes": list(universes), "markets_windows": windows}
    for universe in universes:
        mine = [w for w in windows if w["universe"] == universe]
        if not mine:
            continue
        out[f"e2e_{label(universe)}_markets_p50_ms"] = round(median([w["p50_ms"] for w in mine]), 1)
        out[f"e2e_{label(universe)}_markets_p99_ms"] = round(median([w["p99_ms"] for w in mine]), 1)
        out[f"e2e_{label(universe)}_markets_deliveries_per_s"] = round(median([w["deliveries_per_s"] for w in mine]))
    small, large = min(universes), max(universes)
    low, high = out.get(f"e2e_{label(small)}_markets_p99_ms"), out.get(f"e2e_{label(large)}_markets_p99_ms")
    out["e2e_10k_vs_1k_markets"] = round(high / low, 2) if low and high else None
    return out


def bench_markets(
    *,
    universes: tuple[int, ...] = UNIVERSES,
    clients: int = 1000,
    rate: float = 1000,
    duration: float = 15,
    warmup: float = 8,
    rounds: int = ROUNDS,
    running: Reducers | None = None,
) -> dict[str, Any]:
    """See the module. One reducer process (micro-batch) serves every window: ``running``, warm
    micro-batch reducers of the caller's (--quick), or reducers started here and warmed up."""
    largest = max(universes)
    windows: list[dict[str, Any]] = []
    with contextlib.ExitStack() as stack:
        if running is None:
            running = stack.enter_context(reducers_running("microbatch", log_name="bench-markets.log", define=False))
            warm_s = None
        else:
            warm_s = 0
        stack.enter_context(in_namespace(running.namespace))
        log(f"markets: defining {largest:,} markets through the markets topic")
        markets_define(running.producer, running.client, largest, timeout=300)
        if warm_s is None:
            log("markets: warming the reducers up")
            warm_s = warm_up_e2e(running, rate=rate)["seconds"]
        for index in range(rounds):
            for universe in universes:
                log(f"markets, round {index + 1} of {rounds}: {universe:,} markets at {rate:g} prices/s")
                result = edge.run(
                    edge_args(universe=universe, clients=clients, rate=rate, duration=duration, warmup=warmup)
                )
                if not result["deliveries_per_s"]:
                    raise RuntimeError(f"markets, {universe} markets: no price reached a client")
                windows.append(
                    {
                        "round": index + 1,
                        "universe": universe,
                        "p50_ms": result["p50_ms"],
                        "p99_ms": result["p99_ms"],
                        "max_ms": result["max_ms"],
                        "deliveries_per_s": result["deliveries_per_s"],
                        "stages": {k: v for k, v in result.items() if k.endswith("_p50_ms") and "_to_" in k},
                    }
                )
        rss = round(running.process.rss_mib())
    return {**markets_summary(windows, universes), "markets_warmup_s": warm_s, "markets_reducers_rss_mib": rss}


def markdown_lines(results: dict[str, Any]) -> list[str]:
    windows = results.get("markets_windows") or []
    if not windows:
        return []
    return [
        "",
        "Market scale (micro-batch, the same price rate over each universe; p50 / p99 ms of each window in "
        "the order measured): "
        + ", ".join(f"{w['universe']:,} markets {w['p50_ms']:g} / {w['p99_ms']:g}" for w in windows)
        + f"; the reducers' resident memory at the end {results.get('markets_reducers_rss_mib')} MiB.",
    ]
