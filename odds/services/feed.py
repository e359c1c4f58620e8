"""The feed simulator: moves open markets' books and produces price updates to Kafka."""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol

import redis
from confluent_kafka import Producer
from django.conf import settings

from odds.feed.book import RandomWalk, prices_from_probabilities, probabilities_from_prices
from odds.models import Market
from odds.services.kafka import producer_create
from odds.services.sequences import sequences_next
from reducers import keys, topics
from reducers.schemas import PriceUpdate, SelectionPrice, decode_price_update

HEARTBEAT_TTL_S = 60


class Writer(Protocol):
    def write(self, text: str) -> object: ...

    def flush(self) -> None: ...


@dataclass
class SimulatedMarket:
    market_id: int
    selection_ids: list[int]
    walk: RandomWalk
    margin: float


def markets_load(*, limit: int, rng: random.Random) -> list[SimulatedMarket]:
    """Open markets with their current prices as the walk's starting point."""
    simulated = []
    queryset = Market.objects.filter(status=Market.Status.OPEN).prefetch_related("selections").order_by("id")[:limit]
    for market in queryset:
        selections = list(market.selections.all())
        if len(selections) < 2:
            continue
        prices = [s.price for s in selections]
        simulated.append(
            SimulatedMarket(
                market_id=market.id,
                selection_ids=[s.id for s in selections],
                walk=RandomWalk(probabilities_from_prices(prices), rng=rng),
                margin=rng.uniform(0.04, 0.08),
            )
        )
    return simulated


def update_build(market: SimulatedMarket, *, seq: int, now_ms: int, status: str = "open") -> PriceUpdate:
    prices = prices_from_probabilities(market.walk.step(), market.margin)
    return PriceUpdate(
        market_id=market.market_id,
        seq=seq,
        status=status,
        selections=tuple(SelectionPrice(i, p) for i, p in zip(market.selection_ids, prices, strict=True)),
        event_ts=now_ms,
        produce_ts=now_ms,
    )


class FeedRunner:
    def __init__(self, *, rate: float, markets: int, seed: int | None, record: IO[bytes] | None) -> None:
        self.rate = rate
        self.rng = random.Random(seed)
        self.redis = redis.Redis.from_url(settings.REDIS_URL)
        self.producer: Producer = producer_create()
        self.record = record
        self.markets = markets_load(limit=markets, rng=self.rng)
        self.sent = 0

    def produce(self, update: PriceUpdate) -> None:
        value = update.encode()
        self.producer.produce(topics.prices(), key=update.key(), value=value)
        if self.record is not None:
            self.record.write(value + b"\n")
        self.sent += 1

    def run(self, *, duration: float | None, out: Writer = sys.stdout) -> int:
        if not self.markets:
            raise RuntimeError("no open markets to simulate: run `manage.py seed_demo` first")
        tick = 0.01
        started = last_report = time.monotonic()
        budget = 0.0
        last_sent = 0
        while duration is None or time.monotonic() - started < duration:
            loop_start = time.monotonic()
            budget += self.rate * tick
            count = int(budget)
            budget -= count
            if count:
                chosen = [self.rng.choice(self.markets) for _ in range(count)]
                seqs = sequences_next(self.redis, [m.market_id for m in chosen])
                now_ms = int(time.time() * 1000)
                for market, seq in zip(chosen, seqs, strict=True):
                    self.produce(update_build(market, seq=seq, now_ms=now_ms))
            self.producer.poll(0)
            now = time.monotonic()
            if now - last_report >= 1.0:
                rate = (self.sent - last_sent) / (now - last_report)
                out.write(f"\rfeed: {self.sent} updates sent, {rate:,.0f}/s over {len(self.markets)} markets   ")
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
                yield decode_price_update(line.strip())


__all__ = ["FeedRunner", "replay"]
