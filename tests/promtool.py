"""``promtool check metrics``, Prometheus' own linter of an exposition, on text the tests give it."""

from __future__ import annotations

import shutil
import subprocess

import pytest


def promtool_check(exposition: bytes) -> subprocess.CompletedProcess[str]:
    """Run ``promtool check metrics`` on ``exposition`` (its standard input). promtool is required,
    never skipped: ``make deps`` installs it (Debian's ``prometheus``)."""
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.fail("promtool is not installed: `make deps` (infra/bin/deps.sh system) installs Debian's prometheus")
    return subprocess.run(
        [promtool, "check", "metrics"],
        input=exposition.decode(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
