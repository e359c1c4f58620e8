"""Subscriber channels in Redis: the two maps, the channel's spec and status, and its frames.

Everything a reducer knows about subscriptions lives here, in Redis, so a restarted or rescaled
reducer resumes every subscription where it was. What a command or a change of states does is
decided in ``reducers.channels``; this store reads what a decision needs and executes the
effects it returns. Frames are stamped with the channel's next
sequence number, kept in a short log for resume, and published, in one script, so sequence
numbers on a channel have no gaps and no duplicates.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping
from typing import Any

import orjson
import redis

from reducers import frames, keys
from reducers.channels import (
    Create,
    Effect,
    QueryMember,
    Remove,
    SaveSpec,
    SendImage,
    SetMarkets,
    Stream,
    command_decision,
    context_markets,
    fan_out_routes,
    match_routes,
    query_refresh_decision,
)
from reducers.frames import MarketFrame, MatchMessage
from reducers.prices import state_is_held
from reducers.schemas import InvalidRecord
from reducers.subscriptions import (
    ENDED_CHANNEL_KEEP_S,
    StreamCommand,
    SubscriptionSpec,
    ended_frame,
    query_matches,
    spec_from_json,
)
from reducers.views import match_frame, view_frame
from store.markets import MEMBERS, MarketStore, per_market

log = logging.getLogger("store.channels")
# The resume log keeps at most LOG_SIZE frames and at most LOG_MAX_BYTES of them, the oldest
# dropped first (the newest frame always stays): resync images of hundreds of markets are large,
# and a punter asking for many must not grow Redis without bound. A resume from further back
# than the log reaches gets a resync image.
LOG_SIZE = 256
LOG_MAX_BYTES = 512 * 1024

# The log's size in bytes is kept in the meta hash (``logbytes``): Redis cannot sum a list's
# element lengths without reading it. A log found with one frame (new, or deleted meanwhile)
# restarts the count.
PUBLISH_FRAME = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if ARGV[3] == '1' and redis.call('HGET', KEYS[1], 'status') ~= 'streaming' then return 0 end
local seq = redis.call('HINCRBY', KEYS[1], 'seq', 1)
local frame = '{"seq":' .. seq .. ',' .. string.sub(ARGV[2], 2)
local length = redis.call('LPUSH', KEYS[2], frame)
local bytes
if length == 1 then
  bytes = string.len(frame)
  redis.call('HSET', KEYS[1], 'logbytes', bytes)
else
  bytes = redis.call('HINCRBY', KEYS[1], 'logbytes', string.len(frame))
end
local max_frames, max_bytes = tonumber(ARGV[4]), tonumber(ARGV[5])
while length > 1 and (length > max_frames or bytes > max_bytes) do
  local dropped = redis.call('RPOP', KEYS[2])
  length = length - 1
  bytes = redis.call('HINCRBY', KEYS[1], 'logbytes', -string.len(dropped))
end
redis.call('PUBLISH', ARGV[1], frame)
return seq
"""


def _now_ms() -> int:
    return int(time.time() * 1000)


