"""The Redis store of the reducers' state: the one place that knows each Redis layout.

The decisions in ``reducers/`` return effects; this module carries them out against a Redis
client it is handed (redis-py's, or anything with its interface), and reads what the decisions
need. The Spark jobs and the site read and write the markets table, market states, kept prices
and movers only through it. It imports no client library: the process that owns the connection
passes it in.

Market states: Redis is written before anything is published, and an update whose sequence is
not newer than the stored one is neither stored nor published, so replays are harmless. When a
market's status changes (suspended, reopened, closed) an explicit status message goes out just
before the new state.

The store applies whatever it is given; the price reducer first keeps prices of markets the
markets table does not know out of it (``keep_unknown``, decided by ``reducers.prices.admit``),
and the markets query applies the kept price when the market's definition arrives
(``kept_prices``, ``discard_kept``).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from reducers import frames
from reducers.frames import MarketFrame
from reducers.liability import SelectionTotal
from reducers.markets import StoredDefinition, WriteDefinition
from reducers.movers import KEEP_WINDOWS_S, Move, movers_frame
from reducers.prices import Conflated, encode_state, market_state, restated, status_change
from reducers.rates import rates_from_hash
from reducers.schemas import InvalidRecord, MarketDefinition, decode_market_definition, decode_price_update
from store import keys
from store.clients import NoScriptError
from store.latency import pipeline_observe

# Each market of a call stored and published if its sequence is newer than the stored one;
# returns 1 or 0 per market. KEYS[1] is the fan-out journal (``keys.fanout_journal``) and
# ARGV[1] says whether to write it ('1'): a market applied is added to it in the same step, so
# a batch that fails before its channels hear of the market fans it out again. Then each market:
# its key in KEYS[i + 1], its seven arguments from ARGV[7i - 5] (sequence, state, channel,
# status, status message, the feed's own status, market id).
APPLY_IF_NEWER = """
local done = {}
local journal = ARGV[1] == '1'
for i = 1, #KEYS - 1 do
  local key, at = KEYS[i + 1], (i - 1) * 7 + 1
  local seq, state, channel = ARGV[at + 1], ARGV[at + 2], ARGV[at + 3]
  local status, change, price_status = ARGV[at + 4], ARGV[at + 5], ARGV[at + 6]
  local stored = redis.call('HMGET', key, 'seq', 'status')
  if stored[1] and tonumber(stored[1]) >= tonumber(seq) then
    done[i] = 0
  else
    redis.call('HSET', key, 'seq', seq, 'state', state, 'status', status, 'price_status', price_status)
    if stored[2] and stored[2] ~= status then
      redis.call('PUBLISH', channel, change)
    end
    redis.call('PUBLISH', channel, state)
    if journal then
      redis.call('SADD', KEYS[1], ARGV[at + 7])
    end
    done[i] = 1
  end
end
return done
"""

# The ``status`` field of each hash of KEYS (nil where there is none).
STATUSES = """
local found = {}
for i, key in ipairs(KEYS) do
  found[i] = redis.call('HGET', key, 'status') or false
end
return found
"""

# The members of each set of KEYS.
MEMBERS = """
local found = {}
for i, key in ipairs(KEYS) do
  found[i] = redis.call('SMEMBERS', key)
