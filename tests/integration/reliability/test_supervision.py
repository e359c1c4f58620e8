"""Scenario: every long-running process of the platform is SIGKILLed in turn and comes back on
its own.

The processes run exactly as `make up` runs them: ``infra/bin/app.sh start`` renders the
supervisord configuration and starts supervisord, here with ``SPORTSBOOK_VAR`` in the test's
temporary directory and the service URLs pointing at this module's own Kafka and Redis (and the
test database). Each process is then killed with SIGKILL — the Spark reducers, the uvicorn master,
one uvicorn worker, the feed, the Celery worker and Celery beat — and must be back (a new pid,
its heartbeat renewed by the new process) with ``/healthz`` green again, with no human action:
supervisord restarts the processes, uvicorn's master restarts its worker. Finally
``app.sh stop`` must leave no process of the stack behind.

The measured times are printed (``-s``) and recorded in docs/reliability.md.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import psutil
import pytest
import redis as redis_lib

from bench.harness import free_port
from store import keys
from tests.conftest import ROOT, wait_for
from tests.factories import market_create
from tests.integration.reliability.conftest import Stack

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True), pytest.mark.timeout(2400)]

APP = ROOT / "infra" / "bin" / "app.sh"
PROGRAMS = ("reducers", "web", "worker", "beat", "feed")
# The component whose heartbeat (read by /healthz) each program renews.
HEARTBEATS = {"reducers": "reducers", "worker": "celery", "beat": "celery", "feed": "feed"}
# Generous: two shared cores, Spark starting a JVM and its queries, other test sessions beside it.
START_TIMEOUT_S = 900
RECOVERY_TIMEOUT_S = 600


@dataclass
class Supervised:
    """The stack's processes under supervisord, started by app.sh with this environment."""

    stack: Stack
    env: dict[str, str]
    base: str
    # (pid, start time): a pid alone may have been reused by another process since.
    seen: set[tuple[int, float]] = field(default_factory=set)

    @property
    def conf(self) -> Path:
        return self.stack.var / "run" / "supervisord.conf"

    def app(self, action: str) -> str:
        result = subprocess.run(
            [str(APP), action], env=self.env, capture_output=True, text=True, timeout=600, check=False
        )
        assert result.returncode == 0, f"app.sh {action}: {result.stdout}{result.stderr}"
        return result.stdout

    def ctl(self, *args: str) -> str:
        result = subprocess.run(
            [str(ROOT / ".venv" / "bin" / "supervisorctl"), "-c", str(self.conf), *args],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        return result.stdout.strip()

    def supervisord_pid(self) -> int:
        return int((self.stack.var / "run" / "supervisord.pid").read_text())

    def running_pid(self, name: str) -> int | None:
        """The pid of ``name`` when supervisord reports it RUNNING."""
        words = self.ctl("status", name).split()
        if len(words) >= 4 and words[1] == "RUNNING" and words[2] == "pid":
            return int(words[3].rstrip(","))
        return None

    def all_running(self) -> bool:
        return all(self.running_pid(name) for name in PROGRAMS)

    def runs(self, name: str, pid: int) -> bool:
        return self.running_pid(name) == pid

    def spawned_pid(self, name: str, old: set[int]) -> int | None:
        """The pid of a process supervisord has started for ``name`` other than ``old``."""
        out = self.ctl("pid", name)
        pid = int(out) if out.isdigit() else 0
        return pid if pid and pid not in old else None

    def web_workers(self) -> list[int]:
        """uvicorn's worker processes, once there are as many as configured."""
        master = self.running_pid("web")
        if master is None:
            return []
        try:
            children = psutil.Process(master).children()
        except psutil.NoSuchProcess:
            return []
        workers = [c.pid for c in children if _is_spawned_worker(c)]
        return workers if len(workers) == int(self.env["WEB_WORKERS"]) else []

    def new_web_worker(self, old: set[int]) -> int | None:
        """A worker uvicorn's master started in place of ``old``, once the set is complete."""
        new = [w for w in self.web_workers() if w not in old]
        return new[0] if len(new) == 1 else None

    def remember_processes(self) -> None:
        """Note every process under supervisord, to check that none survives `app.sh stop`."""
        root = psutil.Process(self.supervisord_pid())
        self.seen.update((p.pid, p.create_time()) for p in [root, *root.children(recursive=True)])

    def heartbeat(self, component: str) -> int:
        client = redis_lib.Redis.from_url(self.stack.redis)
        raw = client.get(keys.heartbeat(component))
        return int(float(raw)) if raw is not None else 0

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.base}/healthz", timeout=10) as response:  # noqa: S310 - loopback
                return response.status == 200
        except (urllib.error.URLError, OSError):
            return False

    def leftovers(self) -> list[psutil.Process]:
        """Processes of this stack still running, Kafka and Redis (the test's own services) aside."""
        services = set()
        for name in ("kafka", "redis"):
            pidfile = self.stack.var / "run" / f"{name}.pid"
            if pidfile.exists():
                services.add(int(pidfile.read_text()))
        found = []
        for process in psutil.process_iter():
            if process.pid in services or process.pid == os.getpid():
                continue
            try:
                seen = (process.pid, process.create_time()) in self.seen
                ours = process.environ().get("SPORTSBOOK_VAR") == str(self.stack.var)
                if (seen or ours) and process.status() != psutil.STATUS_ZOMBIE:
                    found.append(process)
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
        return found


