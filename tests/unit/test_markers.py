"""Each group of tests runs alone by its marker (``pytest -m reliability``), and the marker
follows the folder, so a test filed in a group's folder is in that group."""

from __future__ import annotations

import re
import subprocess
import sys

from bench.harness import ROOT
from tests.conftest import groups_of

TESTS = ROOT / "tests"


def test_the_group_of_a_test_is_its_folder_or_a_benchmark():
    assert groups_of(TESTS / "unit" / "test_rules.py") == ["unit"]
    assert groups_of(TESTS / "integration" / "reliability" / "test_money.py") == ["reliability"]
    assert groups_of(TESTS / "integration" / "security" / "test_csrf.py") == ["security"]
    assert groups_of(TESTS / "integration" / "test_bench_quick.py") == ["bench", "load"]
    assert groups_of(TESTS / "integration" / "test_soak.py") == ["bench", "load"]
    assert groups_of(TESTS / "integration" / "test_bench_bets.py") == ["bench"]
    assert groups_of(TESTS / "integration" / "streaming" / "test_streams.py") == ["streaming"]
    assert groups_of(TESTS / "integration" / "test_domain_apps.py") == []


def _collect(*args: str) -> subprocess.CompletedProcess[str]:
    """``pytest --collect-only -q`` with ``args`` as `make test` would run it; it must succeed."""
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def test_a_group_marker_selects_its_folder_and_nothing_else():
    folder = "tests/integration/reliability/"
    paths = [folder, "tests/integration/ops/test_healthz.py", "tests/unit/test_rules.py"]
    result = _collect("-m", "reliability", *paths)
    picked = [line for line in result.stdout.splitlines() if "::" in line]
    assert len(picked) > 10
    assert [test for test in picked if not test.startswith(folder)] == []


def test_make_test_leaves_the_loads_to_make_bench_check():
    # The default selection, as `make test` runs it: the loads are deselected (by pyproject's
    # addopts), a benchmark at test size that is not a load is still collected.
    paths = ["tests/integration/test_bench_quick.py", "tests/integration/test_soak.py"]
    paths.append("tests/integration/test_bench_bets.py")
    result = _collect(*paths)
    picked = {line.split("::")[0] for line in result.stdout.splitlines() if "::" in line}
    assert picked == {"tests/integration/test_bench_bets.py"}
    deselected = re.search(r"(\d+) deselected", result.stdout)
    assert deselected is not None, result.stdout
    assert int(deselected.group(1)) >= 3  # the quick benchmark's test and the soak's two
