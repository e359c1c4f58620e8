"""Socket scale: the websocket edge at 1k, 5k and 10k concurrent logged-in sockets, each watching
20 markets, against the bare websocket server (``bench.ceiling_server``) at the same counts.

For each count and each server, the offered update rate rises through ``RATES`` until p99 passes
``EDGE_P99_MS`` (or the server stops delivering what is offered); the figure of a count is the
highest deliveries/s within the bound. Each row also measures the server's CPU per 1,000
deliveries, its resident memory before any socket, with every socket open and idle, and at the
end of the streaming window (so the memory each socket costs, idle and streaming), and how fast a
burst of that many sockets is accepted with its login (``accepted_per_s``: every user of k6
connects at once). From ``PACED_FROM`` sockets on, that storm is one row of its own (at the
lowest rate), and the rates are climbed with the sockets arriving paced, as a host sees a crowd
arrive: ``ARRIVAL_PER_S`` a second, or ``ARRIVAL_SHARE`` of what that server accepted in its
storm if that is less. The storm measures the handshake, the climb the streaming: a climb whose
sockets arrive faster than the server opens them measures its handshakes again. What gave
first at each count — p99, sockets lost, connections refused or the open-files limit — is named in
``sockets_first_limit``. From ``PACED_FROM`` sockets on, each rate of the climb is run
``PACED_REPEATS`` times and the row of median p99 stands for it (the others' p99s go with it, in
``repeat_p99_ms``): one window of a noisy machine does not decide the count's figure.

    .venv/bin/python -m bench.run --only sockets
"""

from __future__ import annotations

import resource
from typing import Any

from bench.common import cell, curve_figure, log, namespace
from bench.edge import EDGE_DELIVERED_SHARE, EDGE_P99_MS, parse, run

COUNTS = (1000, 5000, 10_000)
QUICK_COUNTS = (40, 80)
# Market updates a second over the universe of 1,000: each socket watches 20, so a socket gets
# rate * 20 / 1,000 market states a second (at 10k sockets and 50 updates/s: 10,000 deliveries/s).
RATES = (25, 50, 100, 200, 400)
QUICK_RATES = (100,)
# From PACED_FROM sockets the climb starts lower: at 10,000 sockets 25 updates/s is already
# 4,750 deliveries/s, and on a slow machine neither server kept p99 within the bound there.
PACED_FIRST_RATES = (10,)
KINDS = (("hub", "the edge (hub, batched)"), ("ceiling", "bare websocket server"))
KIND_NAMES = {"hub": "hub", "ceiling": "bare"}
# From this many sockets on, the storm is a row of its own and the climb's sockets arrive paced.
PACED_FROM = 10_000
ARRIVAL_PER_S = 400
ARRIVAL_SHARE = 0.8
# Runs of each rate of a paced count's climb; the row of median p99 stands for the rate.
PACED_REPEATS = 3

TARGETS = [
    (
        "edge_10k_vs_bare",
        "Edge (hub) ÷ bare server at 10,000 sockets (arriving paced), deliveries/s within p99 100 ms",
        "ratio",
        ">= 0.6",
    ),
    ("edge_rss_per_socket_kib", "Edge (hub) resident memory per socket at 10,000 (streaming)", "KiB", None),
    ("edge_bare_rss_per_socket_kib", "Bare server's resident memory per socket at 10,000 (streaming)", "KiB", None),
    ("edge_rss_vs_bare", "Edge memory per socket ÷ the bare server's", "ratio", "<= 2"),
    (
        "edge_cpu_vs_bare",
        "Edge CPU per delivery ÷ the bare server's at 10,000 sockets, same rate (the highest both streamed)",
        "ratio",
        "<= 1.5",
    ),
    ("edge_cpu_rate", "Update rate of that comparison", "updates/s", None),
    ("edge_accepted_per_s_10k", "Sockets accepted a second with login, 10,000 at once", "sockets/s", None),
    ("edge_opened_at_once_10k", "Sockets opened of 10,000 connecting at once (hub)", "sockets", None),
]


def within(row: dict[str, Any]) -> bool:
    """The row delivered what was offered with p99 within the bound, lost no socket, and had every
    socket open before its measured window (handshakes in the window would be measured too)."""
    return (
        row["p99_ms"] <= EDGE_P99_MS
        and not row.get("client_errors")
        and not row.get("late_opens")
        and row["deliveries_per_s"] >= EDGE_DELIVERED_SHARE * row["expected_per_s"]
        and opened(row)
    )


