"""The trading desk's books in Redis: liability per selection and per outcome, and the ticker.

The liability reducer (spark/jobs/liability.py) decides what each bet event changes
(``reducers.liability``); this module carries it out. One script per bet event marks the event
seen and, only if it was not seen before, in the same step:

* adds its exposure, in pence of the bet's currency, to each selection's liability
  (``keys.liability``), converts the selection's per-currency sums at the operator's rates
  (``keys.exchange_rates``) and ranks it by that (``keys.liability_index``);
* adds its stake and return, in pence of its currency, to each of its markets' books
  (``keys.market_book``), works out the market's worst outcome in book pence again, ranks the
  market (``keys.market_books_index``) and its event (``keys.event_book``,
  ``keys.event_books_index``); a market with no open bet left is removed;
* publishes its ``desk.bet`` frame on the ticker's staff channel (``keys.desk_ticker_channel``)
  and keeps it in the ticker's log (``keys.desk_ticker_log``).

A redelivered event (at-least-once) finds its marker and changes nothing: counted and published
exactly once. A batch's scripts go in one round trip; so do the reads of the books it moved and
the ``desk.liability`` frame that carries them. Amounts are kept exactly per currency, so a bet's
subtraction cancels its addition whatever the rates did in between; only the converted figures
and the rankings move when the operator changes a rate (``BookStore.rerank``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from reducers.liability import LiabilityDelta, MarketBook, OutcomeDelta, book_from_hash
from reducers.rates import LUA_TO_BOOK, rates_from_hash
from store import keys

# How many ``desk.bet`` frames the ticker's log keeps for a page's first image.
TICKER_LOG = 200
# How many books one re-ranking script converts (each script holds Redis for its batch only).
RERANK_BATCH = 200

# The converted figures of one selection and one market from their exact per-currency fields
# (reducers/liability.py: ``SelectionTotal.in_book``, ``MarketBook.figures``): the selection's
# ``pence`` and rank; the market's ``worst`` and ``worst_sel``, its rank, its entry in its event's
# book and the event's rank (the sum of its markets' worst P/L). A market with no open bet left is
# removed.
#
# A book written before currencies (``pence`` of a selection without any ``c:`` field; a market's
# ``staked`` and ``r:<selection>``) was all in the book's currency: ``upgrade_*`` moves it to that
# currency's fields the first time a script touches it, so a running book keeps its figures.
LUA_REFRESH = (
    LUA_TO_BOOK
    + """
local function upgrade_selection(key)
  local fields = redis.call('HGETALL', key)
  local pence = nil
  for f = 1, #fields, 2 do
    if string.sub(fields[f], 1, 2) == 'c:' then return end
    if fields[f] == 'pence' then pence = fields[f + 1] end
  end
  if pence ~= nil then redis.call('HINCRBY', key, 'c:' .. BOOK, pence) end
end
local function upgrade_market(book)
  local fields = redis.call('HGETALL', book)
  for f = 1, #fields, 2 do
    local name, value = fields[f], fields[f + 1]
    local sel = string.match(name, '^r:(%d+)$')
    if name == 'staked' then
      redis.call('HINCRBY', book, 's:' .. BOOK, value)
      redis.call('HDEL', book, name)
    elseif sel ~= nil then
      redis.call('HINCRBY', book, 'r:' .. BOOK .. ':' .. sel, value)
      redis.call('HDEL', book, name)
    end
  end
end
local function refresh_selection(key, index, selection, rates)
  local fields = redis.call('HGETALL', key)
  local total = 0
  for f = 1, #fields, 2 do
    local name = fields[f]
    if string.sub(name, 1, 2) == 'c:' then
      total = total + to_book(tonumber(fields[f + 1]), rate_of(rates, string.sub(name, 3)))
    end
  end
  redis.call('HSET', key, 'pence', total)
  redis.call('ZADD', index, total, selection)
