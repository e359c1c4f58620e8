"""What a run of `make bench` leaves: its results as JSON under bench/results/ and the table of
docs/performance.md, each figure against its target, with the stages' own lines and plots.

The table's rows are the stages' (each stage module's ``TARGETS``), in the order below.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench import bets, channels, desk, e2e, edge, feed, game, game_held, markets, reducers, sockets, suspend, up, views
from bench.common import RESULTS, ROOT

TARGETS = [
    *feed.TARGETS,
    *reducers.TARGETS,
    *edge.TARGETS,
    *sockets.TARGETS,
    *e2e.TARGETS,
    *markets.TARGETS,
    *suspend.TARGETS,
    *bets.TARGETS,
    *views.TARGETS,
    *e2e.FOOTPRINT_TARGETS,
    *up.TARGETS,
    *channels.TARGETS,
    *game.TARGETS,
    *game_held.TARGETS,
    *desk.TARGETS,
]


def write(results: dict[str, Any], *, quick: bool) -> Path:
    """bench/results/<date>.json and bench/results/latest.json (under quick/ with ``quick``); the
    dated file's path."""
    folder = RESULTS / "quick" if quick else RESULTS
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{results['date'].replace(':', '-')}.json"
    body = json.dumps(results, indent=2, default=str)
    path.write_text(body)
    (folder / "latest.json").write_text(body)
    return path


def versus(value: Any, target: str | None) -> str:
    """Whether a figure meets its target, and by how much it misses."""
    if target is None or not isinstance(value, (int, float)) or value != value:  # NaN: not measured
        return ""
    op, _, raw = target.partition(" ")
    bound = float(raw.replace(",", ""))
    if op == ">=":
        return "met" if value >= bound else f"missed: {value / bound:.0%} of target"
    if op == ">":
        return "met" if value > bound else f"missed: {value / bound:.0%} of target"
    if op == "<":
        return "met" if value < bound else f"missed: {value / bound:.1f} times the bound"
    if op != "<=":
        raise ValueError(f"a target is >=, >, < or <= a bound, got {target!r}")
    return "met" if value <= bound else f"missed: {value / bound:.1f} times the bound"


def plot_edge(rows: list[dict[str, Any]], path: Path) -> None:
    """Deliveries/s against p99 for each edge, one point per offered rate."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axis = plt.subplots(figsize=(7, 4.5))
    for kind, label in edge.EDGE_KINDS:
        mine = sorted((r for r in rows if r["edge"] == kind), key=lambda r: r["rate"])
        axis.plot([r["deliveries_per_s"] for r in mine], [r["p99_ms"] for r in mine], marker="o", label=label)
    axis.axhline(edge.EDGE_P99_MS, color="grey", linestyle="--", linewidth=1, label=f"p99 target {edge.EDGE_P99_MS} ms")
    axis.set(xlabel="deliveries/s (k6 clients, 20 markets each)", ylabel="p99 latency (ms)", yscale="log")
    axis.set_title("Websocket edge: throughput against p99")
    axis.grid(alpha=0.3)
    axis.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def cpu_probe_line(results: dict[str, Any]) -> list[str]:
    """The machine's speed probes: this run's, then each earlier run's whose figures the table
    still shows (a run merged into earlier ones, ``bench.run.merged``)."""
    probes = results.get("cpu_probe_ms") or {}
    if not probes:
        return []
    earlier = results.get("cpu_probe_ms_by_run") or {}

    def listed(run: dict[str, Any]) -> str:
        return ", ".join(f"{k} {v}" for k, v in run.items())

    runs = [listed(probes)]
    if earlier:
        runs = [f"this run ({results['date']}) {runs[0]}"]
        runs += [f"the run of {date} {listed(run)}" for date, run in sorted(earlier.items())]
    return [
        "- Machine speed between stages (ms for the same fixed Python work, lower is faster; the "
        "figure after a stage's name is taken when it ended): " + "; ".join(runs)
    ]


def stage_dates_line(results: dict[str, Any]) -> list[str]:
    """Which run each stage's figures come from, when a run merged some stages into an earlier one."""
    dates = results.get("stage_dates") or {}
    if len(set(dates.values())) <= 1:
        return []
    by_date: dict[str, list[str]] = {}
    for stage, date in sorted(dates.items()):
        by_date.setdefault(date, []).append(stage)
    return ["- Figures by run: " + "; ".join(f"{', '.join(s)} from {d}" for d, s in sorted(by_date.items()))]


def write_markdown(results: dict[str, Any]) -> Path:
    """docs/performance.md from a full run: machine, date, table against the targets, plots."""
    lines = [
        "# Performance",
        "",
        "Written by `make bench` (`bench/run.py`) from its last run; stages run: "
        f"{', '.join(results.get('stages', [])) or 'all'} (the others are marked not measured).",
        "Everything runs co-located on one machine: Kafka, Redis, PostgreSQL, Spark, the ASGI workers",
        "and the load clients, which compete for the same cores.",
        "",
        f"- Date: {results['date']}",
        *stage_dates_line(results),
        *cpu_probe_line(results),
        *reducers.reducer_rounds_line(results),
        *e2e.e2e_rounds_line(results),
        f"- Machine: {results['machine']['cpus']} cores ({results['machine']['cpu_model']}), "
        f"{results['machine']['memory_gib']} GiB, kernel {results['machine']['kernel']}, "
        f"Python {results['machine']['python']}",
        "",
        "| measure | result | unit | target | against the target |",
        "|---|---|---|---|---|",
    ]
    for key, label, unit, target in TARGETS:
        value = results.get(key)
        shown = "not measured in this run" if value is None else f"{value:,}" if isinstance(value, int) else value
        lines.append(f"| {label} | {shown} | {unit} | {target or '—'} | {versus(value, target)} |")
    lines += e2e.markdown_lines(results)
    lines += markets.markdown_lines(results)
    if results.get("markets_curve"):
        markets.plot_markets(results, ROOT / "docs" / "img" / "markets.png")
    lines += edge.markdown_lines(results)
    if results.get("edge_rows"):
        plot_edge(results["edge_rows"], ROOT / "docs" / "img" / "edge.png")
        lines += ["", "![Edge throughput and latency](img/edge.png)"]
    lines += sockets.markdown_lines(results)
    if results.get("sockets_curve"):
        sockets.plot_sockets(results, ROOT / "docs" / "img" / "sockets.png")
    lines += channels.markdown_lines(results)
    lines += game.markdown_lines(results)
    lines += game_held.markdown_lines(results)
    lines += desk.markdown_lines(results)
    # The current profile of each stage; the history of runs stays in bench/results/history.md.
    profiles = ROOT / "bench" / "PROFILES.md"
    if profiles.exists():
        lines += ["", profiles.read_text().strip()]
    path = ROOT / "docs" / "performance.md"
    path.write_text("\n".join(lines) + "\n")
    return path
