"""The state of PostgreSQL's backups and WAL archive, for ``/metrics`` and the ops pages.

The backups are pgBackRest's (infra/bin/backup.sh). The backup scheduler (``manage.py
run_backups``) reads the repository and keeps what it found in Redis (``store.backups``),
so every web process on any host reads the same figures without access to the repository. The
archive's progress is PostgreSQL's own (``pg_stat_archiver`` and the archive status directory,
which the ``pg_monitor`` role may read), read at each request.
"""

from __future__ import annotations

import time
from typing import Any

from odds.core.connections import redis_shared
from store import backups as backup_store

LATE, OK, UNKNOWN, OFF = "late", "ok", "unknown", "off"


def backup_summary(info: list[dict[str, Any]], *, now_s: float) -> dict[str, Any]:
    """What ``pgbackrest info --output=json`` says of the stanza: its newest backup (and newest
    full one), how many it keeps, their size in the repository, the archived WAL range."""
    stanza = info[0] if info else {}
    backups = sorted(stanza.get("backup", []), key=lambda b: b["timestamp"]["stop"])
    archive = (stanza.get("archive") or [{}])[-1]
    summary: dict[str, Any] = {
        "stanza": stanza.get("name", ""),
        "status": stanza.get("status", {}).get("message", "no stanza"),
        "status_code": int(stanza.get("status", {}).get("code", 1)),
        "backups": len(backups),
        "repository_bytes": sum(int(b["info"]["repository"]["delta"]) for b in backups),
        "wal_min": archive.get("min"),
        "wal_max": archive.get("max"),
        "read_at": now_s,
    }
    if backups:
        newest = backups[-1]
        summary.update(
            newest_label=newest["label"],
            newest_type=newest["type"],
            newest_stop=int(newest["timestamp"]["stop"]),
            newest_seconds=int(newest["timestamp"]["stop"]) - int(newest["timestamp"]["start"]),
            newest_bytes=int(newest["info"]["size"]),
            oldest_stop=int(backups[0]["timestamp"]["stop"]),
        )
        fulls = [b for b in backups if b["type"] == "full"]
        if fulls:
            summary["newest_full_stop"] = int(fulls[-1]["timestamp"]["stop"])
    return summary


def backup_status_write(status: dict[str, Any]) -> None:
    """Keep what the check found for every process's ``/metrics`` and ops page."""
    backup_store.backup_status_write(redis_shared(), status)


def backup_status_read() -> dict[str, Any] | None:
    """What the last check found, ``None`` before the first."""
    return backup_store.backup_status_read(redis_shared())


ARCHIVER_SQL = """
SELECT current_setting('archive_mode'), archived_count, failed_count, last_archived_wal,
       extract(epoch FROM last_archived_time), last_failed_wal, extract(epoch FROM last_failed_time),
       has_function_privilege('pg_catalog.pg_ls_archive_statusdir()', 'execute')
FROM pg_stat_archiver
"""
# Segments finished and waiting for the archiver, and when the oldest was finished.
WAITING_SQL = """
SELECT count(*), extract(epoch FROM min(modification))
FROM pg_ls_archive_statusdir() WHERE name LIKE '%.ready'
"""


def wal_archive_status(cursor: Any, *, now_s: float | None = None) -> dict[str, Any]:
    """The archiver's figures: whether it runs, segments archived and failed, and its lag: how
    long the oldest finished segment has waited to be archived (0 when none waits; ``None``
    when the status directory cannot be read)."""
    now_s = time.time() if now_s is None else now_s
    cursor.execute(ARCHIVER_SQL)
    mode, archived, failed, last_wal, last_at, failed_wal, failed_at, can_list = cursor.fetchone()
    waiting: int | None = None
    lag_s: float | None = None
    if can_list:
        cursor.execute(WAITING_SQL)
        count, oldest = cursor.fetchone()
        waiting = int(count)
        lag_s = round(max(0.0, now_s - float(oldest)), 1) if waiting and oldest is not None else 0.0
    return {
        "archiving": mode in ("on", "always"),
        "archived": int(archived),
        "failed": int(failed),
        "last_archived_wal": last_wal,
        "last_archived_age_s": round(now_s - float(last_at), 1) if last_at is not None else None,
        "last_failed_wal": failed_wal,
        "last_failed_age_s": round(now_s - float(failed_at), 1) if failed_at is not None else None,
        "waiting_segments": waiting,
        "lag_s": lag_s,
    }


def backup_verdicts(
    *,
    backups: dict[str, Any] | None,
    archive: dict[str, Any],
    now_s: float,
    full_interval_s: float,
    lag_objective_s: float,
) -> dict[str, Any]:
    """How the newest backup's age and the archive's lag stand against their objectives."""
    age = now_s - backups["newest_stop"] if backups and "newest_stop" in backups else None
    backup = UNKNOWN if age is None else (LATE if age > full_interval_s + 3600 else OK)
    if not archive["archiving"]:
        wal = OFF
    elif archive["lag_s"] is None:
        wal = UNKNOWN
    else:
        wal = LATE if archive["lag_s"] > lag_objective_s else OK
    return {"backup_age_s": None if age is None else round(age, 1), "backup": backup, "wal": wal}