def opened(row: dict[str, Any]) -> bool:
    """Every socket of the row connected."""
    return row.get("opens", row["clients"]) >= row["clients"]


def first_limit(rows: list[dict[str, Any]], *, open_files: int) -> str:
    """What gave first on the way up the rates of one count and server."""
    failed = next((r for r in rows if not within(r)), None)
    if failed is None:
        return f"none up to {rows[-1]['rate']} updates/s" if rows else "not measured"
    if failed["clients"] + 64 > open_files:
        return f"open files ({open_files}) at {failed['clients']} sockets"
    if failed.get("opens", failed["clients"]) < failed["clients"]:
        return f"{failed['clients'] - failed['opens']} sockets not opened at {failed['rate']} updates/s"
    if failed.get("late_opens"):
        return f"{failed['late_opens']} sockets still opening in the measured window at {failed['rate']} updates/s"
    if failed.get("client_errors"):
        return f"{failed['client_errors']} socket errors at {failed['rate']} updates/s"
    if failed["deliveries_per_s"] < EDGE_DELIVERED_SHARE * failed["expected_per_s"]:
        return (
            f"delivered {failed['deliveries_per_s']:,}/s of {failed['expected_per_s']:,}/s offered "
            f"at {failed['rate']} updates/s"
        )
    return f"p99 {failed['p99_ms']} ms at {failed['rate']} updates/s ({failed['deliveries_per_s']:,} deliveries/s)"


