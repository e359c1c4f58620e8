"""What the backups page shows: PostgreSQL's newest backup and its WAL archive, in words."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from odds.core.backups import LATE, OFF, OK, UNKNOWN
from odds.core.metrics import backups_snapshot

LEVELS = {OK: "ok", LATE: "bad", OFF: "bad", UNKNOWN: "warn"}


def duration_text(seconds: float | None) -> str:
    """``42 s``, ``7 min``, ``3.5 h``, ``2.0 days``; a dash when unknown."""
    if seconds is None:
        return "—"
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 172800:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def size_text(size: int | None) -> str:
    """``512 B``, ``3.6 MiB``, ``1.2 GiB``; a dash when unknown."""
    if size is None:
        return "—"
    value = float(size)
    if value < 1024:
        return f"{value:.0f} B"
    for unit in ("KiB", "MiB"):
        value /= 1024
        if value < 1024:
            return f"{value:.1f} {unit}"
    return f"{value / 1024:.1f} GiB"


def _when(epoch_s: float | None) -> datetime | None:
    return datetime.fromtimestamp(epoch_s, tz=UTC) if epoch_s is not None else None


def backups_overview(*, now_s: float | None = None) -> dict[str, Any]:
    """The backup and archive tiles (each with its level and words) and their facts."""
    now_s = time.time() if now_s is None else now_s
    snapshot = backups_snapshot(now_ms=int(now_s * 1000))
    repository = snapshot.get("repository") or {}
    archive = snapshot.get("archive")
    backup_state = snapshot.get("backup", UNKNOWN)
    wal_state = snapshot.get("wal", UNKNOWN)
    backup_words = {
        OK: f"finished {duration_text(snapshot.get('backup_age_s'))} ago",
        LATE: f"finished {duration_text(snapshot.get('backup_age_s'))} ago: a new one is late",
        UNKNOWN: repository.get("error") or "no backup recorded yet",
    }[backup_state]
    if archive is None:
        wal_words = "the database cannot be read"
    else:
        waiting = archive["waiting_segments"]
        queue = (
            f"{waiting} segment{'' if waiting == 1 else 's'} waiting, the oldest for {duration_text(archive['lag_s'])}"
        )
        wal_words = {
            OK: queue if waiting else "every finished segment archived",
            LATE: queue,
            OFF: "PostgreSQL does not archive its WAL: no point-in-time recovery",
            UNKNOWN: "archiving, but its queue cannot be read (grant pg_monitor)",
        }[wal_state]
    return {
        "backup": {"state": backup_state, "level": LEVELS[backup_state], "words": backup_words},
        "wal": {"state": wal_state, "level": LEVELS[wal_state], "words": wal_words},
        "repository": {
            **repository,
            "newest_at": _when(repository.get("newest_stop")),
            "oldest_at": _when(repository.get("oldest_stop")),
            "read_at": _when(repository.get("read_at")),
            "took": duration_text(repository.get("newest_seconds")),
            "newest_size": size_text(repository.get("newest_bytes")),
            "repository_size": size_text(repository.get("repository_bytes")),
        },
        "archive": archive
        and {
            **archive,
            "last_archived_ago": duration_text(archive["last_archived_age_s"]),
            "last_failed_ago": duration_text(archive["last_failed_age_s"]),
            "lag": duration_text(archive["lag_s"]),
        },
    }