class ChannelStore:
    def __init__(self, client: redis.Redis) -> None:
        self.r = client
        self.markets = MarketStore(client)
        self._publish = client.register_script(PUBLISH_FRAME)
        self._members = client.register_script(MEMBERS)

    # --- reads ---

    def spec(self, channel_id: str) -> SubscriptionSpec | None:
        """The channel's spec, None when there is no such channel; ``InvalidRecord`` when the
        stored spec cannot be read (the caller skips that channel, never the whole batch)."""
        raw = self.r.hget(keys.channel_meta(channel_id), "spec")
        if not raw:
            return None
        try:
            return spec_from_json(orjson.loads(raw))
        except orjson.JSONDecodeError as exc:
            raise InvalidRecord("damaged_state", f"the stored spec of channel {channel_id} is not JSON") from exc

    def markets_of(self, channel_id: str) -> set[int]:
        return {int(m) for m in self.r.smembers(keys.channel_markets(channel_id))}

    def states(self, market_ids: Iterable[int]) -> dict[int, MarketFrame]:
        return self.markets.states(market_ids)

    def matches_of(self, market_ids: Iterable[int]) -> list[MatchMessage]:
        """The latest match state of every event the markets belong to, by event id."""
        event_ids = {definition.event_id for definition in self.markets.definitions(market_ids).values()}
        pipe = self.r.pipeline(transaction=False)
        events = sorted(event_ids)
        for event_id in events:
            pipe.hget(keys.match_state(event_id), "state")
        return [frames.read_match(raw) for raw in pipe.execute() if raw is not None]

    def resolve_query(self, spec: SubscriptionSpec, *, now_ms: int) -> set[int]:
        """Markets in the markets table that match the spec's query now."""
        if spec.query is None:
            return set()
        return {
            definition.market_id
            for definition in self.markets.all_definitions()
            if query_matches(spec.query, definition, now_ms=now_ms)
        }

    # --- writes ---

    def _map_markets(self, channel_id: str, change: SetMarkets) -> None:
        pipe = self.r.pipeline(transaction=False)
        for market_id in sorted(change.added):
            pipe.sadd(keys.market_channels(market_id), channel_id)
            pipe.sadd(keys.channel_markets(channel_id), market_id)
        for market_id in sorted(change.removed):
            pipe.srem(keys.market_channels(market_id), channel_id)
            pipe.srem(keys.channel_markets(channel_id), market_id)
        pipe.execute()

    def publish(self, channel_id: str, body: bytes, *, only_streaming: bool) -> int:
        """Stamp, log and publish one frame; returns its sequence (0 when not sent)."""
        return int(
            self._publish(
                keys=[keys.channel_meta(channel_id), keys.channel_log(channel_id)],
                args=[
                    keys.subscriber_channel(channel_id),
                    body,
                    "1" if only_streaming else "0",
                    LOG_SIZE,
                    LOG_MAX_BYTES,
                ],
            )
        )

    def send_image(
        self, channel_id: str, *, resync: bool = False, since: Mapping[int, tuple[int, str]] | None = None
    ) -> int:
        """Publish the channel's image. With ``since`` (what the client holds), the image leaves
        out every market still at the sequence and status named there; the view's summary (slip,
        bets) is always computed over all of them."""
        spec = self.spec(channel_id)
        if spec is None:
            return 0
        markets = self.markets_of(channel_id)
        states = self.states(markets)
        held = since or {}
        body = view_frame(
            kind="image",
            channel_id=channel_id,
            spec=spec,
            changed=[states[m] for m in sorted(states) if not state_is_held(held.get(m), states[m])],
            states=states,
            resync=resync,
            matches=self.matches_of(markets),
            since=since is not None,
        )
        return self.publish(channel_id, body, only_streaming=False)

    def apply_command(self, command: StreamCommand) -> str:
        """Apply one command idempotently (``reducers.channels.command_decision``); returns what
        happened (for logs and tests)."""
        owner = self.r.hget(keys.channel_meta(command.channel_id), "user")
        now = _now_ms()
        decision = command_decision(
            command,
            owner=int(owner) if owner is not None else None,
            markets=frozenset(self.markets_of(command.channel_id)),
            now_ms=now,
            resolve=lambda spec: self.resolve_query(spec, now_ms=now),
        )
        self.execute(command.channel_id, decision.effects)
        return decision.outcome

    def execute(self, channel_id: str, effects: Iterable[Effect]) -> None:
        """Carry out a decision's effects on one channel, in their order."""
        meta = keys.channel_meta(channel_id)
        for effect in effects:
            match effect:
                case Create(user_id=user_id, spec=spec, now_ms=now_ms):
                    self.r.zadd(keys.channels_index(), {channel_id: now_ms})
                    self.r.hset(
                        meta,
                        mapping={
                            "user": user_id,
                            "spec": orjson.dumps(spec.to_json()),
                            "status": "pending",
                            "seq": 0,
                            "created": now_ms,
                        },
                    )
                case Stream(now_ms=now_ms):
                    self.r.hset(meta, mapping={"status": "streaming"})
                    self.r.zadd(keys.channels_index(), {channel_id: now_ms})
                case SaveSpec(spec=spec):
                    self.r.hset(meta, "spec", orjson.dumps(spec.to_json()))
                case QueryMember(member=True):
                    self.r.sadd(keys.query_channels(), channel_id)
                case QueryMember(member=False):
                    self.r.srem(keys.query_channels(), channel_id)
                case SetMarkets():
                    self._map_markets(channel_id, effect)
                case SendImage(resync=resync, since=since):
                    self.send_image(channel_id, resync=resync, since=since)
                case Remove(reason=reason):
                    self.remove(channel_id, reason=reason)

    def remove(self, channel_id: str, *, reason: str) -> None:
        """Drop a channel and its entries in both maps, and tell its websockets it ended and why.

        The owner's binding moves to the ended marker, so the owner's next attach is answered
        with the same ``ended`` frame (the control API has usually moved it already).
        """
        markets = self.markets_of(channel_id)
        owner = self.r.get(keys.channel_owner(channel_id))
        pipe = self.r.pipeline(transaction=False)
        for market_id in markets:
            pipe.srem(keys.market_channels(market_id), channel_id)
        pipe.delete(keys.channel_markets(channel_id), keys.channel_meta(channel_id), keys.channel_log(channel_id))
        pipe.zrem(keys.channels_index(), channel_id)
        pipe.srem(keys.query_channels(), channel_id)
        if owner is not None:
            pipe.hset(keys.channel_ended(channel_id), mapping={"owner": owner, "reason": reason})
            pipe.expire(keys.channel_ended(channel_id), ENDED_CHANNEL_KEEP_S)
            pipe.delete(keys.channel_owner(channel_id))
        pipe.publish(keys.subscriber_channel(channel_id), ended_frame(channel_id=channel_id, reason=reason))
        pipe.execute()

    # --- fan-out of applied market states ---

    def fan_out(self, states: dict[int, MarketFrame]) -> int:
        """Send each streaming channel the changed markets it holds; returns frames sent."""
        if not states:
            return 0
        ids = sorted(states)
        found_of = per_market(self.r, self._members, [(keys.market_channels(market_id), ()) for market_id in ids])
        members = {m: [c.decode() for c in found] for m, found in zip(ids, found_of, strict=True)}
        sent = 0
        for channel_id, market_ids in fan_out_routes(members).items():
            try:
                spec = self.spec(channel_id)
            except InvalidRecord:
                continue
            if spec is None:
                continue
            context: dict[int, Mapping[str, Any]] = dict(states)
            if spec.view != "markets":
                context.update(self.states(context_markets(spec, held=self.markets_of(channel_id), changed=context)))
            body = view_frame(
                kind="delta",
                channel_id=channel_id,
                spec=spec,
                changed=[states[m] for m in market_ids],
                states=context,
            )
            if self.publish(channel_id, body, only_streaming=True):
                sent += 1
        return sent

    def fan_out_matches(self, matches: dict[int, MatchMessage]) -> int:
        """Send each streaming channel showing a market of these events their new match states;
        returns frames sent."""
        if not matches:
            return 0
        events = sorted(matches)
        pipe = self.r.pipeline(transaction=False)
        for event_id in events:
            pipe.smembers(keys.event_markets(event_id))
        markets_of_event = [sorted(int(m) for m in members) for members in pipe.execute()]
        for market_ids in markets_of_event:
            for market_id in market_ids:
                pipe.smembers(keys.market_channels(market_id))
        replies = iter(pipe.execute())
        members = {
            market_id: [c.decode() for c in next(replies)]
            for market_ids in markets_of_event
            for market_id in market_ids
        }
        routes = match_routes(dict(zip(events, markets_of_event, strict=True)), members)
        sent = 0
        for channel_id, event_ids in routes.items():
            body = match_frame(channel_id=channel_id, matches=[matches[e] for e in event_ids])
            if self.publish(channel_id, body, only_streaming=True):
                sent += 1
        return sent

    # --- the query stage: a virtual subscriber per query channel ---

    def refresh_queries(self, *, now_ms: int | None = None) -> dict[str, tuple[int, int]]:
        """Re-resolve every query channel; markets that start matching join, others leave.

        Returns channel id → (markets added, markets removed) for channels that changed.
        """
        now_ms = now_ms or _now_ms()
        changes = {}
        for raw in self.r.smembers(keys.query_channels()):
            channel_id = raw.decode()
            try:
                spec = self.spec(channel_id)
            except InvalidRecord as exc:
                # One damaged channel must not stop the query stage for every other channel.
                log.warning("query channel %s skipped: %s", channel_id, exc)
                continue
            if spec is None:
                self.r.srem(keys.query_channels(), channel_id)
                continue
            effects = query_refresh_decision(
                spec,
                markets=frozenset(self.markets_of(channel_id)),
                streaming=self.r.hget(keys.channel_meta(channel_id), "status") == b"streaming",
                matched=self.resolve_query(spec, now_ms=now_ms),
            )
            for effect in effects:
                if isinstance(effect, SetMarkets):
                    changes[channel_id] = (len(effect.added), len(effect.removed))
            self.execute(channel_id, effects)
        return changes
