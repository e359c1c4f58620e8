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
import secrets
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import orjson
import redis
import redis.asyncio as aioredis

from reducers import frames
from reducers.channels import (
    SHARED_OWNER,
    Create,
    Effect,
    PublishQuery,
    QueryChange,
    QueryMember,
    Remove,
    SaveSpec,
    SendImage,
    SetMarkets,
    SetQueryMarkets,
    Stream,
    WatchGame,
    command_decision,
    context_markets,
    fan_out_routes,
    match_routes,
    query_change,
)
from reducers.frames import MarketFrame, MatchMessage
from reducers.prices import state_is_held
from reducers.schemas import InvalidRecord, MarketDefinition
from reducers.subscriptions import (
    ENDED_CHANNEL_KEEP_S,
    GAME_VIEW,
    StreamCommand,
    SubscriptionSpec,
    ended_frame,
    is_shared_channel,
    query_matches,
    query_time_window_ms,
    spec_from_json,
)
from reducers.views import QUERY_VIEW, match_frame, query_frame, view_frame
from store import keys
from store.game import GameStore
from store.markets import MEMBERS, MarketStore, per_market, script_calls

log = logging.getLogger("store.channels")
# The resume log keeps at most LOG_SIZE frames and at most LOG_MAX_BYTES of them, the oldest
# dropped first (the newest frame always stays): resync images of hundreds of markets are large,
# and a punter asking for many must not grow Redis without bound. A resume from further back
# than the log reaches gets a resync image.
LOG_SIZE = 256
LOG_MAX_BYTES = 512 * 1024

# Frames for many channels in one call: KEYS holds each channel's meta hash and log (two keys a
# channel), ARGV[1] whether only a streaming channel is sent to ('1') and the log's bounds
# (ARGV[2] frames, ARGV[3] bytes), then each channel's pub-sub name and frame body. Each frame is
# stamped with its channel's next sequence, logged and published; the reply is each frame's
# sequence (0: not sent, the channel is gone or not streaming). With ARGV[4] set, the fan-out
# journal it names (``keys.fanout_journal``) is deleted at the end: the frames it stood for are out.
# The log's size in bytes is kept in the meta hash (``logbytes``): Redis cannot sum a list's
# element lengths without reading it. A log found with one frame (new, or deleted meanwhile)
# restarts the count.
PUBLISH_FRAMES = """
local only_streaming, max_frames, max_bytes = ARGV[1] == '1', tonumber(ARGV[2]), tonumber(ARGV[3])
local sent = {}
for i = 1, #KEYS / 2 do
  local meta, log = KEYS[2 * i - 1], KEYS[2 * i]
  local name, body = ARGV[2 * i + 2], ARGV[2 * i + 3]
  sent[i] = 0
  if redis.call('EXISTS', meta) == 1
      and (not only_streaming or redis.call('HGET', meta, 'status') == 'streaming') then
    local seq = redis.call('HINCRBY', meta, 'seq', 1)
    local frame = '{"seq":' .. seq .. ',' .. string.sub(body, 2)
    local length = redis.call('LPUSH', log, frame)
    local bytes
    if length == 1 then
      bytes = string.len(frame)
      redis.call('HSET', meta, 'logbytes', bytes)
    else
      bytes = redis.call('HINCRBY', meta, 'logbytes', string.len(frame))
    end
    while length > 1 and (length > max_frames or bytes > max_bytes) do
      local dropped = redis.call('RPOP', log)
      length = length - 1
      bytes = redis.call('HINCRBY', meta, 'logbytes', -string.len(dropped))
    end
    redis.call('PUBLISH', name, frame)
    sent[i] = seq
  end
end
return sent
"""

# What a batch's fan-out needs to know of the channels holding its markets, in one call: KEYS[1]
# is the batch's set of channels already answered (``keys.fanout_routed``: the calls of one batch
# share it, so a channel holding markets of several calls is answered once), then the markets'
# market → channels sets; ARGV the key prefixes of a channel's meta hash and markets set and of a
# market's state hash. The reply: per market, the channels holding it; then, once per channel met
# first in this call, its id, status, spec and view, and for a streaming view over all its markets
# (a slip, bets) each of its markets with its stored state ('' when it has none).
ROUTES = """
local routes, channels, routed = {}, {}, KEYS[1]
for i = 2, #KEYS do
  local members = redis.call('SMEMBERS', KEYS[i])
  routes[i - 1] = members
  for _, id in ipairs(members) do
    if redis.call('SADD', routed, id) == 1 then
      local meta = redis.call('HMGET', ARGV[1] .. id, 'status', 'spec', 'view')
      local context = {}
      if meta[1] == 'streaming' and meta[3] ~= 'markets' then
        for _, market in ipairs(redis.call('SMEMBERS', ARGV[2] .. id)) do
          context[#context + 1] = market
          context[#context + 1] = redis.call('HGET', ARGV[3] .. market, 'state') or ''
        end
      end
      channels[#channels + 1] = {id, meta[1] or '', meta[2] or '', meta[3] or '', context}
    end
  end
end
redis.call('EXPIRE', routed, 60)
return {routes, channels}
"""