end
return found
"""

# The most markets one script call takes. A call runs alone on the Redis server (about 2 µs a
# market for the statuses, 10 for an apply), so a batch's markets go in calls of this many, all
# in one round trip: one call per market cost the reducers' driver about 15 µs of redis-py's
# packing and parsing per market, three times a batch.
SCRIPT_MARKETS = 256


def per_market(client: Any, script: Any, markets: Sequence[tuple[str, Sequence[Any]]]) -> list[Any]:
    """``script``'s reply for each (key, arguments) of ``markets``, for a script (registered with
    ``client``) that takes the markets' keys in KEYS and their arguments in ARGV, in the same
    order, and answers each in order (``STATUSES``, ``MEMBERS``): calls of ``SCRIPT_MARKETS``
    markets, all in one round trip."""
    chunks = [markets[at : at + SCRIPT_MARKETS] for at in range(0, len(markets), SCRIPT_MARKETS)]
    calls = [([key for key, _ in chunk], [a for _, args in chunk for a in args]) for chunk in chunks]
    return [reply for chunk_replies in script_calls(client, script, calls) for reply in chunk_replies]


def script_calls(
    client: Any, script: Any, calls: Sequence[tuple[Sequence[Any], Sequence[Any]]], *, then: Sequence[str] = ()
) -> list[Any]:
    """Run ``script`` (registered with ``client``) once for each (KEYS, ARGV) of ``calls``, all in
    one round trip, and return each call's reply; ``then``: keys deleted in the same round trip,
    after the calls. When Redis does not have the script (it restarted, or its scripts were
    flushed) every call failed alike, so none ran: it is loaded and the calls run again."""

    def run() -> list[Any]:
        # EVALSHA straight into the pipeline: a script registered with the pipeline costs a
        # SCRIPT EXISTS round trip before every execution.
        pipe = client.pipeline(transaction=False)
        for names, args in calls:
            pipe.evalsha(script.sha, len(names), *names, *args)
        if then:
            pipe.delete(*then)
        return list(pipe.execute())[: len(calls)]

    if not calls and not then:
        return []
    try:
        return run()
    except NoScriptError:
        client.script_load(script.script)
        return run()


# A market's status re-derived after its row in the markets table changed (a trader reopened it,
# say, after the reopening price had already been applied under the old row). Same sequence, same
# prices, new status; only if no newer price was applied meanwhile and the status really changes.
RESTATUS = """
local cur = redis.call('HGET', KEYS[1], 'seq')
if not cur or cur ~= ARGV[1] then
  return 0
end
if redis.call('HGET', KEYS[1], 'status') == ARGV[3] then
  return 0
end
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'status', ARGV[3])
redis.call('PUBLISH', ARGV[4], ARGV[5])
redis.call('PUBLISH', ARGV[4], ARGV[2])
if ARGV[6] ~= '' then
  redis.call('SADD', KEYS[2], ARGV[6])
end
return 1
"""

# Checked against the markets table and kept in one script: a definition the markets query
# writes meanwhile is either seen here (the status is returned and the price is applied at once)
# or written before the markets query reads the kept price back (and applies it then).
KEEP_IF_UNKNOWN = """
local status = redis.call('HGET', KEYS[1], 'status')
if status then
  return status
end
local cur = redis.call('HGET', KEYS[2], 'seq')
if not cur or tonumber(cur) < tonumber(ARGV[1]) then
  redis.call('HSET', KEYS[2], 'seq', ARGV[1], 'value', ARGV[2], 'kafka_ts', ARGV[3])
