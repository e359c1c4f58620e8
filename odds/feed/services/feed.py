"""The feed simulator: plays matches through their lifecycle, prices every market from its sport's
in-play model, and produces price updates and match states to Kafka.

Prices are the feed's own (never written to the database): each event has a model
(``odds.feed.pricing``) calibrated to its catalogue book, whose fair chances move with the score
and the time left; each market adds a little noise and the trader's adjustments on top, and the
book's margin. Lifecycle changes (kick-off, suspensions with their reason, reopening, full time
and results) are written to the catalogue through the market services, which bump versions and
queue market definitions, and the feed announces them on the price topic with its current prices.
Trader changes made meanwhile (suspend, resume, a price override) are picked up from the
catalogue every second: the feed reopens only the suspensions it set, and a trader's price stays
as an adjustment of the model's.
"""

from __future__ import annotations

import math
import random
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import IO, Any, Protocol

import redis
from confluent_kafka import Producer
from django.conf import settings

from odds.catalogue.models import Event, Market, Selection
from odds.catalogue.selectors.catalogue import match_states
from odds.catalogue.services.markets import event_update, market_result, markets_defined, markets_status_set
from odds.core.kafka import producer_create
from odds.feed.book import RandomWalk, prices_from_probabilities, probabilities_from_prices
from odds.feed.lifecycle import Action, MatchState, Step, card_next_at, lifecycle_step, params_of
from odds.feed.matchstate import (
    breaks_passed,
    in_break,
    match_clock,
    match_state_build,
    phase_at,
    remaining_share,
    tennis_from_score,
)
from odds.feed.pricing import MODELLED, Book, EventPricer, calibrate, drift
from reducers import topics
from reducers.market_kinds import MarketKind, kind_of
from reducers.schemas import (
    GameEvent,
    Incident,
    MatchStateUpdate,
    MatchSuspension,
    PriceUpdate,
    SelectionPrice,
    decode_price_update_json,
)
from reducers.suspensions import BY_FEED, FEED_SETTERS, Reason
from store.clients import redis_client
from store.markets import sequences_next
from store.pipeline import heartbeat_beat

HEARTBEAT_TTL_S = 60
SYNC_INTERVAL_S = 1.0
# How often the feed looks for events created since it started (a trader's new event).
ADOPT_INTERVAL_S = 10.0
TRADING = (Market.Status.OPEN, Market.Status.SUSPENDED)
# A market's noise in log-odds: each step keeps NOISE_KEEP of it and adds a normal NOISE_STEP.
NOISE_KEEP = 0.8
NOISE_STEP = 0.02
# Before a match, its strengths drift (books move as money comes in): every ``PRE_MATCH_DRIFT_S``
# or so, by this much. Each drift reprices the event's markets, so not every second.
PRE_MATCH_DRIFT = 0.02
PRE_MATCH_DRIFT_S = 20.0
# In play, time alone moves the book: it is repriced when this share of the playing time has gone.
REPRICE_SHARE = 0.01

__all__ = ["FeedRunner", "replay", "sequences_next"]


class Writer(Protocol):
    def write(self, text: str) -> object: ...

    def flush(self) -> None: ...


