"""The backup scheduler: full backups of PostgreSQL on an interval, and the repository's state
kept in Redis for ``/metrics`` and the ops pages (``odds.core.backups``).

pgBackRest itself runs through ``infra/bin/backup.sh``, which owns its configuration and runs it
as the ``postgres`` user; this module decides when, and records what it found.
"""

from __future__ import annotations

import logging
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import orjson

from odds.core.backups import backup_status_write, backup_summary

log = logging.getLogger(__name__)

BACKUP_SH = Path(__file__).resolve().parents[3] / "infra" / "bin" / "backup.sh"
# A full backup of a large database takes long; the scheduler waits for it.
FULL_TIMEOUT_S = 24 * 3600
Runner = Callable[[Sequence[str], float], str]


class BackupFailed(Exception):
    pass


def backup_script(args: Sequence[str], timeout_s: float) -> str:
    """Run ``infra/bin/backup.sh`` with ``args``; its standard output, or ``BackupFailed`` with its error."""
    done = subprocess.run([str(BACKUP_SH), *args], capture_output=True, text=True, timeout=timeout_s, check=False)
    if done.returncode != 0:
        raise BackupFailed((done.stderr or done.stdout).strip()[-500:] or f"exit {done.returncode}")
    return done.stdout


# pgBackRest's status codes of a stanza that can take a backup: "ok", "no valid backups".
STANZA_READY = (0, 2)


def backup_due(summary: dict[str, Any], *, now_s: float, interval_s: float) -> bool:
    """A full backup is due when the stanza exists (``postgres.sh`` creates it for the project's
    own cluster, never for an external one) and has none, or its newest full one is older than
    the interval."""
    if summary["status_code"] not in STANZA_READY:
        return False
    newest = summary.get("newest_full_stop")
    return newest is None or now_s - newest >= interval_s


def backups_tick(
    *, interval_s: float, run: Runner = backup_script, now: Callable[[], float] = time.time
) -> dict[str, Any]:
    """Read the repository, take a full backup when one is due, record the state in Redis."""
    status: dict[str, Any]
    try:
        summary = backup_summary(orjson.loads(run(["info"], 120)), now_s=now())
        if backup_due(summary, now_s=now(), interval_s=interval_s):
            log.info("full backup due (newest full: %s)", summary.get("newest_full_stop"))
            run(["full"], FULL_TIMEOUT_S)
            summary = backup_summary(orjson.loads(run(["info"], 120)), now_s=now())
        error = "" if summary["status_code"] in STANZA_READY else f"no backups: the stanza says {summary['status']}"
        status = {**summary, "error": error}
    except (BackupFailed, subprocess.TimeoutExpired, orjson.JSONDecodeError) as exc:
        log.warning("backups: %s", exc)
        status = {"backups": 0, "repository_bytes": 0, "read_at": now(), "error": str(exc)[:500]}
    backup_status_write(status)
    return status
