"""Markets table: the compacted markets topic read as a table into Redis, and the query stage.

Each record is a market definition keyed by market id (the newest version wins) or a tombstone
that removes the market. After every batch, each shared query channel compares the batch's
changed markets with its query: markets that start matching join it, markets that stop matching
leave it, and a market whose listed fields changed (kick-off, status) is named as changed. Time
alone moves markets in and out of a kick-off window ("starting within 60 minutes"): a timer looks
at the markets on each window's edge.

A price that reached the price reducer before its market's definition reached this table was
dead-lettered and its newest snapshot kept (``MarketStore.keep_unknown``); once the
definition is written here, that price is applied and fanned out like any other.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import redis
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming import StreamingQuery

from reducers import topics
from reducers.markets import TablePlan, plan_table
from reducers.queries import MARKETS
from reducers.schemas import InvalidRecord, MarketDefinition, decode_market_row
from spark.faults import failure_of
from spark.jobs.query import dead_letters_of, start_query
from spark.sinks.dead_letter import DeadLetters, Rejects
from store.channels import ChannelStore, FanOutJournal
from store.clients import redis_client
from store.markets import MarketStore

log = logging.getLogger("spark.jobs.markets")
QUERY_NAME = MARKETS.name


class MarketTableProcessor:
    """Applies a batch of the markets topic; a record that cannot be decoded or applied is a
    dead letter, and the records after it are applied as usual."""

    def __init__(self, *, redis_client: redis.Redis, dead_letters: DeadLetters) -> None:
        self._redis = redis_client
        self._channels = ChannelStore(redis_client)
        self._journal = FanOutJournal(self._channels, query=QUERY_NAME, of="markets")
        self._store = MarketStore(redis_client)
        self._dead_letters = dead_letters

    def apply_rows(self, rows: list[Any]) -> dict[str, int]:
        """Decide the batch's records in order (``reducers.markets.plan_table``) against the
        table as it stands, write each decision, then apply the prices the new definitions
        release and restate the markets whose status changed."""
        rejects = Rejects(
            sink=self._dead_letters, redis_client=self._redis, source_topic=topics.markets(), counter_prefix="market_"
        )
        decoded: list[tuple[Any, int, MarketDefinition | None]] = []
        for row in sorted(rows, key=lambda r: (r["partition"], r["offset"])):
            try:
                market_id, definition = decode_market_row(row["key"], row["value"])
            except InvalidRecord as exc:
                rejects.add(row, exc.reason, exc.detail)
                continue
            except Exception as exc:  # anything else a record can raise is that record's fault
                rejects.add(row, *failure_of(exc, stage="decode"))
                continue
            decoded.append((row, market_id, definition))
        market_ids = [market_id for _, market_id, _ in decoded]
        plan = plan_table(
            [(market_id, definition) for _, market_id, definition in decoded],
            self._store.stored_definitions(market_ids),
        )
        # What the shared query channels compare: each market's definition before the batch and
        # after it (a stale record, as in a replay, leaves it as it was).
        before = self._store.definitions(market_ids)
        after: dict[int, MarketDefinition | None] = {}
        done = TablePlan()
        for (row, market_id, _), change in zip(decoded, plan.changes, strict=True):
            try:
                if change.effect is not None:
                    self._store.execute_definition(change.effect)
            except Exception as exc:
                rejects.add(row, *failure_of(exc, stage="apply"))
                continue
            done.changes.append(change)
            after[market_id] = (
                change.effect.definition if change.effect is not None else after.get(market_id, before.get(market_id))
            )
        rejects.flush()
        counts = {**done.counts(), "rejected": len(rows) - len(done.changes)}
        with self._journal.batch() as journal:
            counts["kept_prices_applied"] = self._apply_kept_prices(done.released, journal=journal)
            # A price applied before this row changed carries the old row's verdict: re-derive it.
            restated = self._store.restatus(done.restated, journal=journal)
            self._channels.fan_out(restated, journal=journal)
        counts["restated"] = len(restated)
        # Markets that start or stop matching a shared query join or leave it now, from the
        # batch's own changes; time alone moves them on the refresher's timer.
        shared = self._channels.refresh_shared({m: (before.get(m), new) for m, new in after.items()})
        counts["query_channels_changed"] = len(shared)
        return counts

    def _apply_kept_prices(self, market_ids: list[int], *, journal: str) -> int:
        """Apply the prices kept while these markets were unknown; read only after their
        definitions were written, so a price kept at any earlier moment is found."""
        items = self._store.kept_prices(market_ids)
        if not items:
            return 0
        applied = self._store.apply(items, journal=journal)
        self._channels.fan_out(applied, journal=journal)
        # Forgotten only once applied: a crash before this line replays the batch, which applies
        # the kept price again (harmless: apply-if-newer).
        self._store.discard_kept([item.update.market_id for item in items])
        return len(applied)

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        counts = self.apply_rows(batch.collect())
        log.info("batch %s: %s", batch_id, counts)


class QueryRefresher(threading.Thread):
    """Moves markets in and out of the shared query channels of a kick-off window as time passes
    (``ChannelStore.refresh_windows``: only the markets on a window's edge are read)."""

    def __init__(self, *, redis_client: redis.Redis, interval_s: float) -> None:
        super().__init__(name="query-refresher", daemon=True)
        self._channels = ChannelStore(redis_client)
        self._interval = interval_s
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(self._interval):
            try:
                self._channels.refresh_windows()
            except redis.RedisError as exc:
                log.warning("query refresh failed: %s", exc)


def start(spark: SparkSession, *, bootstrap: str, redis_url: str, checkpoint_dir: str) -> StreamingQuery:
    processor = MarketTableProcessor(
        redis_client=redis_client(redis_url), dead_letters=dead_letters_of(MARKETS, bootstrap=bootstrap)
    )
    return start_query(
        spark, MARKETS, process=processor, bootstrap=bootstrap, redis_url=redis_url, checkpoint_dir=checkpoint_dir
    )