@dataclass
class SimulatedMarket:
    """One market as the feed prices it. A market of a kind the registry knows, in an event with
    a model, is priced from the model's fair chances with ``bias`` (a trader's adjustment, in
    log-odds) and ``noise`` on top; any other follows ``walk``, a random walk from its book."""

    market_id: int
    selection_ids: list[int]
    walk: RandomWalk
    # The pricing model's margin for the market; a trader's (``Market.margin``) wins while set.
    margin: float
    event_id: int = 0
    kind: MarketKind | None = None
    line: Decimal | None = None
    status: str = Market.Status.OPEN
    version: int = 1
    catalogue_prices: dict[int, Decimal] = field(default_factory=dict)
    prices: list[Decimal] = field(default_factory=list)
    bias: list[float] = field(default_factory=list)
    noise: list[float] = field(default_factory=list)
    trader_margin: Decimal | None = None

    @property
    def book_margin(self) -> float:
        """The margin the market's books carry: the trader's when one is set, else the model's.
        (A ratio for the pricing arithmetic, not money.)"""
        return float(self.trader_margin) if self.trader_margin is not None else self.margin

    @property
    def winning(self) -> int:
        return self.kind.winning if self.kind is not None else 1

    def priced_by(self, pricer: EventPricer | None) -> bool:
        return pricer is not None and self.kind is not None and self.kind.size == len(self.selection_ids)

    def book(self, pricer: EventPricer | None, *, rng: random.Random, step: bool) -> list[Decimal]:
        """The market's prices now; ``step`` moves its noise (or walk) first."""
        if pricer is None or self.kind is None or not self.priced_by(pricer):
            chances = self.walk.step() if step else self.walk.probabilities()
            return prices_from_probabilities(chances, self.book_margin)
        fair = pricer.fair(self.kind, self.line)
        if not self.bias:
            self.bias = [0.0] * len(fair)
        if not self.noise:
            self.noise = [0.0] * len(fair)
        if step:
            self.noise = [NOISE_KEEP * n + rng.gauss(0.0, NOISE_STEP) for n in self.noise]
        weights = [max(p, 1e-6) * math.exp(b + n) for p, b, n in zip(fair, self.bias, self.noise, strict=True)]
        total = sum(weights)
        chances = [min(0.9995, self.winning * w / total) for w in weights]
        return prices_from_probabilities(chances, self.book_margin)

    def rebase(self, overrides: dict[int, Decimal], pricer: EventPricer | None) -> None:
        """A trader's prices put in: the book as it now stands becomes the market's, kept from
        then on as an adjustment of the model's chances."""
        current = self.prices or [self.catalogue_prices[i] for i in self.selection_ids]
        book = [overrides.get(i, p) for i, p in zip(self.selection_ids, current, strict=True)]
        wanted = probabilities_from_prices(book, winning=self.winning)
        if pricer is not None and self.kind is not None and self.priced_by(pricer):
            fair = pricer.fair(self.kind, self.line)
            self.bias = [math.log(max(w, 1e-6)) - math.log(max(p, 1e-6)) for w, p in zip(wanted, fair, strict=True)]
            self.noise = [0.0] * len(fair)
        else:
            self.walk = RandomWalk(wanted, rng=self.walk.rng)
        self.prices = book