# The markets a batch's fan-out routes in one script call, and the channels a publishing call
# takes: a call runs alone on the Redis server, so a batch is cut into calls that each hold it for
# a millisecond or two, all sent in one round trip.
ROUTE_MARKETS = 32
PUBLISH_CHANNELS = 256


# Parsed specs kept by a store at most (cleared when full; a spec is re-read on its next use).
SPEC_CACHE = 50_000
# Markets whose parsed stored state a store keeps at most (one entry a market, cleared when full).
STATE_CACHE = 100_000


@dataclass(frozen=True)
class Routed:
    """A streaming channel a fan-out reaches: its spec and the stored states of its markets (for a
    view over all of them)."""

    spec: SubscriptionSpec
    held: dict[int, MarketFrame]


def _now_ms() -> int:
    return int(time.time() * 1000)


class ChannelStore:
    def __init__(self, client: redis.Redis) -> None:
        self.r = client
        self.markets = MarketStore(client)
        self.game = GameStore(client)
        self._publish = client.register_script(PUBLISH_FRAMES)
        self._members = client.register_script(MEMBERS)
        self._routes = client.register_script(ROUTES)
        # Parsed specs by their stored bytes: a channel's spec changes only on a ``change``.
        self._specs: dict[bytes, SubscriptionSpec] = {}
        # Each market's stored state as last read (bytes) and parsed: a state changes only when
        # its market is applied again, so most of a batch's routes carry states an earlier batch
        # parsed already (parsing them again was a third of a batch's fan-out at 10,000 channels).
        self._held: dict[int, tuple[bytes, MarketFrame]] = {}
        # When this store last moved the kick-off windows (``refresh_windows``), epoch ms.
        self._looked: int | None = None

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
        return self.publish_many([(channel_id, body)], only_streaming=only_streaming)[0]

    def publish_many(
        self, frames_of: Sequence[tuple[str, bytes]], *, only_streaming: bool, journal: str | None = None
    ) -> list[int]:
        """Stamp, log and publish a frame for each (channel id, body), in calls of
        ``PUBLISH_CHANNELS`` channels sent in one round trip; returns each frame's sequence (0 when
        not sent). ``journal``: a fan-out journal to delete once the frames are out."""
        chunks = [frames_of[at : at + PUBLISH_CHANNELS] for at in range(0, len(frames_of), PUBLISH_CHANNELS)]
        head = ["1" if only_streaming else "0", LOG_SIZE, LOG_MAX_BYTES]
        calls = [
            (
                [k for c, _ in chunk for k in (keys.channel_meta(c), keys.channel_log(c))],
                [*head, *(a for c, body in chunk for a in (keys.subscriber_channel(c), body))],
            )
            for chunk in chunks
        ]
        replies = script_calls(self.r, self._publish, calls, then=[journal] if journal is not None else [])
        return [int(seq) for reply in replies for seq in reply]

    def send_image(
        self, channel_id: str, *, resync: bool = False, since: Mapping[int, tuple[int, str]] | None = None
    ) -> int:
        """Publish the channel's image. With ``since`` (what the client holds), the image leaves
        out every market still at the sequence and status named there; the view's summary (slip,
        bets) is always computed over all of them."""
        spec = self.spec(channel_id)
        if spec is None:
            return 0
        if spec.view == GAME_VIEW and spec.event is not None:
            owner = self.r.hget(keys.channel_meta(channel_id), "user")
            if owner is None:
                return 0
            image = self.game.image(channel_id=channel_id, event_id=spec.event, user_id=int(owner), resync=resync)
            return self.publish(channel_id, image, only_streaming=False)
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
                            "view": QUERY_VIEW if user_id == SHARED_OWNER else spec.view,
                            "seq": 0,
                            "created": now_ms,
                        },
                    )
                case Stream(now_ms=now_ms):
                    self.r.hset(meta, mapping={"status": "streaming"})
                    self.r.zadd(keys.channels_index(), {channel_id: now_ms})
                case SaveSpec(spec=spec):
                    self.r.hset(meta, mapping={"spec": orjson.dumps(spec.to_json()), "view": spec.view})
                    user = self.r.hget(meta, "user")
                    if spec.view != GAME_VIEW and user is not None:
                        self.game.unwatch(channel_id=channel_id, user_id=int(user))
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
                case SetQueryMarkets(added=added, removed=removed):
                    pipe = self.r.pipeline(transaction=False)
                    if added:
                        pipe.sadd(keys.channel_markets(channel_id), *sorted(added))
                    if removed:
                        pipe.srem(keys.channel_markets(channel_id), *sorted(removed))
                    pipe.execute()
                case PublishQuery(image=True):
                    markets = sorted(self.markets_of(channel_id))
                    self.publish(channel_id, query_frame(channel_id=channel_id, markets=markets), only_streaming=False)
                case PublishQuery(added=added, removed=removed, changed=changed):
                    body = query_frame(channel_id=channel_id, added=added, removed=removed, changed=changed)
                    self.publish(channel_id, body, only_streaming=False)
                case WatchGame(event_id=event_id, user_id=user_id):
                    self.game.watch(channel_id=channel_id, event_id=event_id, user_id=user_id)

    def remove(self, channel_id: str, *, reason: str) -> None:
        """Drop a channel and its entries in both maps, and tell its websockets it ended and why.

        The owner's binding moves to the ended marker, so the owner's next attach is answered
        with the same ``ended`` frame (the control API has usually moved it already).
        """
        markets = self.markets_of(channel_id)
        owner = self.r.get(keys.channel_owner(channel_id))
        view, user = self.r.hmget(keys.channel_meta(channel_id), ["view", "user"])
        if view == GAME_VIEW.encode() and user is not None:
            self.game.unwatch(channel_id=channel_id, user_id=int(user))
        pipe = self.r.pipeline(transaction=False)
        for market_id in markets:
            pipe.srem(keys.market_channels(market_id), channel_id)
        pipe.delete(keys.channel_markets(channel_id), keys.channel_meta(channel_id), keys.channel_log(channel_id))
        pipe.zrem(keys.channels_index(), channel_id)
        pipe.srem(keys.query_channels(), channel_id)
        if owner is not None:
            _queue_ended(pipe, channel_id, owner=owner, reason=reason)
        pipe.publish(keys.subscriber_channel(channel_id), ended_frame(channel_id=channel_id, reason=reason))
        pipe.execute()

    # --- fan-out of applied market states ---

    def _spec_of(self, raw: bytes) -> SubscriptionSpec | None:
        spec = self._specs.get(raw)
        if spec is None:
            try:
                spec = spec_from_json(orjson.loads(raw))
            except (orjson.JSONDecodeError, InvalidRecord):
                return None
            if len(self._specs) >= SPEC_CACHE:
                self._specs.clear()
            self._specs[raw] = spec
        return spec

    def _state_of(self, market_id: int, raw: bytes) -> MarketFrame:
        """The market's stored state parsed, from the cache while its bytes are the same."""
        found = self._held.get(market_id)
        if found is not None and found[0] == raw:
            return found[1]
        state = frames.read_market(raw)
        if len(self._held) >= STATE_CACHE:
            self._held.clear()
        self._held[market_id] = (raw, state)
        return state

    def _routes_of(self, market_ids: Sequence[int]) -> tuple[dict[int, list[str]], dict[str, Routed]]:
        """For each market, the channels holding it; for each streaming channel met, its spec and
        (for a view over all its markets) its markets' stored states. One round trip."""
        head = [keys.channel_meta(""), keys.channel_markets(""), keys.market_state_prefix()]
        chunks = [market_ids[at : at + ROUTE_MARKETS] for at in range(0, len(market_ids), ROUTE_MARKETS)]
        # A batch of every market (a backlog's) reaches each channel through several calls: each
        # channel's spec and states come back once, not once a call (five times, for 5.5 legs).
        answered = keys.fanout_routed(secrets.token_hex(8))
        calls = [([answered, *(keys.market_channels(m) for m in chunk)], head) for chunk in chunks]
        replies = script_calls(self.r, self._routes, calls, then=[answered])
        members: dict[int, list[str]] = {}
        routed: dict[str, Routed] = {}
        for chunk, (routes, channels) in zip(chunks, replies, strict=True):
            for market_id, found in zip(chunk, routes, strict=True):
                members[market_id] = [c.decode() for c in found]
            for raw_id, status, raw_spec, _view, context in channels:
                channel_id = raw_id.decode()
                if channel_id in routed or status != b"streaming":
                    continue
                spec = self._spec_of(raw_spec)
                if spec is None:
                    log.warning("channel %s skipped by the fan-out: its stored spec cannot be read", channel_id)
                    continue
                held: dict[int, MarketFrame] = {}
                for at in range(0, len(context), 2):
                    raw_state = context[at + 1]
                    if raw_state:
                        held[int(context[at])] = self._state_of(int(context[at]), raw_state)
                routed[channel_id] = Routed(spec, held)
        return members, routed

    def fan_out(self, states: Mapping[int, MarketFrame], *, journal: str | None = None) -> int:
        """Send each streaming channel the changed markets it holds, in two round trips however
        many channels there are (their routes, then every frame); returns frames sent.
        ``journal``: the fan-out journal of the states (``keys.fanout_journal``), deleted with
        the last frame."""
        if not states:
            return 0  # nothing applied, so nothing journaled
        members, routed = self._routes_of(sorted(states))
        changed = set(states)
        out: list[tuple[str, bytes]] = []
        for channel_id, market_ids in fan_out_routes(members).items():
            found = routed.get(channel_id)
            if found is None:
                continue
            # The channel's own markets only: a copy of the whole batch for each channel cost
            # the batch's size times its channels (a backlog's batch holds every market).
            context: dict[int, Mapping[str, Any]] = {m: states[m] for m in market_ids}
            for market_id in context_markets(found.spec, held=set(found.held), changed=changed):
                context[market_id] = found.held[market_id]
            body = view_frame(
                kind="delta",
                channel_id=channel_id,
                spec=found.spec,
                changed=[states[m] for m in market_ids],
                states=context,
            )
            out.append((channel_id, body))
        return sum(1 for seq in self.publish_many(out, only_streaming=True, journal=journal) if seq)

    def fan_out_matches(self, matches: Mapping[int, MatchMessage], *, journal: str | None = None) -> int:
        """Send each streaming channel showing a market of these events their new match states,
        in three round trips; returns frames sent."""
        if not matches:
            return 0
        events = sorted(matches)
        pipe = self.r.pipeline(transaction=False)
        for event_id in events:
            pipe.smembers(keys.event_markets(event_id))
        markets_of_event = [sorted(int(m) for m in members) for members in pipe.execute()]
        market_ids = sorted({m for markets in markets_of_event for m in markets})
        found = per_market(self.r, self._members, [(keys.market_channels(m), ()) for m in market_ids])
        members = {m: [c.decode() for c in channels] for m, channels in zip(market_ids, found, strict=True)}
        routes = match_routes(dict(zip(events, markets_of_event, strict=True)), members)
        out = [
            (channel_id, match_frame(channel_id=channel_id, matches=[matches[e] for e in event_ids]))
            for channel_id, event_ids in routes.items()
        ]
        return sum(1 for seq in self.publish_many(out, only_streaming=True, journal=journal) if seq)

    def fan_out_journaled(self, journal: str, *, of: str) -> int:
        """Finish the fan-out of a batch that failed after its states were written: send the
        channels the stored state of every market (``of="markets"``) or match state of every
        event (``of="matches"``) the journal names, then delete it. Returns frames sent."""
        pending = sorted(int(member) for member in self.r.smembers(journal))
        if not pending:
            return 0
        if of == "markets":
            return self.fan_out(self.markets.states(pending), journal=journal)
        return self.fan_out_matches(self.matches_stored(pending), journal=journal)

    def matches_stored(self, event_ids: Iterable[int]) -> dict[int, MatchMessage]:
        """The stored match state of each of the events that has one."""
        ids = sorted(set(event_ids))
        pipe = self.r.pipeline(transaction=False)
        for event_id in ids:
            pipe.hget(keys.match_state(event_id), "state")
        return {e: frames.read_match(raw) for e, raw in zip(ids, pipe.execute(), strict=True) if raw is not None}

    # --- the query stage: one shared channel per distinct query, a virtual subscriber ---

    def shared_queries(self) -> dict[str, SubscriptionSpec]:
        """Every shared query channel and its spec (one round trip for the ids, one for the specs)."""
        ids = sorted(raw.decode() for raw in self.r.smembers(keys.query_channels()))
        pipe = self.r.pipeline(transaction=False)
        for channel_id in ids:
            pipe.hget(keys.channel_meta(channel_id), "spec")
        found: dict[str, SubscriptionSpec] = {}
        for channel_id, raw in zip(ids, pipe.execute(), strict=True):
            spec = self._spec_of(raw) if raw is not None else None
            if spec is None or spec.query is None:
                # A damaged or vanished channel must not stop the stage for the others.
                log.warning("query channel %s skipped: no readable query spec", channel_id)
                continue
            found[channel_id] = spec
        return found

    def _held_by(self, queries: Mapping[str, SubscriptionSpec], market_ids: Sequence[int]) -> dict[str, frozenset[int]]:
        """Which of ``market_ids`` each query channel holds, in one round trip."""
        if not market_ids:
            return {channel_id: frozenset() for channel_id in queries}
        pipe = self.r.pipeline(transaction=False)
        for channel_id in queries:
            pipe.smismember(keys.channel_markets(channel_id), list(market_ids))
        return {
            channel_id: frozenset(m for m, held in zip(market_ids, found, strict=True) if held)
            for channel_id, found in zip(queries, pipe.execute(), strict=True)
        }

    def _apply_changes(
        self,
        queries: Mapping[str, SubscriptionSpec],
        candidates_of: Mapping[str, Mapping[int, tuple[MarketDefinition | None, MarketDefinition | None]]],
        *,
        now_ms: int,
    ) -> dict[str, QueryChange]:
        held = self._held_by(queries, sorted({m for found in candidates_of.values() for m in found}))
        changes = {}
        for channel_id, spec in queries.items():
            candidates = candidates_of.get(channel_id, {})
            if not candidates:
                continue
            change = query_change(spec, members=held[channel_id], candidates=candidates, now_ms=now_ms)
            effects = change.effects()
            if effects:
                self.execute(channel_id, effects)
                changes[channel_id] = change
        return changes

    def refresh_shared(
        self,
        changed: Mapping[int, tuple[MarketDefinition | None, MarketDefinition | None]],
        *,
        now_ms: int | None = None,
    ) -> dict[str, QueryChange]:
        """The markets table changed these markets (old, new definition): each shared query channel
        takes the ones that start matching, lets go of the ones that stop, and says which of its
        markets changed in what a list shows. Never rereads the table."""
        if not changed:
            return {}
        queries = self.shared_queries()
        return self._apply_changes(queries, dict.fromkeys(queries, changed), now_ms=now_ms or _now_ms())

    def refresh_windows(self, *, now_ms: int | None = None) -> dict[str, QueryChange]:
        """Time moved: each shared channel of a kick-off window takes the markets whose kick-off
        came into it and lets go of those whose kick-off passed. Only markets on the window's
        edges are read: since this store's last look, those whose kick-off crossed the far edge
        (now inside the window) or the near edge (now past); a definition that changed meanwhile
        was compared when the markets query applied it (``refresh_shared``). A store's first look
        (or one back in time) compares the markets scheduled inside each window with those it
        holds."""
        now = now_ms or _now_ms()
        since, self._looked = self._looked, now
        queries = self.shared_queries()
        windows = {
            channel_id: window
            for channel_id, spec in queries.items()
            if spec.query is not None and (window := query_time_window_ms(spec.query)) is not None
        }
        if not windows:
            return {}
        pipe = self.r.pipeline(transaction=False)
        edges: dict[str, set[int]] = {}
        if since is not None and since < now:
            for window in windows.values():
                pipe.zrangebyscore(keys.markets_by_start(), f"({since + window}", now + window)
                pipe.zrangebyscore(keys.markets_by_start(), since, f"({now}")
            replies = pipe.execute()
            for at, channel_id in enumerate(windows):
                edges[channel_id] = {int(m) for m in (*replies[2 * at], *replies[2 * at + 1])}
        else:
            for window in windows.values():
                pipe.zrangebyscore(keys.markets_by_start(), now, now + window)
            for channel_id in windows:
                pipe.smembers(keys.channel_markets(channel_id))
            replies = pipe.execute()
            for at, channel_id in enumerate(windows):
                in_window = {int(m) for m in replies[at]}
                held = {int(m) for m in replies[len(windows) + at]}
                edges[channel_id] = in_window ^ held
        definitions = self.markets.definitions({m for found in edges.values() for m in found})
        candidates_of = {
            channel_id: {m: (definitions.get(m), definitions.get(m)) for m in found}
            for channel_id, found in edges.items()
        }
        return self._apply_changes({c: queries[c] for c in windows}, candidates_of, now_ms=now)


