"""A PostgreSQL cluster of a test's own, run with the project's scripts (``infra/bin/postgres.sh``,
``backup.sh``) in a temporary directory on free loopback ports: WAL archived into its own
pgBackRest repository, never the shared server. Used by the restore drill and the backup tests.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from bench.harness import ROOT, free_port

BIN = ROOT / "infra" / "bin"


class OwnPostgres:
    """A test's own PostgreSQL: its var directory, ports (its own and a restored copy's) and the
    commands run against it, each timed into ``figures``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.var = root / "var"
        self.port = free_port()
        self.restored = root / "restored"
        self.restored_port = free_port()
        self.figures: dict[str, float] = {}

    def url(self, port: int) -> str:
        return f"postgres://sportsbook:sportsbook@127.0.0.1:{port}/sportsbook"

    def env(self, port: int | None = None) -> dict[str, str]:
        return {
            **os.environ,
            "SPORTSBOOK_VAR": str(self.var),
            "DATABASE_URL": self.url(port or self.port),
            "BACKUP_ARCHIVE_TIMEOUT_S": "60",
            "DJANGO_SETTINGS_MODULE": "webapp.settings",
        }

    def run(self, what: str, args: list[str], *, port: int | None = None) -> str:
        started = time.monotonic()
        done = subprocess.run(args, cwd=ROOT, env=self.env(port), capture_output=True, text=True, timeout=300)
        self.figures[what] = round(time.monotonic() - started, 2)
        assert done.returncode == 0, f"{what} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
        return done.stdout

    def manage(self, what: str, *args: str, port: int | None = None) -> str:
        return self.run(what, [sys.executable, "manage.py", *args], port=port)

    def phase(self, what: str, *args: str, port: int | None = None) -> dict[str, Any]:
        out = self.run(what, [sys.executable, "-m", "tests.integration.reliability.drill", *args], port=port)
        return orjson.loads(out.strip().splitlines()[-1])

    def sql(self, query: str, *, port: int | None = None, data: Path | None = None) -> str:
        host = str(data or self.var / "postgres")
        psql = ["runuser", "-u", "postgres", "--", "psql", "-h", host, "-p", str(port or self.port)]
        done = subprocess.run(
            [*psql, "-d", "sportsbook", "-qtAc", query],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    def stop(self) -> None:
        pg_ctl = next(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"))
        for data in (self.restored, self.var / "postgres"):
            if (data / "postmaster.pid").exists():
                subprocess.run(
                    ["runuser", "-u", "postgres", "--", str(pg_ctl), "-D", str(data), "-m", "immediate", "-w", "stop"],
                    capture_output=True,
                    timeout=60,
                )


@contextlib.contextmanager
def own_postgres() -> Iterator[OwnPostgres]:
    """A temporary directory for a cluster; every cluster started in it is stopped at the end."""
    if shutil.which("pgbackrest") is None:
        pytest.fail("pgBackRest is missing: make deps installs it")
    # Not pytest's tmp_path: PostgreSQL runs as the 'postgres' user, who cannot enter root's.
    root = Path(tempfile.mkdtemp(prefix="own-postgres-", dir="/tmp"))
    root.chmod(0o755)
    cluster = OwnPostgres(root)
    try:
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)
