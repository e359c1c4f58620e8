"""`make bench --quick` as a smoke test: every stage runs end to end and reports its figures.

Nothing here judges speed (that is `make bench` and docs/performance.md); it checks that each
stage measured something and wrote the keys the results file promises. The bets, channels and game
stages have smoke tests of their own at test size (test_bench_bets.py, test_bench_channels.py,
test_bench_game.py), so this run leaves them out rather than run them twice.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
REQUIRED = (
    "machine",
    "date",
    "e2e_realtime_p50_ms",
    "e2e_realtime_p99_ms",
    "e2e_microbatch_p99_ms",
    "e2e_floor_p50_ms",
    "e2e_floor_p99_ms",
    "e2e_1k_markets_p99_ms",
    "e2e_10k_vs_1k_markets",
    "edge_deliveries_per_s",
    "edge_p99_ms",
    "edge_baseline_deliveries_per_s",
    "edge_ceiling_deliveries_per_s",
    "edge_server_cpu_s_per_1000",
    "edge_generator_cpu_share",
    "edge_10k_vs_bare",
    "edge_rss_per_socket_kib",
    "edge_bare_rss_per_socket_kib",
    "edge_cpu_vs_bare",
    "edge_accepted_per_s_10k",
    "reducer_microbatch_updates_per_s",
    "reducer_realtime_updates_per_s",
    "reducer_spark_ceiling_updates_per_s",
    "reducer_plain_consumer_updates_per_s",
    "feed_records_per_s",
    "origin_requests_per_1000_loads",
    "views_snapshot_origin_requests_per_1000_loads",
    "first_price_ms_cached",
    "first_price_ms_uncached",
    "views_image_since_share",
    "stack_rss_gib",
    "up_to_healthy_s",
)
# Every stage but those with a smoke test of their own, and `up` (never run by --quick).
STAGES = ("feed", "reducers", "edge", "sockets", "views", "e2e", "markets", "suspend")
MEASURED = tuple(k for k in REQUIRED if k not in ("machine", "date", "up_to_healthy_s"))


@pytest.mark.timeout(900)
def test_quick_benchmark_runs_every_stage_and_writes_every_key():
    started = datetime.now(UTC).replace(microsecond=0)
    env = {k: v for k, v in os.environ.items() if k not in ("SPORTSBOOK_NAMESPACE", "DJANGO_ALLOW_ASYNC_UNSAFE")}
    done = subprocess.run(
        [sys.executable, "-m", "bench.run", "--quick", "--only", *STAGES],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=840,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]

    results = json.loads((ROOT / "bench" / "results" / "quick" / "latest.json").read_text())
    assert datetime.fromisoformat(results["date"]) >= started
    assert results["quick"] is True
    missing = [k for k in REQUIRED if k not in results]
    assert not missing, f"results lack {missing}"
    unmeasured = [k for k in MEASURED if not (isinstance(results[k], (int, float)) and math.isfinite(results[k]))]
    assert not unmeasured, f"stages measured nothing for {unmeasured}"
    # Memory per socket is a difference of resident sizes: at a quick run's few sockets it may be
    # within the noise of a garbage collection, so it is only required to be measured.
    assert all(results[k] > 0 for k in MEASURED if "rss_per_socket" not in k)
    assert results["machine"]["cpus"] >= 1
    assert results["edge_clients_logged_in"] == results["edge_clients"]  # k6 speaks as logged-in punters
    assert results["views_burst_errors"] == 0
    assert results["stages"] == sorted(STAGES)
    # Every count of the socket stage opened all its sockets on both servers, logged in on the hub.
    for point in results["sockets_curve"]:
        for kind in ("hub", "ceiling"):
            assert point[kind]["accepted_per_s"] > 0, (point, kind)
    hub_rows = [r for r in results["sockets_rows"] if r["edge"] == "hub"]
    assert all(r["logged_in"] == r["clients"] == r["opens"] for r in hub_rows), hub_rows
