"""What the backup check last found in the repository, kept in Redis for every web process's
``/metrics`` and ops page (``keys.backup_status``: one JSON string)."""

from __future__ import annotations

from typing import Any

import orjson

from store import keys


def backup_status_write(client: Any, status: dict[str, Any]) -> None:
    """Keep ``status`` as the repository's latest summary, replacing the one before."""
    client.set(keys.backup_status(), orjson.dumps(status))


def backup_status_read(client: Any) -> dict[str, Any] | None:
    """The repository's latest summary, or ``None`` before the first check."""
    raw = client.get(keys.backup_status())
    return orjson.loads(raw) if raw else None