end
redis.call('HINCRBY', KEYS[2], 'merged', ARGV[4])
redis.call('EXPIRE', KEYS[2], ARGV[5])
return false
"""


class MarketStore:
    """The markets table, each market's applied state and the prices kept for unknown markets.

    Writes are pipelined, one round trip per call; the apply and restatus scripts store and
    publish atomically."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self._script = client.register_script(APPLY_IF_NEWER)
        self._statuses = client.register_script(STATUSES)
        self._keep = client.register_script(KEEP_IF_UNKNOWN)
        self._restatus = client.register_script(RESTATUS)

    def table_statuses(self, market_ids: Sequence[int]) -> list[str | None]:
        """Each market's status in the markets table (``None`` when the table has no entry)."""
        found = per_market(self._client, self._statuses, [(keys.market_definition(m), ()) for m in market_ids])
        return [raw.decode() if raw is not None else None for raw in found]

    def apply(
        self,
        items: Sequence[Conflated],
        *,
        table_statuses: Sequence[str | None] | None = None,
        journal: str | None = None,
    ) -> dict[int, MarketFrame]:
        """Apply the items; return the states that were newer than the stored ones, by market.
        Their pipeline stages are added to the latency histograms (``reducers.latency``).

        ``table_statuses`` are the items' statuses in the markets table when the caller has just
        read them; otherwise they are read here. ``journal``: the fan-out journal the applied
        markets are added to, in the same step as their states (the caller's fan-out deletes it).
        """
        if not items:
            return {}
        now = int(time.time() * 1000)
        if table_statuses is None:
            table_statuses = self.table_statuses([item.update.market_id for item in items])
        states = [
            market_state(item=item, reducer_ts=now, table_status=table_status)
            for item, table_status in zip(items, table_statuses, strict=True)
        ]

        markets = [
            (
                keys.market_state(item.update.market_id),
                (
                    item.update.seq,
                    encode_state(state),
                    keys.market_channel(item.update.market_id),
                    state["status"],
                    encode_state(status_change(state=state)),
                    item.update.status,
                    item.update.market_id,
                ),
            )
            for item, state in zip(items, states, strict=True)
        ]
        # An unused key of the journal's kind stands in KEYS[1] when there is no journal to write.
        journal_key, journaled = (journal, "1") if journal is not None else (keys.fanout_journal(""), "0")
        chunks = [markets[at : at + SCRIPT_MARKETS] for at in range(0, len(markets), SCRIPT_MARKETS)]
        calls = [
            ([journal_key, *(key for key, _ in chunk)], [journaled, *(a for _, args in chunk for a in args)])
            for chunk in chunks
        ]
        done_of = [done for reply in script_calls(self._client, self._script, calls) for done in reply]
        applied = {state["market_id"]: state for state, done in zip(states, done_of, strict=True) if int(done)}
        if applied:
            latencies = self._client.pipeline(transaction=True)
            pipeline_observe(latencies, applied.values())
            latencies.execute()
        return applied

    def restatus(self, market_ids: Sequence[int], *, journal: str | None = None) -> dict[int, MarketFrame]:
        """Re-derive the stored state of markets whose row in the markets table just changed;
        return the states whose status changed (published with a status message, like a price).
        ``journal``: the fan-out journal a restated market is added to, as in ``apply``."""
        if not market_ids:
            return {}
        pipe = self._client.pipeline(transaction=False)
        for market_id in market_ids:
            pipe.hmget(keys.market_state(market_id), "seq", "state", "price_status")
        stored = pipe.execute()
        table = self.table_statuses(market_ids)
        now = int(time.time() * 1000)
        pipe = self._client.pipeline(transaction=False)
        states = []
        for market_id, (seq, raw_state, price_status), table_status in zip(market_ids, stored, table, strict=True):
            if seq is None or raw_state is None or price_status is None:
                continue  # no price yet (or stored before the feed's own status was kept)
            state = restated(
                state=frames.read_market(raw_state),
                price_status=price_status.decode(),
                table_status=table_status,
                reducer_ts=now,
            )
            if state is None:
                continue
            states.append(state)
            self._restatus(
                keys=[keys.market_state(market_id), journal or keys.fanout_journal("")],
                args=[
                    seq,
                    encode_state(state),
                    state["status"],
                    keys.market_channel(market_id),
                    encode_state(status_change(state=state)),
                    market_id if journal is not None else "",
                ],
                client=pipe,
            )
        return {
            state["market_id"]: state for state, applied in zip(states, pipe.execute(), strict=True) if int(applied)
        }

    def keep_unknown(self, items: Sequence[Conflated], *, ttl_s: int) -> list[str | None]:
        """Keep each item whose market the markets table does not know, for ``ttl_s`` seconds.

        Per market only the highest sequence is kept (a price is a full snapshot of the book).
        Returns, per item, ``None`` when it was kept, or the table's status when the market's
        definition arrived since the caller looked it up (the item was not kept).
        """
        pipe = self._client.pipeline(transaction=False)
        for item in items:
            market_id = item.update.market_id
            self._keep(
                keys=[keys.market_definition(market_id), keys.unknown_market_price(market_id)],
                args=[item.update.seq, item.update.encode(), item.kafka_ts, item.merged, ttl_s],
                client=pipe,
            )
        return [raw.decode() if raw is not None else None for raw in pipe.execute()]

    def kept_prices(self, market_ids: Sequence[int]) -> list[Conflated]:
        """The kept price of each of the markets that has one."""
        pipe = self._client.pipeline(transaction=False)
        for market_id in market_ids:
            pipe.hgetall(keys.unknown_market_price(market_id))
        return [
            Conflated(decode_price_update(kept[b"value"]), int(kept[b"merged"]), int(kept[b"kafka_ts"]))
            for kept in pipe.execute()
            if kept
        ]

    def discard_kept(self, market_ids: Sequence[int]) -> None:
        """Forget the markets' kept prices (once applied)."""
        if market_ids:
            self._client.delete(*(keys.unknown_market_price(market_id) for market_id in market_ids))

    # --- the markets table ---

    def stored_definitions(self, market_ids: Sequence[int]) -> dict[int, StoredDefinition]:
        """The version and status the table holds of each market, in one round trip."""
        ids = list(dict.fromkeys(market_ids))
        pipe = self._client.pipeline(transaction=False)
        for market_id in ids:
            pipe.hmget(keys.market_definition(market_id), "version", "status")
        return {
            market_id: StoredDefinition(
                version=int(version) if version is not None else None,
                status=status.decode() if status is not None else None,
            )
            for market_id, (version, status) in zip(ids, pipe.execute(), strict=True)
        }

    def execute_definition(self, effect: WriteDefinition) -> None:
        """Write one decision of ``reducers.markets`` atomically."""
        pipe = self._client.pipeline(transaction=True)
        key = keys.market_definition(effect.market_id)
        pipe.delete(key)
        definition = effect.definition
        if definition is None:
            pipe.hset(key, mapping={"status": "closed", "removed": 1})
            pipe.srem(keys.market_definitions_index(), effect.market_id)
            pipe.zrem(keys.markets_by_start(), effect.market_id)
        else:
            pipe.hset(
                key, mapping={"version": definition.version, "status": definition.status, "def": definition.encode()}
            )
            pipe.sadd(keys.market_definitions_index(), definition.market_id)
            pipe.sadd(keys.event_markets(definition.event_id), definition.market_id)
            if definition.event_status == "scheduled":
                pipe.zadd(keys.markets_by_start(), {str(definition.market_id): definition.starts_at})
            else:
                pipe.zrem(keys.markets_by_start(), definition.market_id)
        pipe.execute()

    def definitions(self, market_ids: Iterable[int]) -> dict[int, MarketDefinition]:
        """The definitions the table holds of these markets (absent, removed and damaged rows
        left out)."""
        ids = sorted(set(market_ids))
        if not ids:
            return {}
        pipe = self._client.pipeline(transaction=False)
        for market_id in ids:
            pipe.hget(keys.market_definition(market_id), "def")
        found = {}
        for market_id, raw in zip(ids, pipe.execute(), strict=True):
            if raw is None:
                continue
            try:
                definition = decode_market_definition(raw)
            except InvalidRecord:
                continue
            if definition is not None:
                found[market_id] = definition
        return found

    def all_definitions(self) -> list[MarketDefinition]:
        """Every definition in the table."""
        ids = [int(m) for m in self._client.smembers(keys.market_definitions_index())]
        return list(self.definitions(ids).values())

    def sample_market_ids(self, count: int) -> list[int]:
        """Up to ``count`` markets of the table, chosen at random."""
        return sorted(int(m) for m in self._client.srandmember(keys.market_definitions_index(), count) or [])

    # --- applied states ---

    def states(self, market_ids: Iterable[int]) -> dict[int, MarketFrame]:
        """Each market's applied state (markets without one left out), in one round trip."""
        ids = sorted(set(market_ids))
        if not ids:
            return {}
        pipe = self._client.pipeline(transaction=False)
        queue_states(pipe, ids)
        return {market_id: frames.read_market(raw) for market_id, raw in raw_states(ids, pipe.execute()).items()}

    # --- movers ---

    def rank_movers(self, best: Mapping[tuple[int, int], Move], *, now_ms: int | None = None) -> None:
        """Record each (window start, market) move in the window's ranking (scored by its absolute
        move) and beside it (the selection, its prices, the signed move), drop rankings older than
        ``KEEP_WINDOWS_S`` and tell the traders' movers pages which windows moved (``desk.movers``).
        In one round trip; a batch read twice writes the same values again."""
        if not best:
            return
        now_ms = now_ms if now_ms is not None else int(time.time() * 1000)
        pipe = self._client.pipeline(transaction=False)
        for (window_start, market_id), move in best.items():
            pipe.zadd(keys.movers(window_start), {str(market_id): abs(move.bps)})
            pipe.hset(keys.movers_moves(window_start), str(market_id), move.encode())
            pipe.expire(keys.movers(window_start), KEEP_WINDOWS_S)
            pipe.expire(keys.movers_moves(window_start), KEEP_WINDOWS_S)
            pipe.zadd(keys.movers_index(), {str(window_start): window_start})
        pipe.zremrangebyscore(keys.movers_index(), 0, now_ms - KEEP_WINDOWS_S * 1000)
        pipe.publish(keys.desk_movers_channel(), movers_frame((w for w, _ in best), ts=now_ms))
        pipe.execute()

    def movers(self, *, windows: int, top: int) -> list[tuple[int, list[tuple[int, Move]]]]:
        """The newest ``windows`` windows (newest first), each with its ``top`` markets by absolute
        move, biggest first: (window start, [(market id, move)]). Two round trips."""
        starts = [int(w) for w in self._client.zrevrange(keys.movers_index(), 0, windows - 1)]
        if not starts:
            return []
        pipe = self._client.pipeline(transaction=False)
        for start in starts:
            pipe.zrevrange(keys.movers(start), 0, top - 1)
            pipe.hgetall(keys.movers_moves(start))
        answers = pipe.execute()
        out = []
        for i, start in enumerate(starts):
            ranked, moves = answers[2 * i], answers[2 * i + 1]
            rows = [(int(m), Move.decode(moves[m])) for m in ranked if m in moves]
            out.append((start, rows))
        return out


