"""The process-restart exporter (webapp/process_metrics.py) under a real supervisord: a process
that keeps exiting and one that never starts are counted, each by its kind, however briefly they
ran; a process that runs is up and counts nothing."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from bench.harness import free_port
from tests.conftest import ROOT, wait_for

pytestmark = [pytest.mark.timeout(120)]

CONF = """
[unix_http_server]
file={tmp}/supervisord.sock
chmod=0700

[supervisord]
logfile={tmp}/supervisord.log
pidfile={tmp}/supervisord.pid
nodaemon=true

[rpcinterface:supervisor]
supervisor.rpcinterface_factory = supervisor.rpcinterface:make_main_rpcinterface

[supervisorctl]
serverurl=unix://{tmp}/supervisord.sock

[eventlistener:processes]
command={python} -m webapp.process_metrics --listen 127.0.0.1:{port} --supervisor unix://{tmp}/supervisord.sock
events=PROCESS_STATE
priority=1
directory={root}
stderr_logfile={tmp}/processes.log

; runs past startsecs, then exits: an unplanned exit each time
[program:crasher]
command=/bin/sh -c "sleep 1.2; exit 3"
startsecs=1
autorestart=true
startretries=100

; exits before startsecs: a failed start each time
[program:flaky]
command=/bin/sh -c "exit 1"
startsecs=1
autorestart=true
startretries=100

[program:steady]
command=/bin/sleep 600
startsecs=1
autorestart=true
"""


@pytest.fixture
def supervised(tmp_path: Path) -> Iterator[str]:
    port = free_port()
    conf = tmp_path / "supervisord.conf"
    conf.write_text(CONF.format(tmp=tmp_path, python=sys.executable, port=port, root=ROOT))
    process = subprocess.Popen(
        [str(ROOT / ".venv" / "bin" / "supervisord"), "-c", str(conf)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield f"http://127.0.0.1:{port}/metrics"
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


def samples(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    try:
        with urllib.request.urlopen(url, timeout=2) as answer:  # noqa: S310 - loopback
            text = answer.read().decode()
    except OSError:
        return {}
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def restarts(found: dict, process: str, kind: str) -> float:
    return found.get(("sportsbook_process_restarts_total", (("kind", kind), ("process", process))), 0.0)


def test_every_exit_and_failed_start_is_counted_by_process_and_kind(supervised):
    def counted() -> dict | None:
        found = samples(supervised)
        enough = restarts(found, "crasher", "exited") >= 2 and restarts(found, "flaky", "failed_start") >= 3
        return found if enough else None

    found = wait_for(counted, timeout=60, interval=0.5, what="exits and failed starts counted")
    assert restarts(found, "crasher", "failed_start") == 0
    assert restarts(found, "flaky", "exited") == 0
    assert restarts(found, "steady", "exited") == restarts(found, "steady", "failed_start") == 0
    assert found[("sportsbook_process_up", (("process", "steady"),))] == 1
    assert ("sportsbook_process_up", (("process", "processes"),)) not in found


def test_a_process_that_runs_on_is_up_and_counted_at_zero(supervised):
    """Also those the listener found running when it started: it asks supervisord for them."""
    found = wait_for(
        lambda: (s := samples(supervised)).get(("sportsbook_process_up", (("process", "steady"),))) == 1 and s,
        timeout=30,
        what="steady up",
    )
    time.sleep(1.5)
    found = samples(supervised)
    assert ("sportsbook_process_restarts_total", (("kind", "exited"), ("process", "steady"))) in found
    assert restarts(found, "steady", "exited") == 0