class FanOutJournal:
    """At-least-once fan-out for a reducer query that writes states and then fans them out.

    The states' writes add their markets (or events) to the query's journal in the same script,
    and the fan-out deletes it with its last frame. A batch runs inside ``batch()``: the first
    batch of a processor, and the first after one that failed, first fans out whatever the
    journal still names (the states a failed batch wrote, which its replay finds "not newer" and
    would never send). Channels may so receive a market twice; clients keep the higher market
    sequence (docs/protocol.md)."""

    def __init__(self, channels: ChannelStore, *, query: str, of: str) -> None:
        self._channels = channels
        self.key = keys.fanout_journal(query)
        self._of = of
        self._clean = False

    @contextmanager
    def batch(self) -> Iterator[str]:
        """The journal's key for this batch's writes and fan-out."""
        if not self._clean:
            sent = self._channels.fan_out_journaled(self.key, of=self._of)
            if sent:
                log.info("fan-out journal %s: %d frames sent again after a failed batch", self.key, sent)
            self._clean = True
        try:
            yield self.key
        except BaseException:
            self._clean = False
            raise


# A channel's sequence raised to at least ARGV[1] (KEYS[1]: its meta hash, left alone when gone).
SEQ_FLOOR = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if tonumber(redis.call('HGET', KEYS[1], 'seq') or '0') < tonumber(ARGV[1]) then
  redis.call('HSET', KEYS[1], 'seq', ARGV[1])
  return 1
