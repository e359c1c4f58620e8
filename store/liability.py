"""The trading desk's books in Redis: liability per selection and per outcome, and the ticker.

The liability reducer (spark/jobs/liability.py) decides what each bet event changes
(``reducers.liability``); this module carries it out. One script per bet event marks the event
seen and, only if it was not seen before, in the same step:

* adds its exposure to each selection's liability (``keys.liability``, ranked in
  ``keys.liability_index``);
* adds its stake and return to each of its markets' books (``keys.market_book``), works out the
  market's worst outcome again, ranks the market (``keys.market_books_index``) and its event
  (``keys.event_book``, ``keys.event_books_index``); a market with no open bet left is removed;
* publishes its ``desk.bet`` frame on the ticker's staff channel (``keys.desk_ticker_channel``)
  and keeps it in the ticker's log (``keys.desk_ticker_log``).

A redelivered event (at-least-once) finds its marker and changes nothing: counted and published
exactly once. A batch's scripts go in one round trip; so do the reads of the books it moved and
the ``desk.liability`` frame that carries them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from reducers import keys
from reducers.liability import LiabilityDelta, MarketBook, OutcomeDelta, book_from_hash

# How many ``desk.bet`` frames the ticker's log keeps for a page's first image.
TICKER_LOG = 200

# KEYS: the seen marker, the selection index, the market index, the event index, the ticker log;
# then each selection delta's liability hash; then each market delta's book and event book.
# ARGV: the marker's TTL, the ticker channel, the ticker frame, the log's length, the number of
# selection deltas, the number of market deltas; then each selection delta's (pence, bets,
# selection id); then each market delta's (staked, returns, bets, selection id, market id, event id).
# Returns 1 when the event was counted, 0 when it had been already.
APPLY_ONCE = """
if redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[1]) == false then return 0 end
local ns, nm = tonumber(ARGV[5]), tonumber(ARGV[6])
local at = 7
for i = 1, ns do
  local pence = tonumber(ARGV[at])
  redis.call('HINCRBY', KEYS[5 + i], 'pence', pence)
  redis.call('HINCRBY', KEYS[5 + i], 'bets', tonumber(ARGV[at + 1]))
  redis.call('ZINCRBY', KEYS[2], pence, ARGV[at + 2])
  at = at + 3
end
for i = 1, nm do
  local book, evbook = KEYS[5 + ns + 2 * i - 1], KEYS[5 + ns + 2 * i]
  local market, event = ARGV[at + 4], ARGV[at + 5]
  redis.call('HINCRBY', book, 'staked', ARGV[at])
  redis.call('HINCRBY', book, 'r:' .. ARGV[at + 3], ARGV[at + 1])
  local bets = redis.call('HINCRBY', book, 'bets', ARGV[at + 2])
  local old = tonumber(redis.call('HGET', evbook, market) or '0')
  local new = 0
  if bets <= 0 then
    redis.call('DEL', book)
    redis.call('ZREM', KEYS[3], market)
    redis.call('HDEL', evbook, market)
  else
    local fields = redis.call('HGETALL', book)
    local staked, top, topsel = 0, 0, nil
    for f = 1, #fields, 2 do
      local name = fields[f]
      if name == 'staked' then
        staked = tonumber(fields[f + 1])
      elseif string.sub(name, 1, 2) == 'r:' then
        local r, sel = tonumber(fields[f + 1]), tonumber(string.sub(name, 3))
        if r > top or (r == top and topsel ~= nil and sel < topsel) then
          top, topsel = r, sel
        end
      end
    end
    new = staked - top
    redis.call('HSET', book, 'event', event, 'worst', new, 'worst_sel', topsel or '')
    redis.call('ZADD', KEYS[3], -new, market)
    redis.call('HSET', evbook, market, new)
  end
  if redis.call('HLEN', evbook) == 0 then
    redis.call('ZREM', KEYS[4], event)
  else
    redis.call('ZINCRBY', KEYS[4], old - new, event)
  end
  at = at + 6
