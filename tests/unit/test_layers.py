"""The package layers of pyproject.toml ([tool.importlinter]) hold: the reducers' decisions stay
pure, and the Spark jobs and the web site build on them without importing each other."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _lint_imports(*args: str) -> subprocess.CompletedProcess[str]:
    command = [str(Path(sys.executable).with_name("lint-imports")), "--no-cache", *args]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_every_layer_contract_is_kept():
    result = _lint_imports()
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "0 broken" in result.stdout


def test_a_reducer_importing_the_web_framework_breaks_the_projects_contracts(tmp_path):
    """The project's own contracts over a copy of its packages with one forbidden import."""
    import shutil

    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    for package in ("webapp", "odds", "spark", "store", "reducers"):
        shutil.copytree(
            ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("static", "templates", "__pycache__")
        )
    (tmp_path / "reducers" / "leak.py").write_text("from django.conf import settings\n")
    result = subprocess.run(
        [str(Path(sys.executable).with_name("lint-imports")), "--no-cache"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode != 0
    assert "reducers.leak -> django" in result.stdout


def test_a_reducer_reading_redis_breaks_the_projects_contracts(tmp_path):
    """Nothing in reducers/ may reach the store (or any I/O client): a decision returns effects."""
    import shutil

    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    for package in ("webapp", "odds", "spark", "store", "reducers"):
        shutil.copytree(
            ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("static", "templates", "__pycache__")
        )
    (tmp_path / "reducers" / "leak.py").write_text("from store.markets import MarketStore\n")
    result = subprocess.run(
        [str(Path(sys.executable).with_name("lint-imports")), "--no-cache"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode != 0
    assert "reducers.leak -> store.markets" in result.stdout