def markets_load(*, limit: int, rng: random.Random, known_events: set[int] | None = None) -> list[SimulatedMarket]:
    """Trading markets of upcoming and in-play events (other than ``known_events``), whole
    events at a time, soonest first, with their catalogue prices as the starting point."""
    simulated: list[SimulatedMarket] = []
    queryset = (
        Market.objects.filter(status__in=TRADING, event__status__in=[Event.Status.SCHEDULED, Event.Status.IN_PLAY])
        .exclude(event_id__in=list(known_events or ()))
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
        kind = kind_of(market.kind)
        simulated.append(
            SimulatedMarket(
                market_id=market.id,
                selection_ids=[s.id for s in selections],
                walk=RandomWalk(probabilities_from_prices(prices), rng=rng),
                margin=rng.uniform(0.04, 0.08),
                trader_margin=market.margin,
                event_id=market.event_id,
                kind=kind,
                line=market.line,
                status=market.status,
                version=market.version,
                catalogue_prices={s.id: s.price for s in selections},
                prices=prices,
            )
        )
    return simulated


def update_build(
    market: SimulatedMarket,
    *,
    seq: int,
    now_ms: int,
    pricer: EventPricer | None,
    rng: random.Random,
    step: bool = True,
) -> PriceUpdate:
    """Price the market's book (moved one step first when ``step``) and snapshot it."""
    market.prices = market.book(pricer, rng=rng, step=step)
    return _snapshot(market, seq=seq, now_ms=now_ms, status="open")


def _snapshot(market: SimulatedMarket, *, seq: int, now_ms: int, status: str) -> PriceUpdate:
    return PriceUpdate(
        market_id=market.market_id,
        seq=seq,
        status=status,
        selections=tuple(SelectionPrice(i, p) for i, p in zip(market.selection_ids, market.prices, strict=True)),
        event_ts=now_ms,
        produce_ts=now_ms,
    )


def _books(markets: list[SimulatedMarket]) -> dict[str, Book]:
    """An event's catalogue books by kind, as fair chances (the first market of each kind)."""
    books: dict[str, Book] = {}
    for market in markets:
        if market.kind is None or market.kind.key in books or market.kind.size != len(market.selection_ids):
            continue
        prices = [market.catalogue_prices[i] for i in market.selection_ids]
        books[market.kind.key] = (market.line, probabilities_from_prices(prices, winning=market.kind.winning))
    return books


@dataclass
class Resumed:
    """What the match state the reducers hold says of a match under way."""

    seq: int
    incidents: list[Incident]


def matches_load(
    *, by_event: dict[int, list[SimulatedMarket]], rng: random.Random, stored: dict[int, dict[str, Any]]
) -> tuple[dict[int, MatchState], dict[int, Resumed]]:
    """The simulator's matches, each with its model's parameters from its own book. A match
    under way resumes from the match state the reducers hold (``stored``), else from the
    catalogue's score; one in play with neither is played from its kick-off up to now."""
    matches: dict[int, MatchState] = {}
    resumed: dict[int, Resumed] = {}
    for event in Event.objects.filter(id__in=list(by_event)).select_related("competition__sport"):
        sport = event.competition.sport.slug
        params = calibrate(sport=sport, books=_books(by_event[event.id]))
        state = MatchState(event_id=event.id, sport=sport, starts_at=event.starts_at.timestamp(), params=params)
        message = stored.get(event.id)
        if event.status == Event.Status.IN_PLAY and message is not None and message.get("status") != "finished":
            _resume(state, message)
            resumed[event.id] = Resumed(
                seq=int(message["seq"]),
                incidents=[_incident(raw) for raw in reversed(message.get("incidents") or [])],
            )
        elif event.status == Event.Status.IN_PLAY and (event.home_score or event.away_score):
            state.status = "in_play"
            state.home, state.away = event.home_score, event.away_score
            if sport == "tennis":
                state.tennis = tennis_from_score({"sets": [state.home, state.away]})
        matches[event.id] = state
    return matches, resumed


def _resume(state: MatchState, message: dict[str, Any]) -> None:
    score = message.get("score") or {}
    state.status = "in_play"
    if state.sport == "tennis":
        state.tennis = tennis_from_score(score)
        state.home, state.away = state.tennis.sets
        return
    state.home, state.away = int(score.get("home", 0)), int(score.get("away", 0))
    state.periods = [list(p) for p in score.get("periods") or []]
    for raw in message.get("incidents") or []:
        if raw.get("kind") == "red_card" and raw.get("side") in ("home", "away"):
            state.red_cards[0 if raw["side"] == "home" else 1] += 1


def _incident(raw: dict[str, Any]) -> Incident:
    return Incident(kind=raw["kind"], side=raw.get("side", ""), period=int(raw.get("period", 0)), at=int(raw["at"]))


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
        # A beat before loading: the watch for a stopped feed leaves a starting one alone.
        self._beat()
        self.producer: Producer = producer_create()
        self.record = record
        self.market_limit = markets
        self.markets: list[SimulatedMarket] = []
        self.by_id: dict[int, SimulatedMarket] = {}
        self.by_event: dict[int, list[SimulatedMarket]] = defaultdict(list)
        self.matches: dict[int, MatchState] = {}
        self.pricers: dict[int, EventPricer] = {}
        self.priced_share: dict[int, float] = {}
        self.next_drift: dict[int, float] = {}
        self.sent = 0
        self.lifecycle_steps = 0
        # Per event: the last match-state sequence, the phase it showed, the match time (seconds)
        # of the last look at it, and its incidents, oldest first.
        self.match_seq: dict[int, int] = {}
        self.match_phase: dict[int, tuple[int, bool] | None] = {}
        self.match_elapsed: dict[int, float] = {}
        self.match_incidents: dict[int, list[Incident]] = defaultdict(list)
        # The predictor game's events (``topics.game_events``): per event, the last sequence and
        # the last clock minute told; bookings come from a random stream of their own, so the
        # rest of a seeded match plays as it did without them.
        self.game_seq: dict[int, int] = {}
        self.game_minute: dict[int, int] = {}
        self.card_rng = random.Random(None if seed is None else seed + 1)
        self.next_card: dict[int, float] = {}
        self._adopt(markets_load(limit=markets, rng=self.rng))
        if lifecycle:
            self._reopen_left_suspended()

    def _adopt(self, markets: list[SimulatedMarket]) -> None:
        """Take on markets (whole events): their matches resumed as the reducers hold them, each
        event's model calibrated to its book, their prices from it."""
        for market in markets:
            self.markets.append(market)
            self.by_id[market.market_id] = market
            self.by_event[market.event_id].append(market)
        events = {market.event_id: self.by_event[market.event_id] for market in markets}
        matches, resumed = matches_load(by_event=events, rng=self.rng, stored=self._stored_states(sorted(events)))
        now = time.time()
        for event_id, match in matches.items():
            self.matches[event_id] = match
            if match.sport in MODELLED:
                live = match.live(now=now, speed=self.speed)
                self.pricers[event_id] = EventPricer(sport=match.sport, params=params_of(match), live=live)
                self.priced_share[event_id] = 1.0
                self.next_drift[event_id] = now + self.rng.uniform(0, PRE_MATCH_DRIFT_S)
        for event_id, r in resumed.items():
            self.match_seq[event_id] = r.seq
            self.match_incidents[event_id] = r.incidents
        for market in markets:
            market.prices = market.book(self.pricers.get(market.event_id), rng=self.rng, step=False)

    def adopt_new(self) -> int:
        """Events created since the feed started (a trader's new event), once the markets table
        holds their markets' definitions (a price ahead of its definition is a dead letter):
        priced, played and resulted like the rest. Returns how many markets it took on."""
        room = self.market_limit - len(self.markets)
        if room <= 0:
            return 0
        fresh = markets_load(limit=room, rng=self.rng, known_events=set(self.by_event))
        if not fresh:
            return 0
        defined = set(markets_defined(market_ids=[m.market_id for m in fresh]))
        undefined_events = {m.event_id for m in fresh if m.market_id not in defined}
        ready = [m for m in fresh if m.event_id not in undefined_events]
        self._adopt(ready)
        return len(ready)

    def _beat(self) -> None:
        heartbeat_beat(self.redis, "feed", ttl_s=HEARTBEAT_TTL_S)

    def _stored_states(self, ids: list[int]) -> dict[int, dict[str, Any]]:
        try:
            found = match_states(ids)
        except redis.RedisError:
            return {}
        return {event_id: state for event_id, state in zip(ids, found, strict=True) if state is not None}

    # --- producing ---

    def produce(self, update: PriceUpdate) -> None:
        self.producer.produce(topics.prices(), key=update.key(), value=update.encode())
        if self.record is not None:
            self.record.write(update.encode_json() + b"\n")
        self.sent += 1

    def _announce(self, markets: list[SimulatedMarket], *, status: str) -> None:
        """Publish the markets' current books with a new status (no noise step)."""
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
        self._books_publish([self.rng.choice(tradable) for _ in range(count)], step=True)

    def _books_publish(self, markets: list[SimulatedMarket], *, step: bool) -> None:
        """Price each of ``markets`` (a step of its noise first when ``step``) and produce its book
        with the market's next source sequence."""
        seqs = sequences_next(self.redis, [m.market_id for m in markets])
        now_ms = int(time.time() * 1000)
        for market, seq in zip(markets, seqs, strict=True):
            pricer = self.pricers.get(market.event_id)
            self.produce(update_build(market, seq=seq, now_ms=now_ms, pricer=pricer, rng=self.rng, step=step))

    # --- lifecycle ---

    def _versions_note(self, changed: list[Market]) -> None:
        for market in changed:
            simulated = self.by_id.get(market.id)
            if simulated is not None:
                simulated.version = market.version
                simulated.status = market.status

    def _suspend(self, event_id: int, reason: Reason) -> None:
        markets = [m for m in self.by_event[event_id] if m.status == Market.Status.OPEN]
        self._versions_note(
            markets_status_set(
                market_ids=[m.market_id for m in markets],
                status=Market.Status.SUSPENDED,
                only_from=[Market.Status.OPEN],
                publish=False,
                reason=reason,
                by=BY_FEED,
            )
        )
        self._announce([m for m in markets if m.status == Market.Status.SUSPENDED], status="suspended")

    def _reopen(self, event_id: int) -> None:
        """Reopen the event's markets the feed (or its watch) suspended; a trader's stay."""
        markets = [m for m in self.by_event[event_id] if m.status == Market.Status.SUSPENDED]
        self._versions_note(
            markets_status_set(
                market_ids=[m.market_id for m in markets],
                status=Market.Status.OPEN,
                only_from=[Market.Status.SUSPENDED],
                publish=False,
                only_by=FEED_SETTERS,
            )
        )
        self._announce([m for m in markets if m.status == Market.Status.OPEN], status="open")

    def _reopen_left_suspended(self) -> None:
        """Markets a previous run (or the watch of a lost feed) left suspended, in matches with no
        incident under way now, are reopened at once: nobody else would."""
        for event_id, match in self.matches.items():
            if match.suspended_until is None and match.status != "finished":
                self._reopen(event_id)

    def _reprice(self, match: MatchState, *, now: float, force: bool) -> bool:
        """Bring the event's model up to the match; returns whether it moved."""
        pricer = self.pricers.get(match.event_id)
        if pricer is None:
            return False
        share = 1.0 if match.status == "scheduled" else 0.0
        if match.status == "in_play" and match.sport != "tennis":
            share = remaining_share(sport=match.sport, elapsed_s=match.elapsed(now=now, speed=self.speed))
        if not force and abs(self.priced_share.get(match.event_id, 1.0) - share) < REPRICE_SHARE:
            return False
        self.priced_share[match.event_id] = share
        pricer.update(params=params_of(match), live=match.live(now=now, speed=self.speed))
        for market in self.by_event[match.event_id]:
            market.prices = market.book(pricer, rng=self.rng, step=False)
        return True

    def _full_time(self, event_id: int, match: MatchState) -> None:
        # Every trading market of the event is resulted, including ones this run does not move.
        outcome = match.outcome()
        for market in Market.objects.filter(event_id=event_id, status__in=TRADING).prefetch_related("selections"):
            selections = sorted(market.selections.all(), key=lambda s: (s.display_order, s.id))
            simulated = self.by_id.get(market.id)
            kind = kind_of(market.kind)
            winners = None if kind is None else kind.winners(outcome, line=market.line, selections=len(selections))
            resulted = market_result(
                market=market,
                winners=None if winners is None else [selections[i].id for i in winners],
                publish=simulated is None,
            )
            self._versions_note([resulted])
            if simulated is not None:
                self._announce([simulated], status="closed")

    def tick_lifecycle(self, now: float) -> None:
        for match in self.matches.values():
            if (
                match.status == "scheduled"
                and match.event_id in self.pricers
                and now >= self.next_drift[match.event_id]
            ):
                match.params = drift(params_of(match), rng=self.rng, scale=PRE_MATCH_DRIFT)
                self.pricers[match.event_id].update(params=match.params)
                self.next_drift[match.event_id] = now + self.rng.uniform(0.5, 1.5) * PRE_MATCH_DRIFT_S
            actions = lifecycle_step(match, now=now, speed=self.speed, rng=self.rng)
            self.lifecycle_steps += len(actions)
            self._lifecycle_apply(match, actions, now=now)
            booked = self._booking(match, now=now)
            self._match_publish(match, actions=actions, now=now, forced=booked)
            self._game_tell(match, actions, now=now)

    # --- the predictor game's match events ---

    def _game_minute(self, match: MatchState, *, now: float) -> int:
        clock = match_clock(
            sport=match.sport, elapsed_s=match.elapsed(now=now, speed=self.speed), at_ms=int(now * 1000), rate=1
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

    def _game_tell(self, match: MatchState, actions: list[Action], *, now: float) -> None:
        """What the game reads of a look at the match: the kick-off, each goal, basket or tennis
        game won, each red card, full time and (football: the questions' windows run on it) the
        clock's minute when it moved."""
        for action in actions:
            side = action.side if action.side in ("home", "away") else ""
            if action.step is Step.KICK_OFF:
                self.game_emit(match, "kick_off", now=action.at)
            elif side and (action.step is Step.SCORE or (action.step is Step.POINT and action.game)):
                self.game_emit(match, "score", now=action.at, side=side)
            elif action.step is Step.CARD and side:
                self.game_emit(match, "card", now=action.at, side=side)
            elif action.step is Step.FULL_TIME:
                self.game_emit(match, "full_time", now=action.at)
        if match.status != "in_play" or match.sport != "football":
            return
        minute = self._game_minute(match, now=now)
        if minute > self.game_minute.get(match.event_id, 0):
            self.game_minute[match.event_id] = minute
            self.game_emit(match, "minute", now=now)

    def _booking(self, match: MatchState, *, now: float) -> bool:
        """A booking in a football match in play, at random moments of its own; True when one
        fell (an incident on the match state and a card for the game)."""
        if match.status != "in_play" or match.sport != "football":
            return False
        due = self.next_card.get(match.event_id)
        if due is None:
            self.next_card[match.event_id] = card_next_at(now=now, speed=self.speed, rng=self.card_rng)
            return False
        elapsed = match.elapsed(now=now, speed=self.speed)
        if now < due or in_break(sport=match.sport, elapsed_s=elapsed):
            return False
        self.next_card[match.event_id] = card_next_at(now=now, speed=self.speed, rng=self.card_rng)
        side = "home" if self.card_rng.random() < 0.5 else "away"
        phase = phase_at(sport=match.sport, elapsed_s=elapsed)
        period = 1 if phase is None else phase.period
        self.match_incidents[match.event_id].append(Incident(kind="card", side=side, period=period, at=int(now * 1000)))
        self.game_emit(match, "card", now=now, side=side)
        return True

    def _lifecycle_apply(self, match: MatchState, actions: list[Action], *, now: float) -> None:
        scored = any(a.step in (Step.SCORE, Step.POINT, Step.CARD) for a in actions)
        moved = self._reprice(match, now=now, force=scored or any(a.step is Step.KICK_OFF for a in actions))
        event = Event(id=match.event_id)
        clock = match.clock(now=now, speed=self.speed)
        for action in actions:
            if action.step is Step.KICK_OFF:
                event_update(event=event, status=Event.Status.IN_PLAY, home_score=0, away_score=0, clock=clock)
                self._suspend(match.event_id, Reason.KICK_OFF)
            elif action.step is Step.REOPEN:
                self._reopen(match.event_id)
            elif action.step is Step.FULL_TIME:
                event_update(
                    event=event,
                    status=Event.Status.FINISHED,
                    home_score=match.home,
                    away_score=match.away,
                    clock=clock,
                )
                self._full_time(match.event_id, match)
                return
            elif action.reason is not None:
                self._suspend(match.event_id, action.reason)
        if scored:
            event_update(event=event, home_score=match.home, away_score=match.away, clock=clock)
        if moved and match.status == "in_play":
            # The book jumps with the match: every open market's new prices at once.
            self._announce([m for m in self.by_event[match.event_id] if m.status == Market.Status.OPEN], status="open")

    # --- match state ---

    def _match_publish(self, match: MatchState, *, actions: list[Action], now: float, forced: bool = False) -> None:
        """Publish the event's match state when something happened or its phase changed. A
        break that began and ended between two looks (a late tick, a fast simulation) is
        published too, as it stood when it began: every clock shows half time."""
        if match.status == "scheduled":
            return
        now_ms = int(now * 1000)
        elapsed = match.elapsed(now=now, speed=self.speed)
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
                self.match_incidents[match.event_id].extend(self._incidents_of(action, match))
            self.match_phase[match.event_id] = None if start is None else (start.period, start.playing)
            self._match_emit(match, elapsed=0.0, now_ms=int(kick_off[0].at * 1000), score=(0, 0))
            looked = 0.0
        if looked is not None and match.status == "in_play":
            for passed in breaks_passed(sport=match.sport, from_s=looked, to_s=elapsed):
                self._break_begins(match, period=passed.period, start_s=passed.start_s)
                self._match_emit(match, elapsed=float(passed.start_s), now_ms=now_ms)
        phase = phase_at(sport=match.sport, elapsed_s=elapsed)
        shown = None if phase is None else (phase.period, phase.playing)
        previous = self.match_phase.get(match.event_id, ())
        if previous not in ((), shown) and phase is not None and not phase.playing:
            self._break_begins(match, period=phase.period, start_s=phase.start_s)
        for action in actions:
            self.match_incidents[match.event_id].extend(self._incidents_of(action, match))
        if not actions and previous == shown and not forced:
            return
        self.match_phase[match.event_id] = shown
        self._match_emit(match, elapsed=elapsed, now_ms=now_ms)

    def _break_begins(self, match: MatchState, *, period: int, start_s: int) -> None:
        kind = "half_time" if match.sport == "football" else "quarter_end"
        at_ms = int((match.starts_at + start_s / self.speed) * 1000)
        self.match_incidents[match.event_id].append(Incident(kind=kind, side="", period=period, at=at_ms))
        if kind == "half_time":
            self.game_emit(match, "half_time", now=at_ms / 1000)

    def _match_emit(
        self, match: MatchState, *, elapsed: float, now_ms: int, score: tuple[int, int] | None = None
    ) -> None:
        seq = max(self.match_seq.get(match.event_id, 0) + 1, now_ms)
        self.match_seq[match.event_id] = seq
        # Oldest first by when they happened (a late look learns of several at once).
        self.match_incidents[match.event_id].sort(key=lambda incident: incident.at)
        home, away = score if score is not None else (match.home, match.away)
        suspension = None
        if match.suspension is not None and match.suspended_since is not None:
            suspension = MatchSuspension(reason=match.suspension, since=int(match.suspended_since * 1000))
        self.produce_match(
            match_state_build(
                event_id=match.event_id,
                seq=seq,
                sport=match.sport,
                status=match.status,
                elapsed_s=elapsed,
                home=home,
                away=away,
                incidents=self.match_incidents[match.event_id],
                now_ms=now_ms,
                rate=max(1, round(self.speed)),
                tennis=match.tennis if match.sport == "tennis" else None,
                periods=match.periods if score is None else None,
                suspension=suspension,
            )
        )

    def _incidents_of(self, action: Action, match: MatchState) -> list[Incident]:
        at_ms = max(1, int(action.at * 1000))
        phase = phase_at(sport=match.sport, elapsed_s=match.elapsed(now=action.at, speed=self.speed))
        period = 1 if phase is None else phase.period
        if action.step is Step.KICK_OFF:
            return [Incident(kind="kick_off", side="", period=1, at=at_ms)]
        if action.step is Step.FULL_TIME:
            if match.sport == "tennis":
                period = max(1, len(match.tennis.set_games))
            return [Incident(kind="full_time", side="", period=period, at=at_ms)]
        side = action.side if action.side in ("home", "away") else ""
        if action.step is Step.CARD:
            return [Incident(kind="red_card", side=side, period=period, at=at_ms)]
        if action.step is Step.POINT:
            if not action.game:
                return []
            set_number = len(match.tennis.set_games) + (0 if action.set else 1)
            won = [Incident(kind="game_won", side=side, period=max(1, set_number), at=at_ms)]
            if action.set:
                won.append(Incident(kind="set_won", side=side, period=max(1, set_number), at=at_ms))
            return won
        if action.step is not Step.SCORE:
            return []
        if match.sport != "football":
            return [Incident(kind="basket", side=side, period=period, at=at_ms)]
        goal = [Incident(kind="goal", side=side, period=period, at=at_ms)]
        if action.reason is Reason.VAR:
            goal.append(Incident(kind="var_check", side=side, period=period, at=at_ms))
        return goal

    def produce_match(self, state: MatchStateUpdate) -> None:
        self.producer.produce(topics.match_states(), key=state.key(), value=state.encode())

    # --- trader changes ---

    def sync_catalogue(self) -> None:
        """Follow changes made outside the feed: trader suspensions, resumptions, prices and margins."""
        rows = Market.objects.filter(id__in=list(self.by_id)).values_list("id", "status", "version", "margin")
        changed = []
        repriced = []
        for market_id, status, version, margin in rows:
            simulated = self.by_id[market_id]
            if version == simulated.version:
                continue
            simulated.version = version
            simulated.status = status
            if margin != simulated.trader_margin:
                simulated.trader_margin = margin
                repriced.append(simulated)
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
                simulated.rebase(overrides, self.pricers.get(simulated.event_id))
        self._margins_publish(repriced)
        self.markets = [m for m in self.markets if m.status in TRADING]

    def _margins_publish(self, markets: list[SimulatedMarket]) -> None:
        """Publish at once the book of each open market whose margin a trader changed, so the new
        margin shows on the next prices rather than whenever the market next moves."""
        open_markets = [m for m in markets if m.status == Market.Status.OPEN]
        if open_markets:
            self._books_publish(open_markets, step=False)

    # --- the loop ---

    def run(self, *, duration: float | None, out: Writer = sys.stdout) -> int:
        if not self.markets:
            raise RuntimeError("no open markets to simulate: run `manage.py seed_demo` first")
        tick = 0.01
        started = last_report = last_sync = last_adopt = time.monotonic()
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
            if now - last_adopt >= ADOPT_INTERVAL_S:
                self.adopt_new()
                last_adopt = now
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
                self._beat()
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
