"""Match states in Redis: the newest state of each event (``keys.match_state``), written by the
match-state reducer, read here by the websocket edge and the pages."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from store import keys
from store.markets import Pipeline


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
