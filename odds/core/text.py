"""What a client's text may spell: ids and decimals, read in ASCII digits only.

The API, the trading pages and the admin read ids and prices typed or sent by a client through
these, so each refuses the same input in the same way.
"""

from __future__ import annotations

import re

# Every id is a PostgreSQL bigint; the JSON edge refuses integers outside the signed 64-bit range.
MIN_INT, MAX_INT = -(2**63), 2**63 - 1
MAX_ID = MAX_INT
DECIMAL_MAX_LENGTH = 32
# Digits with an optional fraction, ASCII only: Decimal() would also take " 1e3 ", "1_000", "+5"
# and other scripts' digits, none of which a client means as money.
DECIMAL_TEXT = re.compile(r"-?[0-9]+(\.[0-9]+)?", re.ASCII)
# A positive id as a client writes it: ASCII digits only (int() would also read Arabic-Indic or
# fullwidth digits as 12), no sign, no leading zero, at most 19 digits (a PostgreSQL bigint).
ID_TEXT = re.compile(r"[1-9][0-9]{0,18}", re.ASCII)


def id_from_text(*, text: str) -> int | None:
    """The positive 64-bit integer ``text`` spells in ASCII digits, or None for anything else."""
    if not ID_TEXT.fullmatch(text):
        return None
    value = int(text)
    return value if value <= MAX_INT else None
