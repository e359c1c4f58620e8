"""A process stopped by the benchmark harness is gone with its whole tree: a JVM under a Python
driver goes on shutting down after the driver exits, and must not share the cores with the next
measured run."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import psutil

from bench.harness import Process

# A driver that starts a child which outlives it: the child ignores SIGTERM and exits on its own
# after ``linger`` seconds; the driver exits on SIGTERM at once.
DRIVER = """
import subprocess, sys, time
child = subprocess.Popen(["sh", "-c", "trap '' TERM; sleep {linger}"])
open(sys.argv[1], "w").write(str(child.pid))
time.sleep(60)
"""


def _started(tmp_path: Path, linger: float) -> tuple[Process, psutil.Process]:
    marker = tmp_path / "child.pid"
    process = Process("driver", [sys.executable, "-c", DRIVER.format(linger=linger), str(marker)]).start()
    deadline = time.monotonic() + 10
    while not (marker.exists() and marker.read_text()):
        assert time.monotonic() < deadline, "the driver never started its child"
        time.sleep(0.05)
    return process, psutil.Process(int(marker.read_text()))


def test_stop_returns_once_a_lingering_child_has_exited(tmp_path: Path):
    process, child = _started(tmp_path, linger=2)
    started = time.monotonic()
    process.stop(timeout=20)
    assert not child.is_running() or child.status() == psutil.STATUS_ZOMBIE
    assert time.monotonic() - started >= 1


def test_a_child_still_running_at_the_timeout_is_killed(tmp_path: Path):
    process, child = _started(tmp_path, linger=60)
    started = time.monotonic()
    process.stop(timeout=2)
    assert not child.is_running() or child.status() == psutil.STATUS_ZOMBIE
    assert time.monotonic() - started < 20