end
return 0
"""


def channel_seq_floor(client: redis.Redis, channel_id: str, *, at_least: int) -> bool:
    """Raise the channel's sequence to at least ``at_least`` (its next frame is numbered past it):
    after a Redis failover lost frames its clients had seen, the numbering goes on past them
    rather than repeating numbers the clients would drop. True when it was raised."""
    return bool(client.eval(SEQ_FLOOR, 1, keys.channel_meta(channel_id), at_least))


# --- the web tier's side: owner bindings, the live-channel caps, sockets and punters' news ---

# A new channel under the live-channel caps, in one step: each set's members whose owner binding
# is gone (ended, expired) are dropped from it, both caps are checked, and only then is the owner
# bound and the channel added to both sets. Two subscriptions at once can never both take the
# last place. KEYS: the session's set, the punter's set. ARGV: the owner keys' prefix, the
# session's cap, the punter's cap, the channel id, now (ms), the sets' and binding's expiry (s),
# the owner token. Answers 0 (admitted), 1 (the session is full) or 2 (the punter is full).
ADMIT_CHANNEL = """
local function live(key)
  local n = 0
  for _, member in ipairs(redis.call('ZRANGE', key, 0, -1)) do
    if redis.call('EXISTS', ARGV[1] .. member) == 1 then
      n = n + 1
    else
      redis.call('ZREM', key, member)
    end
  end
  return n
