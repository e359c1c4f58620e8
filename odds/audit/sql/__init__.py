"""The audit log's database function, a ``.sql`` file a migration loads whole (never edited once
loaded; a change is the next version and a migration of its own). ``CURRENT`` names the version
installed; a test compares the installed function with that file."""

from __future__ import annotations

from pathlib import Path

DIRECTORY = Path(__file__).resolve().parent

CURRENT = {"sb_audit_append_only": "sb_audit_append_only.v1.sql"}


def sql_file(name: str) -> str:
    """The text of one of this directory's ``.sql`` files, whole: one statement for ``RunSQL``."""
    return (DIRECTORY / name).read_text(encoding="utf-8")