class ReplicationLag(RuntimeError):
    """Fewer replicas than required acknowledged the writes in time: the batch is not done."""


def replicas_acknowledge(client: Any, *, replicas: int, timeout_ms: int) -> None:
    """Return once ``replicas`` replicas hold every write made so far, whichever connection made
    it, else raise ``ReplicationLag``: a batch that returns has state a failover keeps. A mark
    is written and waited for on one connection (WAIT covers that connection's writes; a
    replica that acknowledges the mark holds everything the master ran before it)."""
    if replicas <= 0:
        return
    pipe = client.pipeline(transaction=False)
    pipe.incr(keys.replication_mark())
    pipe.execute_command("WAIT", replicas, timeout_ms)
    acknowledged = int(pipe.execute()[1])
    if acknowledged < replicas:
        raise ReplicationLag(f"{acknowledged} of {replicas} replicas acknowledged the writes within {timeout_ms} ms")


class Pipeline(Protocol):
    """What the read helpers need of a pipeline (redis-py's, sync or asyncio)."""

    def hget(self, name: str, key: str) -> Any: ...


def queue_states(pipe: Pipeline, market_ids: Sequence[int]) -> None:
    """Queue on ``pipe`` the reads of each market's applied state (for callers that run their own
    pipeline, such as the asyncio websocket consumer); ``raw_states`` reads the replies."""
    for market_id in market_ids:
        pipe.hget(keys.market_state(market_id), "state")


