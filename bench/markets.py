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

Each round also drains a backlog of ``records`` prices over each universe's count of markets
(markets of their own, fresh in every round, so each market's sequences run from 1) through the
same reducers: updates/s over the batches' busy time (bench.reducers.drain_backlog). After the
rounds, with the reducers stopped, the pages over each universe of live markets in the database
(bench/market_pages.py): the in-play list's view snapshot and page, and the home page's first
price. ``plot_markets`` draws each figure against markets (docs/img/markets.png).

    .venv/bin/python -m bench.run --only markets
"""

from __future__ import annotations

import contextlib
from typing import Any

from bench import edge, market_pages
from bench.common import cell, curve_figure, in_namespace, log, markets_define, median
from bench.e2e import warm_up_e2e
from bench.reducers import Reducers, applied_updates_probe, drain_backlog, reducers_running

UNIVERSES = (1000, 10_000)
QUICK_UNIVERSES = (200, 1000)
ROUNDS = 3
# The drains' markets: from here on, a range of the largest universe's size per drain.
DRAIN_FIRST_MARKET = 20_001
# Enough for several batches at the cap: a rate from one or two batches is mostly their fixed cost.
DRAIN_RECORDS = 600_000

TARGETS = [
    ("e2e_1k_markets_p99_ms", "End to end p99 over 1,000 live markets (micro-batch)", "ms", None),
    ("e2e_10k_markets_p99_ms", "End to end p99 over 10,000 live markets, same price rate", "ms", None),
    ("e2e_10k_vs_1k_markets", "10,000 markets' p99 ÷ 1,000 markets', same run", "times", "<= 1.5"),
    ("markets_1k_reducer_updates_per_s", "Reducers over 1,000 markets (micro-batch, a backlog)", "updates/s", None),
    ("markets_10k_reducer_updates_per_s", "Reducers over 10,000 markets, same run", "updates/s", None),
    ("markets_1k_reducer_cpu_s_per_1000", "Reducers' CPU per 1,000 updates over 1,000 markets", "CPU s", None),
    ("markets_10k_reducer_cpu_s_per_1000", "Reducers' CPU per 1,000 updates over 10,000 markets", "CPU s", None),
    ("markets_1k_snapshot_ms", "In-play list's view snapshot over 1,000 live markets, p50", "ms", None),
    ("markets_10k_snapshot_ms", "In-play list's view snapshot over 10,000 live markets, p50", "ms", None),
    ("markets_1k_first_price_ms", "Home page's first price over 1,000 live markets, p50", "ms", None),
    ("markets_10k_first_price_ms", "Home page's first price over 10,000 live markets, p50", "ms", None),
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


def markets_summary(
    windows: list[dict[str, Any]],
    universes: tuple[int, ...],
    *,
    drains: list[dict[str, Any]] | None = None,
    pages: dict[int, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Each universe's median p50 and p99 over its windows, median reducer updates/s over its
    drains and its page figures; the largest's p99 against the smallest's
    (``e2e_10k_vs_1k_markets``)."""
    drains, pages = drains or [], pages or {}
    out: dict[str, Any] = {
        "markets_universes": list(universes),
        "markets_windows": windows,
        "markets_drains": drains,
        "markets_curve": [],
    }
    for universe in universes:
        name = label(universe)
        mine = [w for w in windows if w["universe"] == universe]
        rates = [d["updates_per_s"] for d in drains if d["universe"] == universe and d["updates_per_s"]]
        costs = [d["cpu_s_per_1000"] for d in drains if d["universe"] == universe and d.get("cpu_s_per_1000")]
        point: dict[str, Any] = {"markets": universe}
        if rates:
            point["reducer_updates_per_s"] = out[f"markets_{name}_reducer_updates_per_s"] = round(median(rates))
        if costs:
            point["reducer_cpu_s_per_1000"] = out[f"markets_{name}_reducer_cpu_s_per_1000"] = median(costs)
        for key, value in pages.get(universe, {}).items():
            point[key] = out[f"markets_{name}_{key}"] = value
        if mine:
            point["p50_ms"] = out[f"e2e_{name}_markets_p50_ms"] = round(median([w["p50_ms"] for w in mine]), 1)
            point["p99_ms"] = out[f"e2e_{name}_markets_p99_ms"] = round(median([w["p99_ms"] for w in mine]), 1)
            out[f"e2e_{name}_markets_deliveries_per_s"] = round(median([w["deliveries_per_s"] for w in mine]))
        out["markets_curve"].append(point)
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
    records: int = DRAIN_RECORDS,
    page_loads: int = 10,
    running: Reducers | None = None,
) -> dict[str, Any]:
    """See the module. One reducer process (micro-batch) serves every window and drain:
    ``running``, warm micro-batch reducers of the caller's (--quick), or reducers started here
    and warmed up."""
    largest = max(universes)
    windows: list[dict[str, Any]] = []
    drains: list[dict[str, Any]] = []
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
            for universe in universes:
                first = DRAIN_FIRST_MARKET + len(drains) * largest
                log(f"markets, round {index + 1} of {rounds}: the reducers drain {records:,} prices over {universe:,}")
                drains.append({"round": index + 1, **_drain(running, universe=universe, first=first, records=records)})
        rss = round(running.process.rss_mib())
    pages = {}
    for universe in universes:
        log(f"markets: the pages over {universe:,} live markets")
        pages[universe] = market_pages.pages_at(universe, loads=page_loads)
    return {
        **markets_summary(windows, universes, drains=drains, pages=pages),
        "markets_warmup_s": warm_s,
        "markets_reducers_rss_mib": rss,
    }