end
if live(KEYS[1]) >= tonumber(ARGV[2]) then return 1 end
if live(KEYS[2]) >= tonumber(ARGV[3]) then return 2 end
redis.call('SET', ARGV[1] .. ARGV[4], ARGV[7], 'EX', ARGV[6])
for i = 1, 2 do
  redis.call('ZADD', KEYS[i], ARGV[5], ARGV[4])
  redis.call('EXPIRE', KEYS[i], ARGV[6])
end
return 0
"""


def _owner_token(*, user_id: int, session_key: str) -> str:
    """What an owner binding (``keys.channel_owner``) and an ended marker's ``owner`` hold."""
    return f"{user_id}:{session_key}"


def _queue_ended(pipe: Any, channel_id: str, *, owner: bytes, reason: str) -> None:
    """Queue on ``pipe`` the move of the channel's owner binding (``owner``, as stored) to its
    ended marker, which tells the owner's next attach ``reason`` for ``ENDED_CHANNEL_KEEP_S``."""
    pipe.hset(keys.channel_ended(channel_id), mapping={"owner": owner, "reason": reason})
    pipe.expire(keys.channel_ended(channel_id), ENDED_CHANNEL_KEEP_S)
    pipe.delete(keys.channel_owner(channel_id))


def channel_admit(
    client: redis.Redis,
    *,
    channel_id: str,
    user_id: int,
    session_key: str,
    now_ms: int,
    session_cap: int,
    user_cap: int,
    keep_s: int,
) -> int:
    """Bind a new channel to this user in this browser session (for ``keep_s``) and count it under
    the session's and the punter's live-channel caps, in one script (``ADMIT_CHANNEL``): 0 when
    admitted, 1 when the session's cap is full, 2 when the punter's is (nothing written then)."""
    full = client.eval(
        ADMIT_CHANNEL,
        2,
        keys.live_channels_of_session(session_key),
        keys.live_channels_of_user(user_id),
        keys.channel_owner_prefix(),
        session_cap,
        user_cap,
        channel_id,
        now_ms,
        keep_s,
        _owner_token(user_id=user_id, session_key=session_key),
    )
    return int(full)