def best(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    good = [r for r in rows if within(r)]
    return max(good, key=lambda r: r["deliveries_per_s"]) if good else None


def climb_arrival(storm: dict[str, Any], most: int) -> int:
    """Sockets a second for a count's climb: ``most``, or ``ARRIVAL_SHARE`` of what the server
    accepted in its storm if that is less, so that every socket opens before the window."""
    accepted = storm.get("accepted_per_s")
    if not accepted:
        return most
    return max(1, min(most, int(ARRIVAL_SHARE * accepted)))


def paced_rates(rates: tuple[int, ...]) -> tuple[int, ...]:
    """The rates a paced count climbs: ``PACED_FIRST_RATES`` below the first of ``rates``, then them."""
    return tuple(r for r in PACED_FIRST_RATES if r < rates[0]) + rates


def bench_sockets(
    *,
    counts: tuple[int, ...] = COUNTS,
    rates: tuple[int, ...] = RATES,
    duration: float = 10,
    warmup: float = 4,
    workers: int = 2,
    paced_from: int = PACED_FROM,
    arrival_per_s: int = ARRIVAL_PER_S,
    paced_repeats: int = PACED_REPEATS,
) -> dict[str, Any]:
    """Every count, every server, the rates in order until one fails; see the module."""
    open_files = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    rows: list[dict[str, Any]] = []
    limits: dict[str, str] = {}

    def one(kind: str, count: int, rate: int, *, arrival: int) -> dict[str, Any]:
        # k6 opens every socket at once, or paced, once it has readied them all (its setup()
        # starts the window): at once the server is given a second per 150 sockets (the hub
        # accepts 200-400 a second with login on a slow machine), at least 10; paced, the
        # arrival and 15 s more. Every socket is open before the measured window starts.
        connect_s = count / arrival + 15 if arrival else max(10, count // 150)
        args = parse(
            [
                *("--edge", kind, "--clients", str(count), "--markets", "20", "--rate", str(rate)),
                *("--workers", str(workers), "--duration", str(duration), "--warmup", str(warmup)),
                *("--connect-s", str(connect_s), "--arrival-per-s", str(arrival), "--batch"),
            ]
        )
        with namespace():
            row = run(args)
        log(
            f"sockets: {kind} {count} at {rate}/s ({f'{arrival} arriving a second' if arrival else 'at once'}): "
            f"{row['deliveries_per_s']:,}/s of {row['expected_per_s']:,}/s, p99 {row['p99_ms']} ms, "
            f"{row.get('opens', count):,} opened, {row['rss_per_socket_streaming_kib']} KiB/socket, "
            f"{row['accepted_per_s']} accepted/s"
        )
        return row

    for count in counts:
        for kind, _ in KINDS:
            paced = count >= paced_from
            arrival = 0
            climb = rates
            if paced:
                climb = paced_rates(rates)
                storm = {**one(kind, count, climb[0], arrival=0), "storm": True}
                rows.append(storm)
                arrival = climb_arrival(storm, arrival_per_s)
            mine = []
            for rate in climb:
                runs = [one(kind, count, rate, arrival=arrival) for _ in range(paced_repeats if paced else 1)]
                row = median_row(runs)
                mine.append(row)
                if not within(row):
                    break
            rows += mine
            limits[f"{kind} {count}"] = first_limit(mine, open_files=open_files)
            if paced:
                limits[f"{kind} {count} at once"] = (
                    f"{storm.get('opens', count):,} of {count:,} opened, {storm['accepted_per_s']} accepted/s"
                )
    return sockets_summary(rows, limits=limits, counts=counts)


def median_row(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run of median p99 (the higher of an even count's middle two) among runs of one rate,
    with every run's p99 in ``repeat_p99_ms`` when there was more than one."""
    if len(runs) == 1:
        return runs[0]
    ordered = sorted(runs, key=lambda r: r["p99_ms"])
    return {**ordered[len(ordered) // 2], "repeat_p99_ms": [r["p99_ms"] for r in runs]}


def sockets_summary(rows: list[dict[str, Any]], *, limits: dict[str, str], counts: tuple[int, ...]) -> dict[str, Any]:
    """The stage's keys from its rows: at the largest count, the hub against the bare server."""
    top = max(counts)
    curve = []
    for count in counts:
        point: dict[str, Any] = {"sockets": count}
        for kind, _ in KINDS:
            everything = [r for r in rows if r["edge"] == kind and r["clients"] == count]
            storm = next((r for r in everything if r.get("storm")), None)
            mine = [r for r in everything if not r.get("storm")]
            found = best(mine)
            first = mine[0] if mine else None
            # Memory and CPU per socket or delivery only where every socket opened: spread over
            # sockets that never connected they would be noise, not a cost.
            whole = next((r for r in mine if opened(r)), None)
            point[kind] = {
                "deliveries_per_s": found["deliveries_per_s"] if found else 0,
                "p99_ms": found["p99_ms"] if found else (first["p99_ms"] if first else None),
                "opened": max((r.get("opens", r["clients"]) for r in mine), default=0),
                "cpu_s_per_1000": (found or whole or {}).get("server_cpu_s_per_1000"),
                "rss_per_socket_idle_kib": whole["rss_per_socket_idle_kib"] if whole else None,
                "rss_per_socket_streaming_kib": (found or whole or {}).get("rss_per_socket_streaming_kib"),
                # A storm's rate is its own row's, whatever number of its sockets opened.
                "accepted_per_s": storm["accepted_per_s"] if storm else (whole["accepted_per_s"] if whole else None),
                "storm_opened": storm.get("opens", count) if storm else None,
                "arrival_per_s": (found or whole or first or {}).get("arrival_per_s") or None,
            }
        curve.append(point)
    at_top = next(p for p in curve if p["sockets"] == top)
    hub, bare = at_top["hub"], at_top["ceiling"]
    cost_rate, hub_cost, bare_cost = same_rate_cost(rows, top)

    def ratio(a: Any, b: Any, digits: int = 2) -> float | None:
        return round(a / b, digits) if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b else None

    return {
        "sockets_counts": list(counts),
        "sockets_curve": curve,
        "sockets_rows": rows,
        "sockets_first_limit": limits,
        "edge_10k_vs_bare": ratio(hub["deliveries_per_s"], bare["deliveries_per_s"]),
        "edge_rss_per_socket_kib": hub["rss_per_socket_streaming_kib"],
        "edge_bare_rss_per_socket_kib": bare["rss_per_socket_streaming_kib"],
        "edge_rss_vs_bare": ratio(hub["rss_per_socket_streaming_kib"], bare["rss_per_socket_streaming_kib"]),
        "edge_cpu_vs_bare": ratio(hub_cost, bare_cost),
        "edge_cpu_rate": cost_rate,
        "edge_accepted_per_s_10k": hub["accepted_per_s"],
        "edge_opened_at_once_10k": hub["storm_opened"],
        "sockets_top": top,
    }


def same_rate_cost(rows: list[dict[str, Any]], count: int) -> tuple[float | None, float | None, float | None]:
    """CPU per 1,000 deliveries of the hub and of the bare server at ``count`` sockets, at the
    highest rate both climbed with every socket open: a cost per delivery falls as the rate rises
    (the per-socket work, pings and ticks, is spread over more deliveries), so the two are
    compared at one rate. (rate, hub, bare), or Nones."""
    climbs = {
        kind: {
            r["rate"]: r
            for r in rows
            if r["edge"] == kind and r["clients"] == count and not r.get("storm") and opened(r)
        }
        for kind, _ in KINDS
    }
    shared = set(climbs["hub"]) & set(climbs["ceiling"])
    if not shared:
        return None, None, None
    rate = max(shared)
    return rate, climbs["hub"][rate].get("server_cpu_s_per_1000"), climbs["ceiling"][rate].get("server_cpu_s_per_1000")


def markdown_lines(results: dict[str, Any]) -> list[str]:
    curve = results.get("sockets_curve")
    if not curve:
        return []
    lines = [
        "",
        "### Socket scale (hub against the bare server, each count's best rate within p99 100 ms)",
        "",
        "| sockets | hub opened, bare opened | hub deliveries/s | bare deliveries/s | hub p99 ms "
        "| hub CPU s / 1,000 | bare CPU s / 1,000 "
        "| hub KiB/socket idle, streaming | bare KiB/socket idle, streaming | hub accepted/s | bare accepted/s |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for point in curve:
        hub, bare = point["hub"], point["ceiling"]
        lines.append(
            f"| {point['sockets']:,} | {cell(hub.get('opened'))}, {cell(bare.get('opened'))} "
            f"| {cell(hub['deliveries_per_s'])} | {cell(bare['deliveries_per_s'])} | {cell(hub['p99_ms'])} "
            f"| {cell(hub['cpu_s_per_1000'])} | {cell(bare['cpu_s_per_1000'])} "
            f"| {cell(hub['rss_per_socket_idle_kib'])}, {cell(hub['rss_per_socket_streaming_kib'])} "
            f"| {cell(bare['rss_per_socket_idle_kib'])}, {cell(bare['rss_per_socket_streaming_kib'])} "
            f"| {cell(hub['accepted_per_s'])} | {cell(bare['accepted_per_s'])} |"
        )
    paced = [p for p in curve if p["hub"].get("arrival_per_s")]
    if paced:
        lines += [
            "",
            f"From {paced[0]['sockets']:,} sockets the rates are climbed with the sockets arriving paced "
            f"(hub {cell(paced[0]['hub']['arrival_per_s'])} a second, bare server "
            f"{cell(paced[0]['ceiling'].get('arrival_per_s'))}: {ARRIVAL_PER_S} or {ARRIVAL_SHARE:g} of what "
            "the server accepted in its storm, if less); accepted/s there is of a row with all of them "
            "connecting at once (opened: "
            + ", ".join(
                f"hub {cell(p['hub']['storm_opened'])}, bare {cell(p['ceiling']['storm_opened'])}" for p in paced
            )
            + ").",
        ]
    repeated = [r for r in results.get("sockets_rows") or [] if r.get("repeat_p99_ms")]
    if repeated:
        lines += [
            "",
            "Each rate of a paced count's climb ran "
            f"{len(repeated[0]['repeat_p99_ms'])} times; the run of median p99 stands for it (p99 ms of each run: "
            + "; ".join(
                f"{KIND_NAMES.get(r['edge'], r['edge'])} {r['clients']:,} at {r['rate']:g}/s "
                + ", ".join(f"{p:g}" for p in r["repeat_p99_ms"])
                for r in repeated
            )
            + ").",
        ]
    limits = results.get("sockets_first_limit") or {}
    if limits:
        lines += ["", "First limit met: " + "; ".join(f"{k}: {v}" for k, v in limits.items()) + "."]
    lines += ["", "![Latency and cost against sockets](img/sockets.png)"]
    return lines


def plot_sockets(results: dict[str, Any], path: Any) -> None:
    """Deliveries/s within the bound, CPU per 1,000 and memory per socket against sockets."""
    curve = results["sockets_curve"]
    counts = [p["sockets"] for p in curve]
    with curve_figure(path, 3) as axes:
        for kind, label in KINDS:
            axes[0].plot(counts, [p[kind]["deliveries_per_s"] for p in curve], marker="o", label=label)
            axes[1].plot(counts, [p[kind]["cpu_s_per_1000"] for p in curve], marker="o", label=label)
            axes[2].plot(counts, [p[kind]["rss_per_socket_streaming_kib"] for p in curve], marker="o", label=label)
        axes[0].set(xlabel="sockets", ylabel="deliveries/s within p99 100 ms", title="Throughput")
        axes[1].set(xlabel="sockets", ylabel="server CPU s per 1,000 deliveries", title="Cost")
        axes[2].set(xlabel="sockets", ylabel="KiB per socket (streaming)", title="Memory")
