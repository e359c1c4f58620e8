"""The feed simulator: moves open markets' books, plays matches through their lifecycle, and
produces price updates to Kafka.

Prices are the feed's own (a random walk per market, never written to the database); lifecycle
changes (kick-off, scores, full time) are written to the catalogue through the market services,
which bump versions and queue market definitions, and the feed announces them on the price topic
with its current prices. Trader changes made meanwhile (suspend, resume, a price override) are
picked up from the catalogue every second: the feed never reopens a market a trader suspended,
and a trader's price becomes the new starting point of the walk.
"""

from __future__ import annotations

import random
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import IO, Protocol

from confluent_kafka import Producer
from django.conf import settings

from odds.catalogue.models import Event, Market, Selection
from odds.catalogue.services.markets import event_update, market_result, markets_status_set
from odds.core.kafka import producer_create
from odds.core.sequences import sequences_next
from odds.feed.book import RandomWalk, prices_from_probabilities, probabilities_from_prices
from odds.feed.lifecycle import Action, MatchState, Step, card_next_at, lifecycle_step, market_winners, shock_for
from odds.feed.matchstate import breaks_passed, in_break, match_clock, match_state_build, phase_at, tennis_score
from reducers import keys, topics
from reducers.schemas import (
    GameEvent,
    Incident,
    MatchStateUpdate,
    PriceUpdate,
    SelectionPrice,
    decode_price_update_json,
)
from store.clients import redis_client

HEARTBEAT_TTL_S = 60
SYNC_INTERVAL_S = 1.0
TRADING = (Market.Status.OPEN, Market.Status.SUSPENDED)

__all__ = ["FeedRunner", "replay", "sequences_next"]


class Writer(Protocol):
    def write(self, text: str) -> object: ...

    def flush(self) -> None: ...


@dataclass
class SimulatedMarket:
    market_id: int
    selection_ids: list[int]
    walk: RandomWalk
    margin: float
    event_id: int = 0
    kind: str = ""
    line: Decimal | None = None
    status: str = Market.Status.OPEN
    version: int = 1
    catalogue_prices: dict[int, Decimal] = field(default_factory=dict)
    prices: list[Decimal] = field(default_factory=list)

    def rebase(self, overrides: dict[int, Decimal]) -> None:
        """Restart the walk from the current book with a trader's prices put in."""
        current = self.prices or [self.catalogue_prices[i] for i in self.selection_ids]
        book = [overrides.get(i, p) for i, p in zip(self.selection_ids, current, strict=True)]
        self.walk = RandomWalk(probabilities_from_prices(book), rng=self.walk.rng)
        self.prices = book


def markets_load(*, limit: int, rng: random.Random) -> list[SimulatedMarket]:
    """Trading markets of upcoming and in-play events, whole events at a time, soonest first,
    with their catalogue prices as the walk's starting point."""
    simulated: list[SimulatedMarket] = []
    queryset = (
        Market.objects.filter(status__in=TRADING, event__status__in=[Event.Status.SCHEDULED, Event.Status.IN_PLAY])
        .prefetch_related("selections")
        .order_by("event__starts_at", "event_id", "id")
    )
    last_event = None
    for market in queryset.iterator(chunk_size=500):
        if len(simulated) >= limit and market.event_id != last_event:
            break
        last_event = market.event_id
        selections = sorted(market.selections.all(), key=lambda s: (s.display_order, s.id))
        if len(selections) < 2:
            continue
        prices = [s.price for s in selections]
        simulated.append(
            SimulatedMarket(
                market_id=market.id,
                selection_ids=[s.id for s in selections],
                walk=RandomWalk(probabilities_from_prices(prices), rng=rng),
                margin=rng.uniform(0.04, 0.08),
                event_id=market.event_id,
                kind=market.kind,
                line=market.line,
                status=market.status,
                version=market.version,
                catalogue_prices={s.id: s.price for s in selections},
                prices=prices,
            )
        )
    return simulated