def raw_states(market_ids: Sequence[int], replies: Sequence[Any]) -> dict[int, bytes]:
    """The encoded state of each market that has one, from the replies of ``queue_states``."""
    return {market_id: raw for market_id, raw in zip(market_ids, replies, strict=True) if raw is not None}


def queue_live_states(pipe: Any, market_ids: Sequence[int], queries: Sequence[str]) -> None:
    """Queue on ``pipe`` (sync or asyncio) what pricing a bet reads: per market the sequence and
    state the reducers applied, then the sequence and state of the newest trader decision on it,
    and last the signs of life (``reducer_seen``, epoch milliseconds) of ``queries``."""
    for market_id in market_ids:
        pipe.hmget(keys.market_state(market_id), ["seq", "state"])
        pipe.hmget(keys.trader_decision(market_id), ["seq", "state"])
    pipe.hmget(keys.reducer_seen(), list(queries))


def trader_decision_write(client: Any, *, market_id: int, seq: int, state: bytes, ttl_s: int) -> None:
    """Keep a trader's decision on a market (its sequence and encoded state) for ``ttl_s``, in one
    transaction: bets and cash-outs read it beside the applied state until the reducers have
    applied a newer sequence."""
    pipe = client.pipeline(transaction=True)
    key = keys.trader_decision(market_id)
    pipe.hset(key, mapping={"seq": seq, "state": state})
    pipe.expire(key, ttl_s)
    pipe.execute()