def channel_owned(client: redis.Redis, channel_id: str, *, user_id: int, session_key: str) -> bool:
    """Whether the channel's owner binding names this user in this browser session."""
    raw = client.get(keys.channel_owner(channel_id))
    return raw is not None and secrets.compare_digest(
        raw.decode(), _owner_token(user_id=user_id, session_key=session_key)
    )


def channel_ended_reason(client: redis.Redis, channel_id: str, *, user_id: int, session_key: str) -> str | None:
    """Why the channel ended, from its ended marker, when it was this user's in this browser
    session; None when it has not ended (or was not theirs)."""
    owner, reason = client.hmget(keys.channel_ended(channel_id), ["owner", "reason"])
    if owner is None or reason is None:
        return None
    if not secrets.compare_digest(owner.decode(), _owner_token(user_id=user_id, session_key=session_key)):
        return None
    return str(reason.decode())


def channel_owner_release(client: redis.Redis, channel_id: str, *, reason: str) -> None:
    """Move the channel's owner binding to its ended marker (the owner's next attach is told
    ``reason``) and free its places under the live-channel caps, in one pipeline; a channel with
    no owner binding is left alone."""
    owner = client.get(keys.channel_owner(channel_id))
    if owner is None:
        return
    user_id, _, session_key = owner.decode().partition(":")
    pipe = client.pipeline(transaction=False)
    _queue_ended(pipe, channel_id, owner=owner, reason=reason)
    pipe.zrem(keys.live_channels_of_user(int(user_id)), channel_id)
    pipe.zrem(keys.live_channels_of_session(session_key), channel_id)
    pipe.execute()