def update_build(market: SimulatedMarket, *, seq: int, now_ms: int, status: str = "open") -> PriceUpdate:
    """Step the market's walk and snapshot its book."""
    market.prices = prices_from_probabilities(market.walk.step(), market.margin)
    return _snapshot(market, seq=seq, now_ms=now_ms, status=status)


def _snapshot(market: SimulatedMarket, *, seq: int, now_ms: int, status: str) -> PriceUpdate:
    if not market.prices:
        market.prices = prices_from_probabilities(market.walk.probabilities(), market.margin)
    return PriceUpdate(
        market_id=market.market_id,
        seq=seq,
        status=status,
        selections=tuple(SelectionPrice(i, p) for i, p in zip(market.selection_ids, market.prices, strict=True)),
        event_ts=now_ms,
        produce_ts=now_ms,
    )


def matches_load(*, event_ids: set[int], rng: random.Random) -> dict[int, MatchState]:
    matches = {}
    for event in Event.objects.filter(id__in=event_ids).select_related("competition__sport"):
        matches[event.id] = MatchState(
            event_id=event.id,
            sport=event.competition.sport.slug,
            starts_at=event.starts_at.timestamp(),
            status="in_play" if event.status == Event.Status.IN_PLAY else "scheduled",
            home=event.home_score,
            away=event.away_score,
            home_strength=rng.uniform(0.35, 0.65),
        )
    return matches


def match_state_sets(games_won: list[str]) -> int:
    """Sets completed after these games."""
    return sum(tennis_score(games_won)["sets"])