def sequences_next(client: Any, market_ids: Sequence[int]) -> list[int]:
    """Hand out the next source sequence number of each market (one round trip): the feed and
    the traders' decisions share one counter per market, so their updates are ordered."""
    pipe = client.pipeline(transaction=False)
    for market_id in market_ids:
        pipe.hincrby(keys.source_sequences(), str(market_id), 1)
    return [int(s) for s in pipe.execute()]


def price_channels(market_ids: Sequence[int]) -> list[str]:
    """The public pub-sub channels of the markets' applied updates."""
    return [keys.market_channel(market_id) for market_id in market_ids]


def price_channel_prefix() -> bytes:
    """What the name of every market's price channel starts with (to tell their messages apart)."""
    return keys.market_channel_pattern().removesuffix("*").encode()


class LiabilityStore:
    """Liability per selection (``keys.liability``, ranked in ``keys.liability_index``) and the
    liability reducer's seen-markers (``keys.bet_event_seen``), as the site replaces them whole.
    The reducer itself adds to them one event at a time (spark/jobs/liability.py)."""

    def __init__(self, client: Any) -> None:
        self._client = client

    def replace(
        self, totals: Mapping[int, SelectionTotal], *, seen: Iterable[str], unseen: Iterable[str], seen_ttl_s: int
    ) -> None:
        """Make ``totals`` (selection → open exposure per currency, open bets) the whole figure,
        converted and ranked at the rates held, in one transaction; mark ``seen`` event ids
        counted and forget ``unseen`` ones."""
        rates = rates_from_hash(self._client.hgetall(keys.exchange_rates()))
        old = [int(member) for member in self._client.zrange(keys.liability_index(), 0, -1)]
        pipe = self._client.pipeline(transaction=True)
        for selection_id in old:
            pipe.delete(keys.liability(selection_id))
        pipe.delete(keys.liability_index())
        for selection_id, total in totals.items():
            pence = total.in_book(rates)
            mapping: dict[str, int] = {"pence": pence, "bets": total.bets}
            mapping.update({f"c:{currency}": amount for currency, amount in total.pence})
            pipe.hset(keys.liability(selection_id), mapping=mapping)
            pipe.zadd(keys.liability_index(), {str(selection_id): pence})
        for event_id in seen:
            pipe.set(keys.bet_event_seen(event_id), "1", ex=seen_ttl_s)
        forget = [keys.bet_event_seen(event_id) for event_id in unseen]
        if forget:
            pipe.delete(*forget)
        pipe.execute()

    def totals(self) -> dict[int, SelectionTotal]:
        """Every selection's open exposure per currency and open bets, as stored."""
        ids = [int(member) for member in self._client.zrange(keys.liability_index(), 0, -1)]
        pipe = self._client.pipeline(transaction=False)
        for selection_id in ids:
            pipe.hgetall(keys.liability(selection_id))
        return {
            selection_id: SelectionTotal(
                tuple(sorted((k[2:].decode(), int(v)) for k, v in raw.items() if k.startswith(b"c:") and int(v))),
                int(raw.get(b"bets", 0)),
            )
            for selection_id, raw in zip(ids, pipe.execute(), strict=True)
        }
