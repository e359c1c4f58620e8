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
    for package in ("webapp", "odds", "spark", "reducers"):
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


def test_every_reducers_module_but_the_store_the_key_names_and_the_connections_is_a_decision_the_contract_names():
    """A new module in reducers/ must be named in the contract that keeps decisions off the
    store (or be the store, the key names, or the one place connections are opened)."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    (contract,) = [c for c in config if c.get("forbidden_modules") == ["reducers.store"]]
    modules = {
        f"reducers.{path.stem}"
        for path in (ROOT / "reducers").glob("*.py")
        if path.stem not in ("__init__", "store", "keys", "topics", "connections")
    }
    assert set(contract["source_modules"]) == modules
