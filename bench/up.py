"""`make bench`'s up stage: seconds from `make up` to a healthy /healthz."""

from __future__ import annotations

import subprocess
import time
from typing import Any

from bench.common import ROOT, log

TARGETS = [
    ("up_to_healthy_s", "`make up` to healthy", "s", None),
]


def bench_up() -> dict[str, Any]:
    """Seconds from `make up` to a healthy /healthz, when the stack's processes are not running
    yet (they are stopped again afterwards); the services the benchmark started stay up."""
    status = subprocess.run([str(ROOT / "infra" / "bin" / "app.sh"), "status"], capture_output=True, text=True)
    if ": running" in status.stdout:
        log("the stack's processes already run: `make up` not timed")
        return {"up_to_healthy_s": None, "up_note": "not measured: the stack was already running"}
    started = time.perf_counter()
    try:
        subprocess.run(["make", "up"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        return {"up_to_healthy_s": round(time.perf_counter() - started, 1)}
    finally:
        subprocess.run([str(ROOT / "infra" / "bin" / "app.sh"), "stop"], cwd=ROOT, stdout=subprocess.DEVNULL)
