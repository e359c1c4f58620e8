"""Running the platform's processes from tests and benchmarks: free ports, child processes
stopped with their whole group, the web server's command line, and waiting for a condition.

One harness for both, so a test and a benchmark start a web server, a reducer or a cluster
node the same way, and a change to how one is started is made once.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, TypeVar

import psutil

ROOT = Path(__file__).resolve().parent.parent
ASGI_APP = "webapp.asgi:application"

T = TypeVar("T")


def free_port(*, pair: bool = False) -> int:
    """A free loopback port; with ``pair`` the next port is free as well (Kafka's controller)."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port: int = s.getsockname()[1]
        if not pair:
            return port
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port + 1))
            except OSError:
                continue
        return port


def wait_until(predicate: Callable[[], T], *, timeout: float, what: str, interval: float = 0.1) -> T:
    """Poll until ``predicate()`` is truthy and return its value; ``TimeoutError`` naming ``what``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise TimeoutError(f"timed out after {timeout}s waiting for {what}")


def python(*args: str) -> list[str]:
    """This interpreter (the project's venv) with ``args``."""
    return [sys.executable, *args]


def uvicorn_command(
    port: int,
    *,
    app: str = ASGI_APP,
    workers: int = 1,
    ws: str | None = None,
    ws_max_size: int | None = None,
    log_level: str | None = None,
) -> list[str]:
    """The web server as production runs it (infra/conf), on loopback at ``port``; ``ws``: the
    websocket protocol, ``WS_PROTOCOL`` unless named."""
    if ws is None:
        from django.conf import settings

        ws = settings.WS_PROTOCOL
    command = [str(ROOT / ".venv" / "bin" / "uvicorn"), app, "--host", "127.0.0.1", "--port", str(port)]
    if workers != 1:
        command += ["--workers", str(workers)]
    # permessage-deflate off, as webapp/serve.py runs it (WS_PER_MESSAGE_DEFLATE).
    command += ["--ws", ws, "--ws-per-message-deflate", "false", "--lifespan", "on", "--no-access-log"]
    if ws_max_size is not None:
        # uvicorn closes the connection (1009) on a frame above the limit before reading it in
        # full; frames up to it are refused in band by the consumer.
        command += ["--ws-max-size", str(ws_max_size)]
    if log_level is not None:
        command += ["--log-level", log_level]
    return command


def web_up(url: str, *, path: str = "/login/", timeout: float = 2) -> bool:
    """Whether the site at ``url`` answers ``path``."""
    try:
        urllib.request.urlopen(f"{url}{path}", timeout=timeout)  # noqa: S310 - loopback server
        return True
    except OSError:
        return False


# HotSpot's JIT compiler threads as the kernel names them (a thread's name is cut at 15
# characters): "C2 CompilerThread0", "C1 CompilerThread0", ...
COMPILER_THREAD_PREFIXES = ("C1 CompilerThre", "C2 CompilerThre")
# A JVM whose compilers took less than this share of a core over a warm-up window is warm: the
# stages that compare against each other (end to end, the desk) wait for the same mark.
JIT_SETTLED_CORES = 0.1


def compilers_settled(cores: Callable[[], float], readings: list[float]) -> bool:
    """Read the cores the JIT compilers took since the last reading (``cores``, as
    ``CompilerLoad.cores``) into ``readings``, to the thousandth: whether they took less than
    ``JIT_SETTLED_CORES``, as a running stack's do."""
    readings.append(round(cores(), 3))
    return readings[-1] < JIT_SETTLED_CORES


class CompilerLoad:
    """How much of a core the JIT compiler threads of the JVMs among ``pids()`` took between
    two readings, from the kernel's per-thread CPU counters (``/proc/<pid>/task/<tid>/stat``).

    A JVM that has just started compiles Spark's code for minutes (``bench.e2e.E2E_WARMUP_S``).
    A thread that has gone since the last reading is left out of the next.
    """

    def __init__(
        self, pids: Callable[[], list[int]], *, proc: Path = Path("/proc"), clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._pids = pids
        self._proc = proc
        self._clock = clock
        self._ticks_per_s = os.sysconf("SC_CLK_TCK")
        self._last = self._ticks()
        self._at = clock()

    def _ticks(self) -> dict[tuple[int, str], int]:
        ticks: dict[tuple[int, str], int] = {}
        for pid in self._pids():
            try:
                tids = os.listdir(self._proc / str(pid) / "task")
            except OSError:
                continue  # the process has gone
            for tid in tids:
                try:
                    stat = (self._proc / str(pid) / "task" / tid / "stat").read_text()
                except OSError:
                    continue
                name = stat[stat.index("(") + 1 : stat.rindex(")")]
                if name.startswith(COMPILER_THREAD_PREFIXES):
                    fields = stat[stat.rindex(")") + 2 :].split()
                    # utime and stime, fields 14 and 15 of stat(5).
                    ticks[(pid, tid)] = int(fields[11]) + int(fields[12])
        return ticks

    def cores(self) -> float:
        """Cores the compilers took since the last reading (or since this was made)."""
        ticks, now = self._ticks(), self._clock()
        used = sum(value - self._last.get(thread, 0) for thread, value in ticks.items())
        elapsed = now - self._at
        self._last, self._at = ticks, now
        return used / self._ticks_per_s / elapsed if elapsed > 0 else 0.0


class Process:
    """A child process in its own session, logging to ``log``, stopped with its whole group.

    ``env`` is its whole environment (the caller's when left out). ``start`` may be called
    again after ``kill`` or ``stop``: a restart.
    """

    def __init__(
        self, name: str, args: list[str], *, env: Mapping[str, str] | None = None, log: Path | None = None
    ) -> None:
        self.name = name
        self.args = args
        self.env = dict(env if env is not None else os.environ)
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> Process:
        if self.log is not None:
            self.log.parent.mkdir(parents=True, exist_ok=True)
            with self.log.open("ab") as out:
                self.process = self._popen(out)
        else:
            self.process = self._popen(subprocess.DEVNULL)
        return self

    def _popen(self, out: IO[bytes] | int) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            self.args, cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )

    @property
    def pid(self) -> int:
        assert self.process is not None, f"{self.name} was never started"
        return self.process.pid

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def pause(self) -> None:
        """Freeze the whole group (SIGSTOP): it takes no CPU and keeps its state, its JVM's
        compiled code included, until ``resume``."""
        assert self.process is not None, f"{self.name} was never started"
        os.killpg(self.process.pid, signal.SIGSTOP)

    def resume(self) -> None:
        """Let a paused group go on (SIGCONT); nothing for a group that is running."""
        if self.alive():
            assert self.process is not None
            os.killpg(self.process.pid, signal.SIGCONT)

    def kill(self) -> None:
        """A crash: SIGKILL to the whole group."""
        assert self.process is not None, f"{self.name} was never started"
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(30)

    def stop(self, timeout: float = 60) -> None:
        """SIGTERM to the whole group; SIGKILL after ``timeout``. Returns once every process of
        the tree has exited, not only the one started: a JVM under a Python driver goes on with
        its shutdown after the driver is gone, and would take the cores from what runs next."""
        if self.process is None or not self.alive():
            return
        try:
            descendants = self._tree()[1:]
        except psutil.NoSuchProcess:
            descendants = []
        deadline = time.monotonic() + timeout
        # A paused group handles no signal but SIGKILL until it is let go on.
        os.killpg(self.process.pid, signal.SIGCONT)
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(30)
        _, left = psutil.wait_procs(descendants, timeout=max(1.0, deadline - time.monotonic()))
        for straggler in left:
            with contextlib.suppress(psutil.NoSuchProcess):
                straggler.kill()
        psutil.wait_procs(left, timeout=10)

    def output(self) -> str:
        """What the process has written to its log so far."""
        if self.log is None or not self.log.exists():
            return ""
        return self.log.read_text(errors="replace")

    def tail(self, lines: int = 30) -> str:
        return "\n".join(self.output().splitlines()[-lines:])

    def _tree(self) -> list[psutil.Process]:
        proc = psutil.Process(self.pid)
        return [proc, *proc.children(recursive=True)]

    def pids(self) -> list[int]:
        """The process and its children (none once it has gone)."""
        try:
            return [p.pid for p in self._tree()]
        except psutil.NoSuchProcess:
            return []

    def rss_mib(self) -> float:
        """Resident memory of the process and its children."""
        try:
            return sum(p.memory_info().rss for p in self._tree()) / 2**20
        except psutil.NoSuchProcess:
            return 0.0

    def cpu_s(self) -> float:
        """CPU seconds (user + system) of the process and its descendants, those alive and those
        reaped (a reaped child's time is its parent's ``children_*``; a live child's is not, so
        nothing counts twice). A descendant gone between the listing and its reading is passed
        over: before, one Spark Python worker ending there made the whole reading 0 (and a
        difference of two readings the process's whole life)."""
        try:
            tree = self._tree()
        except psutil.NoSuchProcess:
            return 0.0
        total = 0.0
        for proc in tree:
            try:
                t = proc.cpu_times()
            except psutil.NoSuchProcess:
                continue
            total += t.user + t.system + t.children_user + t.children_system
        return total