end
local function refresh_market(book, evbook, mindex, eindex, market, event, rates)
  local fields = redis.call('HGETALL', book)
  local bets, staked, paid, sels = 0, {}, {}, {}
  for f = 1, #fields, 2 do
    local name, value = fields[f], fields[f + 1]
    local kind = string.sub(name, 1, 2)
    if name == 'bets' then
      bets = tonumber(value)
    elseif kind == 's:' then
      staked[string.sub(name, 3)] = tonumber(value)
    elseif kind == 'r:' and tonumber(value) ~= 0 and string.match(name, '^r:[^:]+:%d+$') then
      local currency, sel = string.match(name, '^r:([^:]+):(%d+)$')
      if paid[sel] == nil then
        paid[sel] = {}
        sels[#sels + 1] = sel
      end
      paid[sel][currency] = tonumber(value)
      staked[currency] = staked[currency] or 0
    end
  end
  if bets <= 0 then
    redis.call('DEL', book)
    redis.call('ZREM', mindex, market)
    redis.call('HDEL', evbook, market)
  else
    local total = 0
    for currency, pence in pairs(staked) do total = total + to_book(pence, rate_of(rates, currency)) end
    local worst, worstsel = total, nil
    for _, sel in ipairs(sels) do
      local pl = 0
      for currency, pence in pairs(staked) do
        pl = pl + to_book(pence - (paid[sel][currency] or 0), rate_of(rates, currency))
      end
      local id = tonumber(sel)
      if worstsel == nil or pl < worst or (pl == worst and id < worstsel) then
        worst, worstsel = pl, id
      end
    end
    redis.call('HSET', book, 'worst', worst, 'worst_sel', worstsel or '')
    redis.call('ZADD', mindex, -worst, market)
    redis.call('HSET', evbook, market, worst)
  end
  local worsts = redis.call('HVALS', evbook)
  if #worsts == 0 then
    redis.call('ZREM', eindex, event)
  else
    local sum = 0
    for _, w in ipairs(worsts) do sum = sum + tonumber(w) end
    redis.call('ZADD', eindex, -sum, event)
  end
end
"""
)

# KEYS: the seen marker, the selection index, the market index, the event index, the ticker log,
# the rates; then each selection delta's liability hash; then each market delta's book and event
# book. ARGV: the marker's TTL, the ticker channel, the ticker frame, the log's length, the number
# of selection deltas, the number of market deltas; then each selection delta's (pence, bets,
# selection id, currency); then each market delta's (staked, returns, bets, selection id, market
# id, event id, currency). Returns 1 when the event was counted, 0 when it had been already.
APPLY_ONCE = (
    LUA_REFRESH
    + """
if redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[1]) == false then return 0 end
local rates = rates_table(KEYS[6])
local ns, nm = tonumber(ARGV[5]), tonumber(ARGV[6])
local at = 7
for i = 1, ns do
  local key = KEYS[6 + i]
  upgrade_selection(key)
  redis.call('HINCRBY', key, 'c:' .. ARGV[at + 3], ARGV[at])
  redis.call('HINCRBY', key, 'bets', ARGV[at + 1])
  refresh_selection(key, KEYS[2], ARGV[at + 2], rates)
  at = at + 4
end
for i = 1, nm do
  local book, evbook = KEYS[6 + ns + 2 * i - 1], KEYS[6 + ns + 2 * i]
  local currency = ARGV[at + 6]
  upgrade_market(book)
  redis.call('HINCRBY', book, 's:' .. currency, ARGV[at])
  redis.call('HINCRBY', book, 'r:' .. currency .. ':' .. ARGV[at + 3], ARGV[at + 1])
  redis.call('HINCRBY', book, 'bets', ARGV[at + 2])
  redis.call('HSET', book, 'event', ARGV[at + 5])
  refresh_market(book, evbook, KEYS[3], KEYS[4], ARGV[at + 4], ARGV[at + 5], rates)
  at = at + 7
end
redis.call('LPUSH', KEYS[5], ARGV[3])
redis.call('LTRIM', KEYS[5], 0, tonumber(ARGV[4]) - 1)
redis.call('PUBLISH', ARGV[2], ARGV[3])
return 1
"""
)

# KEYS: the rates, the selection index, then each selection's liability hash; ARGV: the
# selections' ids. Converts each at the current rates again.
RERANK_SELECTIONS = (
    LUA_REFRESH
    + """
local rates = rates_table(KEYS[1])
for i = 1, #ARGV do
  upgrade_selection(KEYS[2 + i])
  refresh_selection(KEYS[2 + i], KEYS[2], ARGV[i], rates)