end
redis.call('LPUSH', KEYS[5], ARGV[3])
redis.call('LTRIM', KEYS[5], 0, tonumber(ARGV[4]) - 1)
redis.call('PUBLISH', ARGV[2], ARGV[3])
return 1
"""


def desk_channels() -> list[str]:
    """The trading desk's staff pub-sub channels: the ticker's, the books' and the price movers'."""
    return [keys.desk_ticker_channel(), keys.desk_liability_channel(), keys.desk_movers_channel()]


@dataclass(frozen=True)
class BookChange:
    """What one bet event changes: its id, its deltas and its ticker frame (encoded)."""

    event_id: str
    selections: Sequence[LiabilityDelta]
    markets: Sequence[OutcomeDelta]
    ticker: bytes


class BookStore:
    """The books, their rankings and the ticker's log; the only code that spells their keys."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self._script = client.register_script(APPLY_ONCE)

    def apply(self, changes: Sequence[BookChange], *, seen_ttl_s: int) -> list[int | Exception]:
        """Count each change once (one script each, all in one round trip): 1 when counted, 0
        when seen before, the error when its script failed (the others still ran)."""
        if not changes:
            return []
        pipe = self._client.pipeline(transaction=False)
        for change in changes:
            keys_ = [
                keys.bet_event_seen(change.event_id),
                keys.liability_index(),
                keys.market_books_index(),
                keys.event_books_index(),
                keys.desk_ticker_log(),
                *(keys.liability(d.selection_id) for d in change.selections),
            ]
            args: list[Any] = [
                seen_ttl_s,
                keys.desk_ticker_channel(),
                change.ticker,
                TICKER_LOG,
                len(change.selections),
                len(change.markets),
            ]
            for s in change.selections:
                args.extend([s.pence, s.bets, s.selection_id])
            for m in change.markets:
                keys_.extend([keys.market_book(m.market_id), keys.event_book(m.event_id)])
                args.extend([m.staked, m.returns, m.bets, m.selection_id, m.market_id, m.event_id])
            self._script(keys=keys_, args=args, client=pipe)
        replies = pipe.execute(raise_on_error=False)
        return [reply if isinstance(reply, Exception) else int(reply) for reply in replies]

    def books(self, market_ids: Iterable[int]) -> tuple[dict[int, MarketBook], dict[int, int]]:
        """The books of these markets (a market with no open bet has an empty one) and the worst
        case of each of their events (the sum of its markets' worst P/L), in one round trip."""
        ids = sorted(set(market_ids))
        if not ids:
            return {}, {}
        pipe = self._client.pipeline(transaction=False)
        for market_id in ids:
            pipe.hgetall(keys.market_book(market_id))
        books = {m: book_from_hash(m, raw) for m, raw in zip(ids, pipe.execute(), strict=True)}
        return books, self.event_worsts({b.event_id for b in books.values() if b.event_id})

    def event_worsts(self, event_ids: Iterable[int]) -> dict[int, int]:
        """Each event's worst case in pence (0 for an event with no open bet)."""
        ids = sorted(set(event_ids))
        if not ids:
            return {}
        scores = self._client.zmscore(keys.event_books_index(), [str(e) for e in ids])
        return {e: -int(score) if score is not None else 0 for e, score in zip(ids, scores, strict=True)}

    def replace(self, books: Mapping[int, MarketBook]) -> None:
        """Make ``books`` (market id → book, the open bets' whole figure) every book there is, in
        one transaction: what the site's restore does once the reducer has read every bet event
        (odds/ops/services/restore.py); the seen-markers are the selection store's to set."""
        old_markets = self._client.zrange(keys.market_books_index(), 0, -1)
        old_events = self._client.zrange(keys.event_books_index(), 0, -1)
        pipe = self._client.pipeline(transaction=True)
        for market_id in old_markets:
            pipe.delete(keys.market_book(int(market_id)))
        for event_id in old_events:
            pipe.delete(keys.event_book(int(event_id)))
        pipe.delete(keys.market_books_index(), keys.event_books_index())
        worsts: dict[int, int] = {}
        for market_id, book in books.items():
            if not book.bets:
                continue
            mapping: dict[str, Any] = {
                "staked": book.staked,
                "bets": book.bets,
                "event": book.event_id,
                "worst": book.worst,
                "worst_sel": book.worst_selection or "",
            }
            mapping.update({f"r:{selection_id}": pence for selection_id, pence in book.returns})
            pipe.hset(keys.market_book(market_id), mapping=mapping)
            pipe.zadd(keys.market_books_index(), {str(market_id): -book.worst})
            pipe.hset(keys.event_book(book.event_id), str(market_id), book.worst)
            worsts[book.event_id] = worsts.get(book.event_id, 0) + book.worst
        for event_id, worst in worsts.items():
            pipe.zadd(keys.event_books_index(), {str(event_id): -worst})
        pipe.execute()

    def publish_liability(self, frame: bytes) -> None:
        self._client.publish(keys.desk_liability_channel(), frame)

    def riskiest_events(self, *, limit: int) -> list[tuple[int, int]]:
        """Events by worst-case loss, largest first: (event id, worst P/L in pence)."""
        ranked = self._client.zrevrange(keys.event_books_index(), 0, limit - 1, withscores=True)
        return [(int(member), -int(score)) for member, score in ranked]

    def markets_of_events(self, event_ids: Sequence[int]) -> dict[int, list[int]]:
        """The markets of each event that have open bets."""
        pipe = self._client.pipeline(transaction=False)
        for event_id in event_ids:
            pipe.hkeys(keys.event_book(event_id))
        return {e: sorted(int(m) for m in found) for e, found in zip(event_ids, pipe.execute(), strict=True)}

    def ticker(self, *, limit: int = TICKER_LOG) -> list[bytes]:
        """The newest ``desk.bet`` frames, newest first."""
        return list(self._client.lrange(keys.desk_ticker_log(), 0, limit - 1))
