"""Redis sink for market state: idempotent apply, then publish, in one atomic script.

Redis is written before anything is published, and an update whose sequence is not newer
than the stored one is neither stored nor published, so replays are harmless. When a market's
status changes (suspended, reopened, closed) an explicit status message goes out just before
the new state.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import redis

from reducers import keys
from reducers.prices import Conflated, encode_state, market_state, status_change

APPLY_IF_NEWER = """
local cur = redis.call('HGET', KEYS[1], 'seq')
if cur and tonumber(cur) >= tonumber(ARGV[1]) then
  return 0
end
local previous = redis.call('HGET', KEYS[1], 'status')
redis.call('HSET', KEYS[1], 'seq', ARGV[1], 'state', ARGV[2], 'status', ARGV[4])
if previous and previous ~= ARGV[4] then
  redis.call('PUBLISH', ARGV[3], ARGV[5])
end
redis.call('PUBLISH', ARGV[3], ARGV[2])
return 1
"""


class MarketStateSink:
    """Applies conflated price updates to Redis with one pipelined round trip per batch."""

    def __init__(self, client: redis.Redis) -> None:
        self._client = client
        self._script = client.register_script(APPLY_IF_NEWER)

    def table_statuses(self, market_ids: Sequence[int]) -> list[str | None]:
        """Each market's status in the markets table (``None`` when the table has no entry)."""
        pipe = self._client.pipeline(transaction=False)
        for market_id in market_ids:
            pipe.hget(keys.market_definition(market_id), "status")
        return [raw.decode() if raw is not None else None for raw in pipe.execute()]

    def apply(self, items: Sequence[Conflated]) -> dict[int, dict[str, Any]]:
        """Apply the items; return the states that were newer than the stored ones, by market."""
        if not items:
            return {}
        now = int(time.time() * 1000)
        statuses = self.table_statuses([item.update.market_id for item in items])
        pipe = self._client.pipeline(transaction=False)
        states = []
        for item, table_status in zip(items, statuses, strict=True):
            market_id = item.update.market_id
            state = market_state(item=item, reducer_ts=now, table_status=table_status)
            states.append(state)
            self._script(
                keys=[keys.market_state(market_id)],
                args=[
                    item.update.seq,
                    encode_state(state),
                    keys.market_channel(market_id),
                    state["status"],
                    encode_state(status_change(state=state)),
                ],
                client=pipe,
            )
        return {
            state["market_id"]: state for state, applied in zip(states, pipe.execute(), strict=True) if int(applied)
        }
