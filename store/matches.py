"""Match states in Redis: the newest state of each event (``keys.match_state``), written here
by the match-state reducer and published on the event's public channel (``keys.match_channel``),
read here by the websocket edge and the pages."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from reducers.frames import MatchMessage
from reducers.matchstate import encode_match
from store import keys
from store.markets import Pipeline

# Stores the state when its sequence is higher than the stored one and publishes it on the
# event's public channel (ARGV[4]), adding the event to the fan-out journal (KEYS[2]) in the same
# step; returns 1 when stored.
APPLY_NEWER = """
local stored = redis.call('HGET', KEYS[1], 'seq')
if stored and tonumber(stored) >= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'seq', ARGV[1], 'state', ARGV[2])
redis.call('PUBLISH', ARGV[4], ARGV[2])
redis.call('SADD', KEYS[2], ARGV[3])
return 1
"""


class MatchStore:
    """The match states' writes, on a Redis client (redis-py's, or anything with its interface)."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self._apply = client.register_script(APPLY_NEWER)

    def apply(self, messages: Sequence[MatchMessage], *, journal: str) -> list[bool]:
        """Store and publish each message whose sequence is newer than its event's stored one,
        adding its event to the fan-out journal ``journal`` in the same step; in one round trip.
        Returns, per message, whether it was applied."""
        if not messages:
            return []
        pipe = self._client.pipeline(transaction=False)
        for message in messages:
            self._apply(
                keys=[keys.match_state(message["event_id"]), journal],
                args=[
                    message["seq"],
                    encode_match(message),
                    message["event_id"],
                    keys.match_channel(message["event_id"]),
                ],
                client=pipe,
            )
        return [bool(int(stored)) for stored in pipe.execute()]


def queue_matches(pipe: Pipeline, event_ids: Sequence[int]) -> None:
    """Queue on ``pipe`` the reads of each event's stored match state; ``raw_matches`` reads the
    replies."""
    for event_id in event_ids:
        pipe.hget(keys.match_state(event_id), "state")


def raw_matches(event_ids: Sequence[int], replies: Sequence[Any]) -> dict[int, bytes]:
    """The encoded match state of each event that has one, from the replies of ``queue_matches``."""
    return {event_id: raw for event_id, raw in zip(event_ids, replies, strict=True) if raw is not None}


def match_channels(event_ids: Sequence[int]) -> list[str]:
    """The public pub-sub channels of the events' match states."""
    return [keys.match_channel(event_id) for event_id in event_ids]
