"""Per-market source sequence numbers, shared by the feed and trader overrides."""

from __future__ import annotations

import redis

from store import keys


def sequences_next(client: redis.Redis, market_ids: list[int]) -> list[int]:
    """Hand out the next per-market sequence numbers (one Redis round trip)."""
    pipe = client.pipeline(transaction=False)
    for market_id in market_ids:
        pipe.hincrby(keys.source_sequences(), str(market_id), 1)
    return [int(s) for s in pipe.execute()]
