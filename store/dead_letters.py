"""The dead-letter replay's ledger in Redis: which records were replayed, with which headers
(``reducers.dead_letters`` decides what a replay is; this is where it is remembered)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import orjson

from reducers.dead_letters import LEDGER_TTL_S
from store import keys


class ReplayLedger:
    """Replayed records, each by its digest, with the headers it was replayed with: the owner of
    ``keys.dead_letter_replayed``. Marked before the records are produced, so the reducer that
    fails on one again always finds its first failure."""

    def __init__(self, client: Any) -> None:
        self._redis = client

    def mark(self, records: Mapping[str, Sequence[tuple[str, bytes]]]) -> None:
        """Remember each digest's replay headers for ``LEDGER_TTL_S``."""
        if not records:
            return
        pipe = self._redis.pipeline(transaction=False)
        for digest, headers in records.items():
            body = {name: value.decode() for name, value in headers}
            pipe.set(keys.dead_letter_replayed(digest), orjson.dumps(body), ex=LEDGER_TTL_S)
        pipe.execute()

    def headers_of(self, digests: Iterable[str]) -> dict[str, list[tuple[str, bytes]]]:
        """The replay headers of each digest that was replayed (the others are left out)."""
        wanted = list(dict.fromkeys(digests))
        if not wanted:
            return {}
        found: dict[str, list[tuple[str, bytes]]] = {}
        for digest, raw in zip(wanted, self._redis.mget([keys.dead_letter_replayed(d) for d in wanted]), strict=True):
            if raw:
                found[digest] = [(name, str(value).encode()) for name, value in orjson.loads(raw).items()]
        return found