def _is_spawned_worker(process: psutil.Process) -> bool:
    try:
        return "spawn_main" in " ".join(process.cmdline())
    except psutil.NoSuchProcess:
        return False


@pytest.fixture
def supervised(stack: Stack) -> Iterator[Supervised]:
    for _ in range(20):  # open markets for the feed to move
        market_create()
    port = free_port()
    env = stack.env(
        WEB_HOST="127.0.0.1",
        WEB_PORT=str(port),
        WEB_WORKERS="2",
        DJANGO_ALLOWED_HOSTS="127.0.0.1,localhost",
        DJANGO_CSRF_TRUSTED_ORIGINS=f"http://127.0.0.1:{port}",
        FEED_RATE="10",
        FEED_MARKETS="20",
        CELERY_CONCURRENCY="1",
        SPARK_MASTER="local[2]",
        SPARK_TRIGGER_MODE="microbatch",
        SPARK_CHECKPOINT_DIR=str(stack.var / "checkpoints"),
        # The platform's processes alone: the monitoring's fixed ports belong to `make up`'s stack.
        MONITORING="0",
        SPARK_DRIVER_METRICS="off",
    )
    running = Supervised(stack, env, f"http://127.0.0.1:{port}")
    try:
        yield running
    finally:
        if running.conf.exists():
            subprocess.run([str(APP), "stop"], env=env, capture_output=True, timeout=600, check=False)
        for process in running.leftovers():  # never leave a process behind on the shared machine
            process.kill()


@dataclass
class Recovery:
    what: str
    pid: int
    back_s: float
    healthy_s: float


def kill_and_recover(
    supervised: Supervised, what: str, *, pid: int, new_pid: Callable[[], int | None], heartbeat: str | None
) -> Recovery:
    """SIGKILL ``pid``; wait for ``new_pid()`` to name its replacement, then for the heartbeat the
    new process renews (when it has one) and a green /healthz."""
    killed_at = time.monotonic()
    os.kill(pid, signal.SIGKILL)
    replacement = wait_for(new_pid, timeout=RECOVERY_TIMEOUT_S, interval=0.1, what=f"{what} to be back after SIGKILL")
    back_s = time.monotonic() - killed_at
    if heartbeat is not None:
        since = int(time.time()) + 1  # heartbeats are whole seconds: one written by the new process
        wait_for(
            lambda: supervised.heartbeat(heartbeat) >= since,
            timeout=RECOVERY_TIMEOUT_S,
            interval=0.5,
            what=f"the {heartbeat} heartbeat from the new {what} (pid {replacement})",
        )
    wait_for(supervised.healthy, timeout=RECOVERY_TIMEOUT_S, interval=0.5, what=f"/healthz green after {what}")
    supervised.remember_processes()
    return Recovery(what, replacement, round(back_s, 1), round(time.monotonic() - killed_at, 1))