end
return #ARGV
"""
)

# KEYS: the rates, the market index, the event index, then each market's book and event book;
# ARGV: each market's (market id, event id). Converts each at the current rates again.
RERANK_MARKETS = (
    LUA_REFRESH
    + """
local rates = rates_table(KEYS[1])
for i = 1, #ARGV / 2 do
  upgrade_market(KEYS[2 + 2 * i])
  refresh_market(KEYS[2 + 2 * i], KEYS[3 + 2 * i], KEYS[2], KEYS[3], ARGV[2 * i - 1], ARGV[2 * i], rates)
end
return #ARGV / 2
"""
)


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
    """The books, their rankings, the rates they are converted at and the ticker's log; the only
    code that spells their keys."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self._script = client.register_script(APPLY_ONCE)
        self._rerank_selections = client.register_script(RERANK_SELECTIONS)
        self._rerank_markets = client.register_script(RERANK_MARKETS)

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
                keys.exchange_rates(),
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
                args.extend([s.pence, s.bets, s.selection_id, s.currency])
            for m in change.markets:
                keys_.extend([keys.market_book(m.market_id), keys.event_book(m.event_id)])
                args.extend([m.staked, m.returns, m.bets, m.selection_id, m.market_id, m.event_id, m.currency])
            self._script(keys=keys_, args=args, client=pipe)
        replies = pipe.execute(raise_on_error=False)
        return [reply if isinstance(reply, Exception) else int(reply) for reply in replies]

    def rates(self) -> dict[str, int]:
        """The rates the books are converted at (currency → millionths of the book's currency)."""
        return rates_from_hash(self._client.hgetall(keys.exchange_rates()))

    def rates_set(self, rates: Mapping[str, int]) -> bool:
        """Make ``rates`` the rates the books are converted at (the operator's, from PostgreSQL);
        True when they differ from those held, and the books must be ranked again (``rerank``)."""
        if self.rates() == dict(rates):
            return False
        pipe = self._client.pipeline(transaction=True)
        pipe.delete(keys.exchange_rates())
        if rates:
            pipe.hset(keys.exchange_rates(), mapping={c: str(units) for c, units in rates.items()})
        pipe.execute()
        return True

    def books(self, market_ids: Iterable[int]) -> tuple[dict[int, MarketBook], dict[int, int], dict[str, int]]:
        """The books of these markets (a market with no open bet has an empty one), the worst
        case of each of their events in book pence (the sum of its markets' worst P/L) and the
        rates they are converted at, in one round trip."""
        ids = sorted(set(market_ids))
        if not ids:
            return {}, {}, self.rates()
        pipe = self._client.pipeline(transaction=False)
        for market_id in ids:
            pipe.hgetall(keys.market_book(market_id))
        pipe.hgetall(keys.exchange_rates())
        *raws, raw_rates = pipe.execute()
        books = {m: book_from_hash(m, raw) for m, raw in zip(ids, raws, strict=True)}
        return books, self.event_worsts({b.event_id for b in books.values() if b.event_id}), rates_from_hash(raw_rates)

    def event_worsts(self, event_ids: Iterable[int]) -> dict[int, int]:
        """Each event's worst case in book pence (0 for an event with no open bet)."""
        ids = sorted(set(event_ids))
        if not ids:
            return {}
        scores = self._client.zmscore(keys.event_books_index(), [str(e) for e in ids])
        return {e: -int(score) if score is not None else 0 for e, score in zip(ids, scores, strict=True)}

    def replace(self, books: Mapping[int, MarketBook]) -> None:
        """Make ``books`` (market id → book, the open bets' whole figure) every book there is, in
        one transaction, converted at the rates held: what the site's restore does once the
        reducer has read every bet event (odds/ops/services/restore.py); the seen-markers are the
        selection store's to set."""
        rates = self.rates()
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
            figures = book.figures(rates)
            mapping: dict[str, Any] = {
                "bets": book.bets,
                "event": book.event_id,
                "worst": figures.worst,
                "worst_sel": figures.worst_selection or "",
            }
            mapping.update({f"s:{currency}": pence for currency, pence in book.staked})
            mapping.update({f"r:{currency}:{s}": pence for s, currency, pence in book.returns})
            pipe.hset(keys.market_book(market_id), mapping=mapping)
            pipe.zadd(keys.market_books_index(), {str(market_id): -figures.worst})
            pipe.hset(keys.event_book(book.event_id), str(market_id), figures.worst)
            worsts[book.event_id] = worsts.get(book.event_id, 0) + figures.worst
        for event_id, worst in worsts.items():
            pipe.zadd(keys.event_books_index(), {str(event_id): -worst})
        pipe.execute()

    def rerank(self) -> list[int]:
        """Convert every selection's and every market's book at the rates held now and rank them
        again, a batch of books per script (a bet counted meanwhile converts at the new rates
        too); returns the markets converted, for the ``desk.liability`` frame that shows them."""
        for batch in _batches(int(m) for m in self._client.zrange(keys.liability_index(), 0, -1)):
            self._rerank_selections(
                keys=[keys.exchange_rates(), keys.liability_index(), *(keys.liability(s) for s in batch)], args=batch
            )
        converted: list[int] = []
        for batch in _batches(int(m) for m in self._client.zrange(keys.market_books_index(), 0, -1)):
            pipe = self._client.pipeline(transaction=False)
            for market_id in batch:
                pipe.hget(keys.market_book(market_id), "event")
            pairs = [(m, int(e)) for m, e in zip(batch, pipe.execute(), strict=True) if e is not None]
            if not pairs:
                continue
            keys_ = [keys.exchange_rates(), keys.market_books_index(), keys.event_books_index()]
            args: list[int] = []
            for market_id, event_id in pairs:
                keys_.extend([keys.market_book(market_id), keys.event_book(event_id)])
                args.extend([market_id, event_id])
            self._rerank_markets(keys=keys_, args=args)
            converted.extend(m for m, _ in pairs)
        return converted

    def publish_liability(self, frame: bytes) -> None:
        self._client.publish(keys.desk_liability_channel(), frame)

    def riskiest_events(self, *, limit: int) -> list[tuple[int, int]]:
        """Events by worst-case loss in book pence, largest first: (event id, worst P/L)."""
        ranked = self._client.zrevrange(keys.event_books_index(), 0, limit - 1, withscores=True)
        return [(int(member), -int(score)) for member, score in ranked]

    def riskiest_markets(self, *, limit: int) -> list[tuple[int, int]]:
        """Markets by worst-case loss in book pence, largest first: (market id, worst P/L)."""
        ranked = self._client.zrevrange(keys.market_books_index(), 0, limit - 1, withscores=True)
        return [(int(member), -int(score)) for member, score in ranked]

    def riskiest_selections(self, *, limit: int) -> list[tuple[int, int, int]]:
        """Selections by exposure in book pence at the current rates, largest first: (selection id,
        exposure, open bets), in two round trips."""
        ranked = self._client.zrevrange(keys.liability_index(), 0, limit - 1, withscores=True)
        if not ranked:
            return []
        ids = [int(member) for member, _ in ranked]
        pipe = self._client.pipeline(transaction=False)
        for selection_id in ids:
            pipe.hgetall(keys.liability(selection_id))
        return [
            (selection_id, int(figures.get(b"pence", 0)), int(figures.get(b"bets", 0)))
            for selection_id, figures in zip(ids, pipe.execute(), strict=True)
        ]

    def markets_of_events(self, event_ids: Sequence[int]) -> dict[int, list[int]]:
        """The markets of each event that have open bets."""
        pipe = self._client.pipeline(transaction=False)
        for event_id in event_ids:
            pipe.hkeys(keys.event_book(event_id))
        return {e: sorted(int(m) for m in found) for e, found in zip(event_ids, pipe.execute(), strict=True)}

    def ticker(self, *, limit: int = TICKER_LOG) -> list[bytes]:
        """The newest ``desk.bet`` frames, newest first."""
        return list(self._client.lrange(keys.desk_ticker_log(), 0, limit - 1))


def _batches(ids: Iterable[int]) -> Iterator[list[int]]:
    batch: list[int] = []
    for item in ids:
        batch.append(item)
        if len(batch) == RERANK_BATCH:
            yield batch
            batch = []
    if batch:
        yield batch