def live_channels(client: redis.Redis, *, user_id: int, session_key: str | None) -> list[str]:
    """The punter's channels counted under the live-channel caps: those of the browser session
    ``session_key``, or all of the punter's when it is None."""
    live = keys.live_channels_of_session(session_key) if session_key else keys.live_channels_of_user(user_id)
    return [raw.decode() for raw in client.zrange(live, 0, -1)]


def channel_held(client: redis.Redis, channel_id: str) -> bool:
    """Whether the reducers hold the channel (its meta hash exists)."""
    return bool(client.exists(keys.channel_meta(channel_id)))


def channel_user(client: redis.Redis, channel_id: str) -> int | None:
    """The user the reducers hold the channel for (``SHARED_OWNER`` for a shared query channel);
    None when they hold no such channel."""
    user = client.hget(keys.channel_meta(channel_id), "user")
    return None if user is None else int(user)


def channels_touch(redis_: Any, channel_ids: Iterable[str], *, now_ms: int) -> Any:
    """Record a sign of life of each channel still in the live index (idle channels expire; an
    ended one is not brought back), on ``redis_``: a client, or a pipeline (sync or asyncio) that
    queues it."""
    return redis_.zadd(keys.channels_index(), dict.fromkeys(channel_ids, now_ms), xx=True)


def channel_forget(client: redis.Redis, channel_id: str) -> None:
    """Drop the channel from the live index (for one the reducers no longer hold)."""
    client.zrem(keys.channels_index(), channel_id)


def channels_idle(client: redis.Redis, *, cutoff_ms: int) -> list[str]:
    """The channels of the live index whose last sign of life is at ``cutoff_ms`` or before."""
    return [raw.decode() for raw in client.zrangebyscore(keys.channels_index(), 0, cutoff_ms)]


def channel_seen(client: redis.Redis, channel_id: str) -> float | None:
    """The channel's last sign of life (epoch ms) in the live index; None once it has left it."""
    seen = client.zscore(keys.channels_index(), channel_id)
    return None if seen is None else float(seen)


@dataclass(frozen=True)
class ListedChannel:
    """A live channel as the operators' list shows it: its meta and its markets."""

    channel_id: str
    seen_ms: int
    user_id: int
    spec: dict[str, Any]
    status: str
    seq: int
    created_ms: int
    markets: list[int]


def channels_recent(client: redis.Redis, *, limit: int) -> list[ListedChannel]:
    """The live channels, most recently active first (at most ``limit``), each with its meta and
    markets, in two round trips; a channel whose meta is gone meanwhile is left out."""
    ranked = client.zrevrange(keys.channels_index(), 0, limit - 1, withscores=True)
    if not ranked:
        return []
    pipe = client.pipeline(transaction=False)
    for member, _ in ranked:
        channel_id = member.decode()
        pipe.hgetall(keys.channel_meta(channel_id))
        pipe.smembers(keys.channel_markets(channel_id))
    results = pipe.execute()
    return [
        ListedChannel(
            channel_id=member.decode(),
            seen_ms=int(seen),
            user_id=int(meta.get(b"user", 0)),
            spec=orjson.loads(meta.get(b"spec", b"{}") or b"{}"),
            status=meta.get(b"status", b"").decode(),
            seq=int(meta.get(b"seq", 0) or 0),
            created_ms=int(meta.get(b"created", 0) or 0),
            markets=sorted(int(m) for m in markets),
        )
        for (member, seen), meta, markets in zip(ranked, results[0::2], results[1::2], strict=True)
        if meta
    ]


def punter_channel_name(user_id: int) -> str:
    """The pub-sub channel of one punter's news (``punter_publish``), for their websockets to
    subscribe to."""
    return keys.punter_channel(user_id)


def punter_publish(client: redis.Redis, user_id: int, message: bytes) -> None:
    """Publish ``message`` (an encoded frame) to every websocket of the punter, in every web process."""
    client.publish(keys.punter_channel(user_id), message)


def subscriber_channel_name(channel_id: str) -> str:
    """The pub-sub channel carrying the channel's frames, for the websockets attached to it."""
    return keys.subscriber_channel(channel_id)


