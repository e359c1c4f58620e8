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


def _contracts_with(tmp_path: Path, module: str, text: str) -> subprocess.CompletedProcess[str]:
    """The project's own contracts over a copy of its packages with one module added."""
    import shutil

    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    for package in ("webapp", "odds", "spark", "store", "reducers"):
        shutil.copytree(
            ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("static", "templates", "__pycache__")
        )
    (tmp_path / module).write_text(text)
    return subprocess.run(
        [str(Path(sys.executable).with_name("lint-imports")), "--no-cache"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_reducer_importing_the_web_framework_breaks_the_projects_contracts(tmp_path):
    result = _contracts_with(tmp_path, "reducers/leak.py", "from django.conf import settings\n")
    assert result.returncode != 0
    assert "reducers.leak -> django" in result.stdout


def test_a_reducer_reading_redis_breaks_the_projects_contracts(tmp_path):
    """Nothing in reducers/ may reach the store (or any I/O client): a decision returns effects."""
    result = _contracts_with(tmp_path, "reducers/leak.py", "from store.markets import MarketStore\n")
    assert result.returncode != 0
    assert "reducers.leak -> store.markets" in result.stdout


def test_a_site_module_spelling_a_key_breaks_the_projects_contracts(tmp_path):
    """Key and channel names are the store's own: a page, a service or a Spark job that names a
    key itself breaks a contract, while reading through a store module is allowed."""
    result = _contracts_with(tmp_path, "odds/core/leak.py", "from store import keys\n")
    assert result.returncode != 0
    assert "odds.core.leak -> store.keys" in result.stdout
    assert "Redis key and channel names are the store's own: nothing outside it spells one BROKEN" in result.stdout


def test_the_spark_jobs_reading_through_the_store_keep_the_key_contract(tmp_path):
    result = _contracts_with(tmp_path, "spark/leak.py", "from store.pipeline import heartbeat_beat\n")
    assert result.returncode == 0, result.stdout[-3000:]