class FeedRunner:
    def __init__(
        self,
        *,
        rate: float,
        markets: int,
        seed: int | None,
        record: IO[bytes] | None,
        speed: float = 1.0,
        lifecycle: bool = True,
        lifecycle_interval: float = SYNC_INTERVAL_S,
    ) -> None:
        self.rate = rate
        self.lifecycle_interval = lifecycle_interval
        self.speed = speed
        self.lifecycle = lifecycle
        self.rng = random.Random(seed)
        self.redis = redis_client(settings.REDIS_URL)
        self.producer: Producer = producer_create()
        self.record = record
        self.markets = markets_load(limit=markets, rng=self.rng)
        self.by_id = {m.market_id: m for m in self.markets}
        self.by_event: dict[int, list[SimulatedMarket]] = defaultdict(list)
        for market in self.markets:
            self.by_event[market.event_id].append(market)
        self.matches = matches_load(event_ids=set(self.by_event), rng=self.rng) if lifecycle else {}
        # Markets the feed itself suspended (kick-off, a score): the only ones it may reopen.
        self.feed_suspended: set[int] = set()
        self.sent = 0
        self.lifecycle_steps = 0
        # Per event: the last match-state sequence, the phase it showed, its incidents and, for
        # tennis, who won each game.
        self.match_seq: dict[int, int] = {}
        self.match_phase: dict[int, tuple[int, bool] | None] = {}
        # Per event: the match time (seconds) of the last look at it.
        self.match_elapsed: dict[int, float] = {}
        self.match_incidents: dict[int, list[Incident]] = defaultdict(list)
        self.games_won: dict[int, list[str]] = defaultdict(list)
        # The predictor game's events (``topics.game_events``): per event, the last sequence and
        # the last clock minute told; cards come from a random stream of their own, so the rest
        # of a seeded match plays as it did before cards were drawn.
        self.game_seq: dict[int, int] = {}
        self.game_minute: dict[int, int] = {}
        self.card_rng = random.Random(None if seed is None else seed + 1)
        self.next_card: dict[int, float] = {}

    # --- producing ---

    def produce(self, update: PriceUpdate) -> None:
        self.producer.produce(topics.prices(), key=update.key(), value=update.encode())
        if self.record is not None:
            self.record.write(update.encode_json() + b"\n")
        self.sent += 1

    def _announce(self, markets: list[SimulatedMarket], *, status: str) -> None:
        """Publish the markets' current books with a new status (no walk step)."""
        if not markets:
            return
        seqs = sequences_next(self.redis, [m.market_id for m in markets])
        now_ms = int(time.time() * 1000)
        for market, seq in zip(markets, seqs, strict=True):
            self.produce(_snapshot(market, seq=seq, now_ms=now_ms, status=status))

    def tick_prices(self, count: int) -> None:
        tradable = [m for m in self.markets if m.status == Market.Status.OPEN]
        if not tradable or not count:
            return
        chosen = [self.rng.choice(tradable) for _ in range(count)]
        seqs = sequences_next(self.redis, [m.market_id for m in chosen])
        now_ms = int(time.time() * 1000)
        for market, seq in zip(chosen, seqs, strict=True):
            self.produce(update_build(market, seq=seq, now_ms=now_ms))

    # --- lifecycle ---

    def _versions_note(self, changed: list[Market]) -> None:
        for market in changed:
            simulated = self.by_id.get(market.id)
            if simulated is not None:
                simulated.version = market.version
                simulated.status = market.status

    def _suspend(self, event_id: int) -> None:
        markets = [m for m in self.by_event[event_id] if m.status == Market.Status.OPEN]
        ids = [m.market_id for m in markets]
        self._versions_note(
            markets_status_set(
                market_ids=ids, status=Market.Status.SUSPENDED, only_from=[Market.Status.OPEN], publish=False
            )
        )
        self.feed_suspended.update(ids)
        self._announce([m for m in markets if m.status == Market.Status.SUSPENDED], status="suspended")

    def _reopen(self, event_id: int) -> None:
        markets = [m for m in self.by_event[event_id] if m.market_id in self.feed_suspended]
        ids = [m.market_id for m in markets]
        self._versions_note(
            markets_status_set(
                market_ids=ids, status=Market.Status.OPEN, only_from=[Market.Status.SUSPENDED], publish=False
            )
        )
        self.feed_suspended.difference_update(ids)
        self._announce([m for m in markets if m.status == Market.Status.OPEN], status="open")

    def _score(self, action: Action, match: MatchState) -> None:
        for market in self.by_event[action.event_id]:
            size = match.rules().shock
            for index, move in enumerate(
                shock_for(kind=market.kind, side=action.side, selections=len(market.selection_ids), size=size)
            ):
                if move:
                    market.walk.shock(index, move)
            market.prices = prices_from_probabilities(market.walk.probabilities(), market.margin)

    def _full_time(self, event_id: int, match: MatchState) -> None:
        # Every trading market of the event is resulted, including ones this run does not move.
        for market in Market.objects.filter(event_id=event_id, status__in=TRADING).prefetch_related("selections"):
            selections = sorted(market.selections.all(), key=lambda s: (s.display_order, s.id))
            simulated = self.by_id.get(market.id)
            tie_break = 0
            if simulated is not None:
                probabilities = simulated.walk.probabilities()
                tie_break = probabilities.index(max(probabilities))
            winners = market_winners(
                kind=market.kind,
                line=market.line,
                selections=len(selections),
                home=match.home,
                away=match.away,
                tie_break=tie_break,
            )
            resulted = market_result(
                market=market,
                winners=None if winners is None else [selections[i].id for i in winners],
                publish=simulated is None,
            )
            self._versions_note([resulted])
            if simulated is not None:
                self._announce([simulated], status="closed")
            self.feed_suspended.discard(market.id)

    def tick_lifecycle(self, now: float) -> None:
        for match in self.matches.values():
            actions = lifecycle_step(match, now=now, speed=self.speed, rng=self.rng)
            for action in actions:
                self.lifecycle_steps += 1
                self._lifecycle_apply(action, match, now=now)
            card = self._card(match, now=now)
            self._match_publish(match, actions=actions, now=now, forced=card)
            self._game_tick(match, now=now)

    # --- the predictor game's match events ---

    def _game_minute(self, match: MatchState, *, now: float) -> int:
        clock = match_clock(
            sport=match.sport, elapsed_s=max(0.0, (now - match.starts_at) * self.speed), at_ms=int(now * 1000), rate=1
        )
        return 0 if clock is None or clock.direction != "up" else clock.elapsed_s // 60

    def game_emit(self, match: MatchState, kind: str, *, now: float, side: str = "") -> None:
        """Produce one of the match's game events (``reducers.schemas.GameEvent``)."""
        now_ms = int(now * 1000)
        seq = max(self.game_seq.get(match.event_id, 0) + 1, now_ms)
        self.game_seq[match.event_id] = seq
        event = GameEvent(
            kind=kind,
            event_id=match.event_id,
            seq=seq,
            sport=match.sport,
            minute=self._game_minute(match, now=now),
            side=side,
            score=(match.home, match.away),
            at=now_ms,
        )
        self.produce_game(event)

    def produce_game(self, event: GameEvent) -> None:
        self.producer.produce(topics.game_events(), key=event.key(), value=event.encode())

    def _game_tick(self, match: MatchState, *, now: float) -> None:
        """The clock's minute, told when it moved (football: the game's windows run on it)."""
        if match.status != "in_play" or match.sport != "football":
            return
        minute = self._game_minute(match, now=now)
        if minute > self.game_minute.get(match.event_id, 0):
            self.game_minute[match.event_id] = minute
            self.game_emit(match, "minute", now=now)

    def _card(self, match: MatchState, *, now: float) -> bool:
        """A booking in a football match in play, at random moments of its own; True when one fell."""
        if match.status != "in_play" or match.sport != "football":
            return False
        due = self.next_card.get(match.event_id)
        if due is None:
            self.next_card[match.event_id] = card_next_at(now=now, speed=self.speed, rng=self.card_rng)
            return False
        if now < due or in_break(sport=match.sport, elapsed_s=(now - match.starts_at) * self.speed):
            return False
        self.next_card[match.event_id] = card_next_at(now=now, speed=self.speed, rng=self.card_rng)
        side = "home" if self.card_rng.random() < 0.5 else "away"
        elapsed = max(0.0, (now - match.starts_at) * self.speed)
        phase = phase_at(sport=match.sport, elapsed_s=elapsed)
        period = 1 if phase is None else phase.period
        self.match_incidents[match.event_id].append(Incident(kind="card", side=side, period=period, at=int(now * 1000)))
        self.game_emit(match, "card", now=now, side=side)
        return True

    # --- match state ---

    def _match_publish(self, match: MatchState, *, actions: list[Action], now: float, forced: bool = False) -> None:
        """Publish the event's match state when something happened or its phase changed. A
        break that began and ended between two looks (a late tick, a fast simulation) is
        published too, as it stood when it began: every clock shows half time."""
        if match.status == "scheduled":
            return
        now_ms = int(now * 1000)
        elapsed = max(0.0, (now - match.starts_at) * self.speed)
        looked = self.match_elapsed.get(match.event_id)
        self.match_elapsed[match.event_id] = elapsed
        start = phase_at(sport=match.sport, elapsed_s=0.0)
        if (
            looked is None
            and any(a.step is Step.KICK_OFF for a in actions)
            and phase_at(sport=match.sport, elapsed_s=elapsed) != start
        ):
            # First seen after its first period was over (a late tick): the kick-off is published
            # as it happened, the clock running from nought, then whatever passed since.
            kick_off = [a for a in actions if a.step is Step.KICK_OFF]
            actions = [a for a in actions if a.step is not Step.KICK_OFF]
            for action in kick_off:
                self.match_incidents[match.event_id].extend(self._incidents_of(action, match, now_ms=now_ms))
            self.match_phase[match.event_id] = None if start is None else (start.period, start.playing)
            self._match_emit(match, elapsed=0.0, now_ms=now_ms)
            looked = 0.0
        if looked is not None and match.status == "in_play":
            for passed in breaks_passed(sport=match.sport, from_s=looked, to_s=elapsed):
                self._break_begins(match, period=passed.period, now_ms=now_ms)
                self._match_emit(match, elapsed=float(passed.start_s), now_ms=now_ms)
        phase = phase_at(sport=match.sport, elapsed_s=elapsed)
        shown = None if phase is None else (phase.period, phase.playing)
        previous = self.match_phase.get(match.event_id, ())
        if previous not in ((), shown) and phase is not None and not phase.playing:
            self._break_begins(match, period=phase.period, now_ms=now_ms)
        for action in actions:
            self.match_incidents[match.event_id].extend(self._incidents_of(action, match, now_ms=now_ms))
        if not actions and previous == shown and not forced:
            return
        self.match_phase[match.event_id] = shown
        self._match_emit(match, elapsed=elapsed, now_ms=now_ms)

    def _break_begins(self, match: MatchState, *, period: int, now_ms: int) -> None:
        kind = "half_time" if match.sport == "football" else "quarter_end"
        self.match_incidents[match.event_id].append(Incident(kind=kind, side="", period=period, at=now_ms))
        if kind == "half_time":
            self.game_emit(match, "half_time", now=now_ms / 1000)

    def _match_emit(self, match: MatchState, *, elapsed: float, now_ms: int) -> None:
        seq = max(self.match_seq.get(match.event_id, 0) + 1, now_ms)
        self.match_seq[match.event_id] = seq
        self.produce_match(
            match_state_build(
                event_id=match.event_id,
                seq=seq,
                sport=match.sport,
                status=match.status,
                elapsed_s=elapsed,
                home=match.home,
                away=match.away,
                games_won=self.games_won[match.event_id],
                incidents=self.match_incidents[match.event_id],
                now_ms=now_ms,
                rate=max(1, round(self.speed)),
            )
        )

    def _incidents_of(self, action: Action, match: MatchState, *, now_ms: int) -> list[Incident]:
        elapsed = max(0.0, (now_ms / 1000 - match.starts_at) * self.speed)
        phase = phase_at(sport=match.sport, elapsed_s=elapsed)
        period = 1 if phase is None else phase.period
        if action.step is Step.KICK_OFF:
            return [Incident(kind="kick_off", side="", period=1, at=now_ms)]
        if action.step is Step.FULL_TIME:
            return [Incident(kind="full_time", side="", period=period, at=now_ms)]
        if action.step is not Step.SCORE:
            return []
        if match.sport == "tennis":
            games = self.games_won[match.event_id]
            before = match_state_sets(games)
            games.append(action.side)
            set_number = before + 1
            won = [Incident(kind="game_won", side=action.side, period=set_number, at=now_ms)]
            if match_state_sets(games) > before:
                won.append(Incident(kind="set_won", side=action.side, period=set_number, at=now_ms))
            return won
        kind = "goal" if match.sport == "football" else "basket"
        return [Incident(kind=kind, side=action.side, period=period, at=now_ms)]

    def produce_match(self, state: MatchStateUpdate) -> None:
        self.producer.produce(topics.match_states(), key=state.key(), value=state.encode())

    def _lifecycle_apply(self, action: Action, match: MatchState, *, now: float) -> None:
        event = Event(id=action.event_id)
        clock = match.clock(now=now, speed=self.speed)
        if action.step is Step.KICK_OFF:
            event_update(event=event, status=Event.Status.IN_PLAY, home_score=0, away_score=0, clock=clock)
            self._suspend(action.event_id)
            self.game_emit(match, "kick_off", now=now)
        elif action.step is Step.REOPEN:
            event_update(event=event, clock=clock)
            self._reopen(action.event_id)
        elif action.step is Step.SCORE:
            event_update(event=event, home_score=match.home, away_score=match.away, clock=clock)
            self._score(action, match)
            self._suspend(action.event_id)
            self.game_emit(match, "score", now=now, side=action.side)
        elif action.step is Step.FULL_TIME:
            event_update(
                event=event, status=Event.Status.FINISHED, home_score=match.home, away_score=match.away, clock="FT"
            )
            self._full_time(action.event_id, match)
            self.game_emit(match, "full_time", now=now)

    # --- trader changes ---

    def sync_catalogue(self) -> None:
        """Follow changes made outside the feed: trader suspensions, resumptions and prices."""
        rows = Market.objects.filter(id__in=list(self.by_id)).values_list("id", "status", "version")
        changed = []
        for market_id, status, version in rows:
            simulated = self.by_id[market_id]
            if version == simulated.version:
                continue
            simulated.version = version
            if status != simulated.status:
                simulated.status = status
                if status != Market.Status.SUSPENDED:
                    self.feed_suspended.discard(market_id)
            changed.append(simulated)
        if not changed:
            return
        prices = Selection.objects.filter(market_id__in=[m.market_id for m in changed]).values_list(
            "market_id", "id", "price"
        )
        catalogue: dict[int, dict[int, Decimal]] = defaultdict(dict)
        for market_id, selection_id, price in prices:
            catalogue[market_id][selection_id] = price
        for simulated in changed:
            fresh = catalogue[simulated.market_id]
            overrides = {i: p for i, p in fresh.items() if simulated.catalogue_prices.get(i) != p}
            simulated.catalogue_prices = fresh
            if overrides:
                simulated.rebase(overrides)
        self.markets = [m for m in self.markets if m.status in TRADING]

    # --- the loop ---

    def run(self, *, duration: float | None, out: Writer = sys.stdout) -> int:
        if not self.markets:
            raise RuntimeError("no open markets to simulate: run `manage.py seed_demo` first")
        tick = 0.01
        started = last_report = last_sync = time.monotonic()
        budget = 0.0
        last_sent = 0
        while duration is None or time.monotonic() - started < duration:
            loop_start = time.monotonic()
            budget += self.rate * tick
            count = int(budget)
            budget -= count
            self.tick_prices(count)
            self.producer.poll(0)
            now = time.monotonic()
            if now - last_sync >= self.lifecycle_interval:
                self.sync_catalogue()
                if self.lifecycle:
                    self.tick_lifecycle(time.time())
                last_sync = now
            if now - last_report >= 1.0:
                rate = (self.sent - last_sent) / (now - last_report)
                in_play = sum(1 for m in self.matches.values() if m.status == "in_play")
                out.write(
                    f"\rfeed: {self.sent} updates sent, {rate:,.0f}/s over {len(self.markets)} markets, "
                    f"{in_play} in play, {self.lifecycle_steps} lifecycle steps   "
                )
                out.flush()
                self.redis.set(keys.heartbeat("feed"), int(time.time()), ex=HEARTBEAT_TTL_S)
                last_report, last_sent = now, self.sent
            time.sleep(max(0.0, tick - (time.monotonic() - loop_start)))
        remaining = self.producer.flush(30)
        if remaining:
            raise RuntimeError(f"{remaining} price updates not acknowledged by Kafka")
        out.write("\n")
        return self.sent


def replay(*, path: Path, rate: float | None) -> int:
    """Produce recorded updates again, in order, with fresh produce timestamps."""
    producer = producer_create()
    sent = 0
    interval = 1.0 / rate if rate else 0.0
    for update in _read_recording(path):
        now_ms = int(time.time() * 1000)
        fresh = PriceUpdate(
            market_id=update.market_id,
            seq=update.seq,
            status=update.status,
            selections=update.selections,
            event_ts=update.event_ts,
            produce_ts=now_ms,
            source="replay",
        )
        producer.produce(topics.prices(), key=fresh.key(), value=fresh.encode())
        producer.poll(0)
        sent += 1
        if interval:
            time.sleep(interval)
    if producer.flush(30):
        raise RuntimeError("replayed updates not acknowledged by Kafka")
    return sent


def _read_recording(path: Path) -> Iterator[PriceUpdate]:
    with path.open("rb") as handle:
        for line in handle:
            if line.strip():
                yield decode_price_update_json(line.strip())