# The connection caps: one sorted set per user or client address (``keys.websocket_connections``),
# a member per open websocket scored by when its place lapses (refreshed by its process's
# keep-alive, so a process that dies frees its places). KEYS are the caps' sets; ARGV[1] the
# connection, ARGV[2] now, ARGV[3] when the place lapses, ARGV[3 + i] the cap of KEYS[i]. Returns
# the index of the first full cap (nothing taken then), or 0 once a place is taken under each.
ADMIT_CONNECTION = """
for i, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', ARGV[2])
  if redis.call('ZCARD', key) >= tonumber(ARGV[3 + i]) then return i end
end
for i, key in ipairs(KEYS) do
  redis.call('ZADD', key, ARGV[3], ARGV[1])
  redis.call('PEXPIREAT', key, ARGV[3])
end
return 0
"""


def connections_counted(kind: str, who: str) -> str:
    """The sorted set counting the open websockets of one user (``kind`` "user") or client address
    ("ip", "anonymous"), across processes: the hub's connection caps take places under it."""
    return keys.websocket_connections(kind, who)


def connections_admit_script(client: Any) -> Any:
    """The admission script registered on ``client`` (redis-py's asyncio client), for
    ``connections_admit``."""
    return client.register_script(ADMIT_CONNECTION)


async def connections_admit(
    script: Any, *, connection_id: str, caps: Sequence[tuple[str, int]], now_ms: int, lapses_ms: int
) -> int:
    """Take a place for the connection under each (set, cap) of ``caps`` at once, places lapsed
    before ``now_ms`` dropped first; the index (from 1) of the first full cap, nothing taken then,
    or 0 when admitted."""
    return int(
        await script(keys=[key for key, _ in caps], args=[connection_id, now_ms, lapses_ms, *[cap for _, cap in caps]])
    )


async def connections_release(client: Any, *, connection_id: str, held: Sequence[str]) -> None:
    """Give back the connection's places in the caps' sets ``held``, in one round trip."""
    pipe = client.pipeline(transaction=False)
    for key in held:
        pipe.zrem(key, connection_id)
    await pipe.execute()


def connections_keep(pipe: Any, *, connections: Iterable[tuple[str, Sequence[str]]], lapses_ms: int) -> None:
    """Queue on ``pipe`` the refresh until ``lapses_ms`` of the places each (connection id, cap
    keys held) holds: one command per cap key for all its connections (only places still held: a
    place already lapsed is not taken again)."""
    by_key: dict[str, dict[str, int]] = {}
    for connection_id, held in connections:
        for key in held:
            by_key.setdefault(key, {})[connection_id] = lapses_ms
    for key, members in by_key.items():
        pipe.zadd(key, members, xx=True)
        pipe.pexpireat(key, lapses_ms)


def log_frames(raw: Iterable[Any]) -> list[str]:
    """A channel's log as read (``keys.channel_log``, newest first) as frames in sequence order."""
    return sorted((bytes(f).decode() for f in raw), key=frames.frame_seq)


async def channel_log_read(client: aioredis.Redis, channel_id: str) -> list[str]:
    """The frames of the channel's log, in sequence order."""
    return log_frames(await client.lrange(keys.channel_log(channel_id), 0, -1))


@dataclass(frozen=True)
class Recovery:
    """What a websocket reads back of an attached channel after its hub reconnected: whether the
    channel still lives, why it ended (when it says), and its log in sequence order."""

    alive: bool
    ended: str | None
    logged: list[str]


def queue_recovery(pipe: Any, channel_id: str) -> None:
    """Queue on ``pipe`` the reads of a ``Recovery`` (``recovery`` reads the replies). A punter's
    channel lives while its owner binding does, a shared one while its meta hash does."""
    alive = keys.channel_meta(channel_id) if is_shared_channel(channel_id) else keys.channel_owner(channel_id)
    pipe.exists(alive)
    pipe.hget(keys.channel_ended(channel_id), "reason")
    pipe.lrange(keys.channel_log(channel_id), 0, -1)


def recovery(replies: Sequence[Any]) -> Recovery:
    """The ``Recovery`` from the replies of ``queue_recovery``."""
    found, reason, raw = replies
    return Recovery(alive=bool(found), ended=reason.decode() if reason else None, logged=log_frames(raw))


async def shared_image(client: aioredis.Redis, channel_id: str) -> str | None:
    """A shared channel's image at its current sequence (every market it holds), read in one
    transaction so every frame after it has a higher sequence; None while the reducers are still
    making the channel."""
    pipe = client.pipeline(transaction=True)
    pipe.hget(keys.channel_meta(channel_id), "seq")
    pipe.smembers(keys.channel_markets(channel_id))
    seq, members = await pipe.execute()
    if seq is None:
        return None
    return frames.stamp(query_frame(channel_id=channel_id, markets=sorted(int(m) for m in members)), seq=int(seq))