def test_every_long_running_process_killed_comes_back_and_stop_leaves_nothing(supervised):
    started = time.monotonic()
    supervised.app("start")
    wait_for(supervised.healthy, timeout=START_TIMEOUT_S, interval=1, what="/healthz green after app.sh start")
    start_s = round(time.monotonic() - started, 1)
    # The reducers may report progress before supervisord counts them started (startsecs).
    wait_for(supervised.all_running, timeout=120, interval=1, what="every process RUNNING")
    supervised.remember_processes()
    pids = {name: supervised.running_pid(name) for name in PROGRAMS}
    assert supervised.app("start").strip() == ""
    socket = supervised.stack.var / "run" / "supervisord.sock"
    assert stat.S_IMODE(socket.stat().st_mode) == 0o700, "only the owner may talk to supervisord"
    for name in PROGRAMS:
        assert (supervised.stack.var / "log" / f"{name}.log").stat().st_size > 0, f"{name} logs nothing"
    assert {name: supervised.running_pid(name) for name in PROGRAMS} == pids, "a second start changes nothing"

    recoveries = []
    for name in PROGRAMS:
        pid = supervised.running_pid(name)
        assert pid is not None
        recovery = kill_and_recover(
            supervised,
            "uvicorn master" if name == "web" else name,
            pid=pid,
            new_pid=partial(supervised.spawned_pid, name, {pid}),
            heartbeat=HEARTBEATS.get(name),
        )
        # The replacement stayed up: supervisord counts it started, not retrying a crash loop.
        wait_for(partial(supervised.runs, name, recovery.pid), timeout=120, what=f"{name} RUNNING")
        recoveries.append(recovery)
        if name == "web":
            workers = wait_for(supervised.web_workers, timeout=120, what="uvicorn's two workers")
            recoveries.append(
                kill_and_recover(
                    supervised,
                    "uvicorn worker",
                    pid=workers[0],
                    new_pid=partial(supervised.new_web_worker, set(workers)),
                    heartbeat=None,
                )
            )

    log = (supervised.stack.var / "log" / "supervisord.log").read_text()
    for name in PROGRAMS:
        assert log.count(f"spawned: '{name}'") >= 2, f"supervisord.log does not show {name} restarted"
        assert f"exited: {name} (terminated by SIGKILL" in log

    stopping = time.monotonic()
    supervised.app("stop")
    stop_s = round(time.monotonic() - stopping, 1)
    left = supervised.leftovers()
    assert not left, f"left behind by app.sh stop: {[(p.pid, p.name()) for p in left]}"

    # supervisord itself killed: what it ran goes on unsupervised until the next app.sh stop ends it.
    supervised.app("start")
    wait_for(supervised.all_running, timeout=START_TIMEOUT_S, interval=1, what="every process RUNNING again")
    supervised.remember_processes()
    os.kill(supervised.supervisord_pid(), signal.SIGKILL)
    supervised.app("stop")
    left = supervised.leftovers()
    assert not left, f"left behind by a supervisord SIGKILLed: {[(p.pid, p.name()) for p in left]}"

    print(f"\napp.sh start to /healthz green: {start_s} s; app.sh stop: {stop_s} s")
    print("killed (SIGKILL)     new pid after    /healthz green (new heartbeat) after")
    for r in recoveries:
        print(f"{r.what:<20} {r.back_s:>8} s       {r.healthy_s:>8} s")
