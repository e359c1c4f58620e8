"""The benchmark harness: a process stopped is gone with its whole tree (a JVM under a Python
driver goes on shutting down after the driver exits, and must not share the cores with the next
measured run), and a process tree's CPU reading counts what its descendants used."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from bench.harness import CompilerLoad, Process

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


# A driver whose child burns CPU until it is stopped.
SPINNER = """
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "while True: pass"])
open(sys.argv[1], "w").write(str(child.pid))
time.sleep(60)
"""


def test_a_paused_group_takes_no_cpu_until_it_goes_on_and_stops_at_once(tmp_path: Path):
    marker = tmp_path / "child.pid"
    process = Process("spinner", [sys.executable, "-c", SPINNER, str(marker)]).start()
    deadline = time.monotonic() + 10
    while not (marker.exists() and marker.read_text()):
        assert time.monotonic() < deadline, "the driver never started its child"
        time.sleep(0.05)
    child = psutil.Process(int(marker.read_text()))
    try:
        process.pause()
        time.sleep(0.2)
        assert child.status() == psutil.STATUS_STOPPED
        frozen = sum(child.cpu_times()[:2])
        time.sleep(0.5)
        assert sum(child.cpu_times()[:2]) == frozen
        process.resume()
        time.sleep(0.5)
        assert sum(child.cpu_times()[:2]) > frozen
        process.pause()
        started = time.monotonic()
        process.stop(timeout=20)
        # A paused group is let go on to take its SIGTERM: no wait for the SIGKILL timeout.
        assert time.monotonic() - started < 10
        assert not child.is_running() or child.status() == psutil.STATUS_ZOMBIE
    finally:
        if child.is_running():
            child.kill()


def _thread(proc: Path, pid: int, tid: int, name: str, utime: int, stime: int) -> None:
    task = proc / str(pid) / "task" / str(tid)
    task.mkdir(parents=True, exist_ok=True)
    # stat(5): pid (comm) state, then fields 4 to 13, utime (14) and stime (15), and more.
    (task / "stat").write_text(f"{tid} ({name}) S 1 1 1 0 -1 0 0 0 0 0 {utime} {stime} 0 0 20 0 1 0\n")


def test_compiler_load_counts_the_jit_compiler_threads_alone(tmp_path: Path):
    tick = os.sysconf("SC_CLK_TCK")
    now = [100.0]
    _thread(tmp_path, 10, 11, "C2 CompilerThre", 50, 10)
    _thread(tmp_path, 10, 12, "C1 CompilerThre", 5, 0)
    _thread(tmp_path, 10, 13, "Executor task l", 900, 100)
    _thread(tmp_path, 20, 21, "python (x)", 300, 0)
    load = CompilerLoad(lambda: [10, 20, 30], proc=tmp_path, clock=lambda: now[0])

    # Ten seconds on: the compilers used 2 and 0.5 tick-seconds' worth, the executor far more.
    _thread(tmp_path, 10, 11, "C2 CompilerThre", 50 + 2 * tick, 10)
    _thread(tmp_path, 10, 12, "C1 CompilerThre", 5 + tick // 2, 0)
    _thread(tmp_path, 10, 13, "Executor task l", 900 + 9 * tick, 100)
    _thread(tmp_path, 20, 21, "python (x)", 300 + 5 * tick, 0)
    now[0] += 10
    assert load.cores() == pytest.approx((2 * tick + tick // 2) / tick / 10)

    # A compiler thread started since, and none of the others used anything.
    _thread(tmp_path, 10, 14, "C2 CompilerThre", tick, 0)
    now[0] += 5
    assert load.cores() == pytest.approx(1 / 5)


def test_compiler_load_of_a_process_that_has_gone_is_nothing(tmp_path: Path):
    load = CompilerLoad(lambda: [99], proc=tmp_path, clock=iter([1.0, 11.0]).__next__)
    assert load.cores() == 0.0


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
        # The kernel counts a process's user and system time in clock ticks, each rounded down;
        # the child's own reading is finer. Without the reaped child the tree would read about
        # the parent's start-up alone (a few hundredths of a second).
        tick = 1 / os.sysconf("SC_CLK_TCK")
        assert process.cpu_s() >= child_cpu - 2 * tick
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