def _drain(running: Reducers, *, universe: int, first: int, records: int) -> dict[str, Any]:
    """Updates/s the reducers apply from a backlog of ``records`` prices over ``universe``
    markets of their own from ``first`` on (one price for each first, unmeasured), and the
    reducer process's CPU per 1,000 of them."""
    markets_define(running.producer, running.client, universe, first=first, timeout=300)
    drain = drain_backlog(
        client=running.client,
        producer=running.producer,
        records=records,
        warmups=[universe],
        done=applied_updates_probe(running.client, markets=universe, first=first),
        query="prices",
        markets=universe,
        first=first,
        cpu=running.process.cpu_s,
    )
    rate, rate_from = drain.rate()
    return {
        "universe": universe,
        "updates_per_s": rate,
        "rate_from": rate_from,
        "cpu_s_per_1000": drain.cpu_s_per_1000(),
        "batches": len([b for b in drain.batches.values() if b.rows]),
    }


CURVE_COLUMNS = (
    ("p99_ms", "end to end p99 (ms)"),
    ("reducer_updates_per_s", "reducers (updates/s)"),
    ("reducer_cpu_s_per_1000", "reducers' CPU s / 1,000 updates"),
    ("snapshot_bytes", "in-play snapshot (bytes)"),
    ("snapshot_ms", "in-play snapshot (ms)"),
    ("list_page_bytes", "in-play page (bytes)"),
    ("list_page_ms", "in-play page (ms)"),
    ("first_price_ms", "home page's first price (ms)"),
)


def markdown_lines(results: dict[str, Any]) -> list[str]:
    windows = results.get("markets_windows") or []
    if not windows:
        return []
    lines = [
        "",
        "Market scale (micro-batch, the same price rate over each universe; p50 / p99 ms of each window in "
        "the order measured): "
        + ", ".join(f"{w['universe']:,} markets {w['p50_ms']:g} / {w['p99_ms']:g}" for w in windows)
        + f"; the reducers' resident memory at the end {results.get('markets_reducers_rss_mib')} MiB.",
    ]
    curve = results.get("markets_curve") or []
    if curve:
        lines += [
            "",
            "| live markets | " + " | ".join(title for _, title in CURVE_COLUMNS) + " |",
            "|---" * (len(CURVE_COLUMNS) + 1) + "|",
        ]
        for point in curve:
            cells = [cell(point.get(key)) for key, _ in CURVE_COLUMNS]
            lines.append(f"| {point['markets']:,} | " + " | ".join(cells) + " |")
        drains = results.get("markets_drains") or []
        if drains:
            lines += [
                "",
                "Reducer drains (updates/s in the order measured): "
                + ", ".join(f"{d['universe']:,} markets {cell(d['updates_per_s'])}" for d in drains)
                + ".",
            ]
        lines += ["", "![Latency, throughput and pages against live markets](img/markets.png)"]
    return lines


def plot_markets(results: dict[str, Any], path: Any) -> None:
    """End-to-end p99, reducer updates/s and the pages' times against live markets."""
    curve = results["markets_curve"]
    counts = [p["markets"] for p in curve]

    def line(axis: Any, key: str, title: str) -> None:
        points = [(c, p[key]) for c, p in zip(counts, curve, strict=True) if p.get(key) is not None]
        if points:
            axis.plot([c for c, _ in points], [v for _, v in points], marker="o", label=title)

    with curve_figure(path, 3) as axes:
        line(axes[0], "p99_ms", "end to end p99")
        line(axes[0], "p50_ms", "end to end p50")
        line(axes[1], "reducer_updates_per_s", "reducers (micro-batch)")
        line(axes[2], "snapshot_ms", "in-play snapshot")
        line(axes[2], "list_page_ms", "in-play page")
        line(axes[2], "first_price_ms", "home page's first price")
        axes[0].set(xlabel="live markets", ylabel="ms", title="Latency, same price rate")
        axes[1].set(xlabel="live markets", ylabel="updates/s", title="Reducers, a backlog")
        axes[2].set(xlabel="live markets", ylabel="ms (p50)", title="Pages")
