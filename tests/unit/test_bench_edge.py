"""The edge benchmark's choice of each path's figure: the highest rate within the p99 bound, and
only from a run that delivered what was offered."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench.edge import K6Run, edge_best, k6_start_at, k6_window


def _row(rate: float, delivered: int, offered: int, p99: float, errors: int = 0) -> dict:
    return {
        "edge": "hub",
        "rate": rate,
        "deliveries_per_s": delivered,
        "expected_per_s": offered,
        "p99_ms": p99,
        "client_errors": errors,
    }


def test_the_highest_rate_within_the_p99_bound_is_the_figure():
    rows = [_row(50, 970, 970, 30), _row(250, 4_800, 4_850, 45), _row(500, 9_000, 9_600, 260)]
    best = edge_best(rows, "hub")
    assert (best["rate"], best["within_p99"]) == (250, True)


def test_a_run_whose_clients_lost_their_sockets_or_most_frames_does_not_count():
    rows = [
        _row(50, 970, 970, 30),
        _row(250, 1_050, 4_870, 26, errors=780),  # three in four sockets refused: fast for the rest
        _row(500, 2_700, 9_600, 34),  # a fraction of what was offered
    ]
    assert edge_best(rows, "hub")["rate"] == 50


def test_with_no_run_within_the_bound_the_lowest_rate_is_flagged():
    rows = [_row(50, 960, 960, 263), _row(100, 1_850, 1_920, 307)]
    best = edge_best(rows, "hub")
    assert (best["rate"], best["within_p99"]) == (50, False)


def _k6(tmp_path: Path, script: str) -> K6Run:
    process = subprocess.Popen([sys.executable, "-c", script], start_new_session=True)
    return K6Run(process, tmp_path / "summary.json", tmp_path / "k6.log")


def test_the_source_starts_when_k6_s_setup_says_not_when_k6_was_launched(tmp_path: Path):
    """k6 readies its users before setup() logs the start; the start is read from that line."""
    log = tmp_path / "k6.log"
    log.write_text('time="2026-12-03T12:00:00Z" level=info msg="start_at 1764763200123" source=console\n')
    k6 = _k6(tmp_path, "import time; time.sleep(5)")
    try:
        assert k6_start_at(k6, timeout=5) == pytest.approx(1764763200.123)
    finally:
        k6.process.kill()
        k6.process.wait()


def test_k6_exiting_before_its_users_are_ready_is_an_error_not_a_wait(tmp_path: Path):
    """(A wait to the end would raise TimeoutError instead.)"""
    k6 = _k6(tmp_path, "raise SystemExit(3)")
    with pytest.raises(RuntimeError, match="status 3"):
        k6_start_at(k6, timeout=600)


def test_a_k6_run_s_folder_is_removed_once_its_summary_is_read(tmp_path: Path):
    """Every row of the edge and sockets stages made a folder of its own and left it behind."""
    folder = tmp_path / "sportsbook-k6-run"
    folder.mkdir()
    (folder / "watch.json").write_text("[[1, 2]]")
    (folder / "k6.log").write_text(f'msg="start_at {int(time.time() * 1000)}"\n')
    summary = json.dumps({"received": 10})
    k6 = _k6(folder, f"import pathlib; pathlib.Path({str(folder / 'summary.json')!r}).write_text({summary!r})")
    args = argparse.Namespace(clients=1, warmup=0.0, duration=0.0)
    generated, server_cpu = k6_window(k6, args, os.getpid(), {}, start=None, at_start=None)
    assert generated["received"] == 10
    assert server_cpu >= 0
    assert not folder.exists()
