"""Redis sink for market state: idempotent apply, then publish, in one atomic script.

Redis is written before anything is published, and an update whose sequence is not newer
than the stored one is neither stored nor published, so replays are harmless.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import redis

from reducers import keys
from reducers.prices import Conflated, encode_state, market_state

APPLY_IF_NEWER = """
local cur = redis.call('HGET', KEYS[1], 'seq')
if cur and tonumber(cur) >= tonumber(ARGV[1]) then
  return 0
end
redis.call('HSET', KEYS[1], 'seq', ARGV[1], 'state', ARGV[2])
redis.call('PUBLISH', ARGV[3], ARGV[2])
return 1
"""


class MarketStateSink:
    """Applies conflated price updates to Redis with one pipelined round trip per batch."""

    def __init__(self, client: redis.Redis) -> None:
        self._client = client
        self._script = client.register_script(APPLY_IF_NEWER)

    def apply(self, items: Sequence[Conflated]) -> int:
        """Apply the items; return how many were newer than the stored state."""
        if not items:
            return 0
        now = int(time.time() * 1000)
        pipe = self._client.pipeline(transaction=False)
        for item in items:
            market_id = item.update.market_id
            payload = encode_state(market_state(item=item, reducer_ts=now))
            self._script(
                keys=[keys.market_state(market_id)],
                args=[item.update.seq, payload, keys.market_channel(market_id)],
                client=pipe,
            )
        return sum(int(r) for r in pipe.execute())
