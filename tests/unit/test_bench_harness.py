"""The benchmark harness's CPU reading of a process tree."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from bench.harness import Process

# A parent that runs a child burning CPU to the end, writes the child's own CPU seconds, then waits.
PARENT = """
import subprocess, sys, time
child = subprocess.run(
    [sys.executable, "-c", "import time\\nx = 0\\nfor i in range(10**7): x += i\\nprint(time.process_time())"],
    capture_output=True, text=True, check=True,
)
open(sys.argv[1], "w").write(child.stdout)
time.sleep(60)
"""


def test_a_reaped_child_s_cpu_counts_in_the_tree(tmp_path: Path):
    out = tmp_path / "child_cpu"
    process = Process("parent", [sys.executable, "-c", PARENT, str(out)]).start()
    try:
        deadline = time.monotonic() + 60
        while not out.exists() or not out.read_text().strip():
            assert time.monotonic() < deadline, "the child never finished"
            time.sleep(0.1)
        child_cpu = float(out.read_text())
        assert process.cpu_s() >= child_cpu
    finally:
        process.stop()


def test_a_descendant_gone_between_listing_and_reading_is_passed_over(monkeypatch: pytest.MonkeyPatch):
    process = Process("sleeper", [sys.executable, "-c", "import time; sum(range(10**7)); time.sleep(60)"]).start()
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    vanished = psutil.Process(gone.pid)
    gone.wait()
    try:
        deadline = time.monotonic() + 30
        while (alive := process.cpu_s()) == 0:
            assert time.monotonic() < deadline, "the process never used a tick of CPU"
            time.sleep(0.05)
        monkeypatch.setattr(Process, "_tree", lambda self: [psutil.Process(self.pid), vanished])
        assert process.cpu_s() >= alive > 0
    finally:
        process.stop()
