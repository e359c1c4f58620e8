"""The database functions of bet placement, each version a ``.sql`` file that a migration loads
whole (``<function>.v<n>.sql``, never edited once a migration loads it; a change is the next
version and a migration of its own).

``CURRENT`` names the version each function runs at; a test compares the function installed
in the database with that file (tests/integration/betting/test_placement_sql.py).
"""

from __future__ import annotations

import re
from pathlib import Path

DIRECTORY = Path(__file__).resolve().parent

# The version of each function the newest migration installs.
CURRENT = {
    "sb_bet_json": "sb_bet_json.v1.sql",
    "sb_bet_place": "sb_bet_place.v12.sql",
}

_BODY = re.compile(r"\$\$(.*)\$\$", re.DOTALL)


def sql_file(name: str) -> str:
    """The text of one of this directory's ``.sql`` files, whole: one statement for ``RunSQL``."""
    return (DIRECTORY / name).read_text(encoding="utf-8")


def function_body(text: str) -> str:
    """The body of the function a file creates (what PostgreSQL keeps as ``pg_proc.prosrc``)."""
    found = _BODY.search(text)
    if found is None:
        raise ValueError("no $$-quoted function body")
    return found.group(1)
