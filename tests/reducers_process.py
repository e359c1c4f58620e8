"""The reducers process run as an operator starts it (``python -m spark.jobs.reducers``), for the
tests of what it refuses before any Spark session starts."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_reducers(environ: Mapping[str, str], *, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run the reducers with ``environ`` until they exit (a refusal exits before Spark starts)."""
    return subprocess.run(
        [sys.executable, "-m", "spark.jobs.reducers"],
        cwd=ROOT,
        env=dict(environ),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
