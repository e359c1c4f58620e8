"""Liability reducer: bet events → liability per selection and per outcome in Redis
(adder/subtractor, exact per currency, converted at the operator's rates), the trading desk's
ticker and liability frames on its staff channels.

Each bet event carries a unique ``event_id``; the store's script marks it seen and applies its
deltas in one step, so redelivered events (at-least-once) are counted and published exactly once.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import redis
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming import StreamingQuery

from reducers import frames, topics
from reducers.liability import (
    SEEN_TTL_S,
    LiabilityDelta,
    MarketNames,
    OutcomeDelta,
    liability_deltas,
    liability_frame,
    market_book_frames,
    names_of,
    outcome_deltas,
    ticker_frame,
)
from reducers.queries import LIABILITY
from reducers.schemas import BetEvent, InvalidRecord, decode_bet_event
from spark.config import config
from spark.faults import failure_of
from spark.jobs.query import dead_letters_of, start_query
from spark.sinks.dead_letter import DeadLetters, Rejects
from spark.sources import BatchRows, range_reader
from store.clients import redis_client
from store.liability import BookChange, BookStore
from store.markets import MarketStore

log = logging.getLogger("spark.jobs.liability")
QUERY_NAME = LIABILITY.name


class LiabilityProcessor:
    """One micro-batch of bet events: decoded, named from the markets table, counted once each
    with their ticker frames published (``store.liability.BookStore.apply``), then one
    ``desk.liability`` frame with every market whose book moved."""

    def __init__(self, *, redis_client: redis.Redis, dead_letters: DeadLetters, rows: BatchRows | None = None) -> None:
        self._redis = redis_client
        self._rows = rows or BatchRows(None)
        self._books = BookStore(redis_client)
        self._markets = MarketStore(redis_client)
        self._dead_letters = dead_letters

    def process_rows(self, rows: list[Any]) -> dict[str, int]:
        counts = {"applied": 0, "duplicates": 0, "rejected": 0}
        rejects = Rejects(
            sink=self._dead_letters, redis_client=self._redis, source_topic=topics.bets(), counter_prefix="bet_"
        )
        decoded: list[tuple[Any, BetEvent, list[LiabilityDelta], list[OutcomeDelta]]] = []
        for row in sorted(rows, key=lambda r: (r["partition"], r["offset"])):
            try:
                event = decode_bet_event(row["value"])
                decoded.append((row, event, liability_deltas(event), outcome_deltas(event)))
            except InvalidRecord as exc:
                counts["rejected"] += 1
                rejects.add(row, exc.reason, exc.detail)
            except Exception as exc:  # anything else a record can raise is that record's fault
                counts["rejected"] += 1
                rejects.add(row, *failure_of(exc, stage="decode"))
        if decoded:
            names = {
                market_id: names_of(definition)
                for market_id, definition in self._markets.definitions(
                    leg.market_id for _, event, _, _ in decoded for leg in event.legs
                ).items()
            }
            now = int(time.time() * 1000)
            rates = self._books.rates()
            changes = [
                BookChange(
                    event_id=event.event_id,
                    selections=selections,
                    markets=markets,
                    ticker=frames.encode(ticker_frame(event, names=names, reducer_ts=now, rates=rates)),
                )
                for _, event, selections, markets in decoded
            ]
            moved: set[int] = set()
            # Each script's reply on its own: one record's error reply must not fail the others.
            for (row, _, _, markets), applied in zip(
                decoded, self._books.apply(changes, seen_ttl_s=SEEN_TTL_S), strict=True
            ):
                if isinstance(applied, Exception):
                    counts["rejected"] += 1
                    rejects.add(row, *failure_of(applied, stage="apply"))
                elif applied:
                    counts["applied"] += 1
                    moved.update(m.market_id for m in markets)
                else:
                    counts["duplicates"] += 1
            if moved:
                self._publish_books(moved, names)
        rejects.flush()
        return counts

    def _publish_books(self, market_ids: set[int], names: dict[int, MarketNames]) -> None:
        books, worsts, rates = self._books.books(market_ids)
        markets = market_book_frames(books, names=names, worsts=worsts, rates=rates)
        self._books.publish_liability(frames.encode(liability_frame(markets, ts=int(time.time() * 1000))))

    def follow(self, query: Any) -> None:
        self._rows.follow(query)

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        started = time.perf_counter()
        rows, read_by = self._rows.of(batch, batch_id)
        read = time.perf_counter()
        counts: dict[str, int] = self.process_rows(rows)
        if any(counts.values()):
            # Where a batch's time goes: reading its records (read_ms), the processing here (the
            # scripts, the books frame).
            counts["read_ms"] = int((read - started) * 1000)
            counts["process_ms"] = int((time.perf_counter() - read) * 1000)
            log.info("batch %s (read by %s): %s", batch_id, read_by, counts)


def start(spark: SparkSession, *, bootstrap: str, redis_url: str, checkpoint_dir: str) -> StreamingQuery:
    processor = LiabilityProcessor(
        redis_client=redis_client(redis_url),
        dead_letters=dead_letters_of(LIABILITY, bootstrap=bootstrap),
        rows=BatchRows(range_reader(bootstrap, query=QUERY_NAME) if config().range_read else None),
    )
    return start_query(
        spark, LIABILITY, process=processor, bootstrap=bootstrap, redis_url=redis_url, checkpoint_dir=checkpoint_dir
    )
