"""Price reducer: Kafka price topic → validate → conflate → Redis state + pub-sub, and each
market's first and last snapshot per event-time window → the window topic, for the movers.

Two trigger modes, chosen by ``SPARK_TRIGGER_MODE``:

* ``microbatch`` (default): ``foreachBatch``; each batch is validated, conflated to the newest
  update per market and applied with one pipelined Redis round trip.
* ``realtime``: Spark's real-time mode; each record is checked in SQL as it is read and written
  to the checked-price topic (``start_realtime``), from which ``spark.jobs.applier`` applies it.
  Every Kafka partition needs its own task slot, so ``local[N]`` needs N ≥ partitions.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any

import pyarrow as pa
import redis
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema

from reducers import topics
from reducers.movers import (
    Prices,
    WindowPartial,
    decode_partial,
    encode_partial,
    fold_partials,
    merge_all,
)
from reducers.prices import Conflated, admit, conflate, merge_conflated, unknown_items
from reducers.queries import PRICES
from reducers.schemas import UNKNOWN_MARKET, InvalidRecord, PriceUpdate, accepted_record_prices, decode_price_update
from reducers.windows import advance_watermark
from spark.columns import PerContext
from spark.config import config
from spark.faults import failure_of
from spark.jobs.query import async_progress_options, gc_paused
from spark.sinks.dead_letter import DeadLetters, DeadLetterSink, Rejects
from spark.sinks.replicated import Replicated
from spark.sinks.windows import WindowStream, WindowTopic
from spark.sources import (
    RAW_COLUMNS,
    BatchRows,
    ReadsRanges,
    kafka_stream,
    one_task_per_slot,
    range_reader,
    raw_row,
)
from spark.validation import with_validity
from store.channels import ChannelStore, FanOutJournal
from store.clients import redis_client
from store.markets import MarketStore
from store.pipeline import counter_add, watermark_read, watermark_write

log = logging.getLogger("spark.jobs.prices")

QUERY_NAME = PRICES.name
COMPONENT = "reducers"
# How far the late-record watermark moves before it is stored again.
WATERMARK_SAVE_STEP_MS = 1000
# Real-time mode: how long the broker holds a fetch of the price topic that finds nothing new.
REALTIME_FETCH_WAIT_MS = 500
# Real-time mode: how long the query's producer holds a record for others to share its request.
REALTIME_LINGER_MS = 5

# A validated price, its Kafka timestamp (ms) and the raw row it came from.
Decoded = tuple[PriceUpdate, int, Any]


def read_prices(spark: SparkSession, *, bootstrap: str, mode: str, starting_offsets: str = "earliest") -> DataFrame:
    """The price topic as a stream of raw records.

    Micro-batches are capped so a backlog is worked off in bounded batches; real-time mode
    rejects the cap (it has no batches to cap).
    """
    if mode == "microbatch":
        return kafka_stream(
            spark,
            topic=topics.prices(),
            bootstrap=bootstrap,
            starting_offsets=starting_offsets,
            max_offsets_per_trigger=config().max_offsets_per_trigger,
        )
    # A real-time task reads its partition continuously: a fetch that finds nothing waits at the
    # broker, which answers as soon as a record arrives. A short wait only made every idle task
    # ask again and again (twelve tasks, a hundred fetches a second each at 10 ms).
    return kafka_stream(
        spark,
        topic=topics.prices(),
        bootstrap=bootstrap,
        starting_offsets=starting_offsets,
        fetch_max_wait_ms=REALTIME_FETCH_WAIT_MS,
    )


class PriceBatchProcessor:
    """The reducer for one micro-batch of raw price records (runs on the driver)."""

    def __init__(
        self,
        *,
        redis_client: redis.Redis,
        dead_letters: DeadLetters,
        windows: WindowStream | None = None,
        range_reader: ReadsRanges | None = None,
        channels: ChannelStore | None = None,
    ) -> None:
        self._sink = MarketStore(redis_client)
        # Where each batch's window partials go, for the movers query (none: a rebuild of the
        # store, which re-applies old prices and has no windows to add to).
        self._windows = windows
        self._window_ms = config().movers_window_ms
        # Each batch's offset ranges, and a small batch's records read straight from Kafka on the
        # driver (no Spark job).
        self._rows = BatchRows(range_reader)
        self._channels = channels or ChannelStore(redis_client)
        self._journal = FanOutJournal(self._channels, query=QUERY_NAME, of="markets")
        self._redis = redis_client
        self._dead_letters = dead_letters
        self._watermark: int | None = None
        self._saved_watermark: int | None = None
        # Milliseconds the last SQL-path batch spent in Spark (parse, check, aggregate, collect).
        self.last_sql_ms: int | None = None
        # Milliseconds the last batch's fan-out to the subscriber channels took (both round trips
        # and the frames built between them).
        self.last_fanout_ms = 0
        # How the last batch's records were read: "sql", "spark" (a job collecting them) or
        # "kafka" (the driver's range reader).
        self.last_read: str | None = None
        # The rows the Python validator refused in the last call of ``_decode``.
        self.last_refused: list[Any] = []
        self._delay_ms = config().movers_watermark_ms
        # How long the newest price of a market the markets table does not know waits for its
        # definition.
        self._unknown_keep_s = config().unknown_market_keep_s

    def _dead_letter(self, rejects: list[tuple[Any, str, str]]) -> None:
        """Send each (row, reason, detail) to the dead-letter topic and count it by reason."""
        batch = Rejects(sink=self._dead_letters, redis_client=self._redis, source_topic=topics.prices())
        for row, reason, detail in rejects:
            batch.add(row, reason, detail)
        batch.flush()

    def _decode(self, rows: list[Any]) -> tuple[list[Decoded], int]:
        """Validate rows in Python; dead-letter the rejected ones with their reason."""
        good, rejects = decode_rows(rows)
        self._dead_letter(rejects)
        self.last_refused = [row for row, _, _ in rejects]
        return good, len(rejects)

    def _admit(
        self, items: list[Conflated], *, rows_of: Callable[[set[int]], list[Any]]
    ) -> tuple[list[Conflated], list[str | None], int]:
        """Keep prices of markets the markets table does not know out of the state.

        Every record of such a market (``rows_of`` finds them) is dead-lettered as
        ``unknown_market``; the market's newest price is kept for the markets query, which
        applies it if the definition arrives within ``SPARK_UNKNOWN_MARKET_KEEP_S``. Returns the items
        to apply, their table statuses (one round trip, reused by the sink) and the number of
        records dead-lettered.
        """
        statuses = self._sink.table_statuses([item.update.market_id for item in items])
        unknown = unknown_items(items, statuses)
        # A definition written since the lookup is seen by the keeping script, which then returns
        # its status instead of keeping the price.
        found = self._sink.keep_unknown(unknown, ttl_s=self._unknown_keep_s) if unknown else []
        now_known = {item.update.market_id: status for item, status in zip(unknown, found, strict=True)}
        admission = admit(items, statuses, now_known)
        rows = rows_of(set(admission.kept)) if admission.kept else []
        detail = (
            f"no definition in the markets table; the market's newest price is applied if its "
            f"definition arrives within {self._unknown_keep_s} s"
        )
        self._dead_letter([(row, UNKNOWN_MARKET, detail) for row in rows])
        return admission.applied, admission.statuses, len(rows)

    def _apply(
        self, items: list[Conflated], *, statuses: list[str | None], records: int, rejected: int
    ) -> dict[str, int]:
        with self._journal.batch() as journal:
            applied = self._sink.apply(items, table_statuses=statuses, journal=journal)
            fanning = time.perf_counter()
            frames = self._channels.fan_out(applied, journal=journal)
            self.last_fanout_ms = round((time.perf_counter() - fanning) * 1000)
        return {
            "records": records,
            "rejected": rejected,
            "markets": len(items),
            "applied": len(applied),
            "frames": frames,
        }

    @property
    def redis(self) -> redis.Redis:
        return self._redis

    def process_rows(self, rows: list[Any]) -> dict[str, int]:
        """Reduce raw rows entirely in Python (real-time mode, and small batches)."""
        good, rejected = self._decode(rows)
        self._count_late([update.event_ts for update, _, _ in good])
        items, statuses, unknown = self._admit(
            conflate((update, ts) for update, ts, _ in good),
            rows_of=lambda ids: [row for update, _, row in good if update.market_id in ids],
        )
        stats = self._apply(items, statuses=statuses, records=len(rows), rejected=rejected + unknown)
        self._send_windows(self._fold([update for update, _, _ in good]))
        return stats

    def _fold(self, updates: list[PriceUpdate]) -> list[WindowPartial]:
        """The window partials of accepted updates, by window and market."""
        snapshots = ((u.market_id, u.seq, u.event_ts, _prices(u)) for u in updates)
        folded = fold_partials(snapshots, window_ms=self._window_ms)
        return [folded[key] for key in sorted(folded)]

    def _send_windows(self, partials: list[WindowPartial]) -> None:
        """Hand a small batch's window partials (one per window and market) to the movers' topic,
        after its prices are applied: a punter's price does not wait for them."""
        if self._windows is not None and partials:
            self._windows.send(partials)

    @contextmanager
    def _windows_on_their_way(self, partials: list[WindowPartial]) -> Iterator[None]:
        """A large batch's window partials sent while its prices are applied: produced on
        entering, waited for on leaving without an error. A large batch has its partials before
        it applies a price; waited for after the apply instead, the broker's acknowledgement
        (about 20 ms a 200,000-record batch) came on top of it, with no Spark job running. A
        batch that fails raises without waiting and is replayed, partials included: the movers
        keep a window's first and last snapshot by sequence, so a partial stored twice changes
        neither (its count of updates, as after any replay, counts twice)."""
        if self._windows is None or not partials:
            yield
            return
        self._windows.produce(partials)
        yield
        self._windows.flush()

    def process_batch(self, batch: DataFrame) -> dict[str, int]:
        """Reduce a micro-batch: Spark parses, validates and conflates, Python applies.

        One pass over the batch and one aggregation (``conflated``): per market, the newest record
        SQL accepts, how many accepted records it stands for, the newest event time and how many
        were late, and the records SQL does not accept (those without a market id form one group
        of their own). Only the winners and the refused records cross into Python, which
        re-validates both, so its validator stays the last word. The batch is read by one task per
        task slot (``one_task_per_slot``), not one per Kafka partition. Nothing is cached: the records
        of markets the markets table does not know are read again from the batch's offsets when
        there are any.
        """
        started = time.perf_counter()
        batch = _validated(one_task_per_slot(batch))
        groups = conflated(batch, window_ms=self._window_ms).collect()
        aggregated_ms = round((time.perf_counter() - started) * 1000)
        winners = [group for group in groups if group["w"] is not None]
        watermark = self._current_watermark()
        late = late_counts(
            batch,
            market_ids={int(group["market_id"]) for group in winners if group["oldest_event"] < watermark},
            watermark=watermark,
        )
        good, rejected = self._decode([suspect for group in groups for suspect in group["refused"]])
        checked, rejected_winners = self._decode([group["w"] for group in winners])
        # A market's records of one batch are in one group per event-time window: its newest
        # record is the newest of its groups' winners, and their counts add up.
        group_of = {(group["w"]["partition"], group["w"]["offset"]): group for group in winners}
        accepted = [(update, ts, group_of[(row["partition"], row["offset"])]) for update, ts, row in checked]
        from_sql = merge_conflated([Conflated(update, int(group["merged"]), ts) for update, ts, group in accepted])
        merged_by_market = {item.update.market_id: item.merged for item in from_sql}
        windows = merge_all(
            [window_partial(group, update) for update, _, group in accepted],
            self._fold([update for update, _, _ in good]),
        )

        def rows_of(market_ids: set[int]) -> list[Any]:
            # Filtered on the market alone, which parses each record once; a filter on the verdict
            # too would be pushed below the parse and parse again for every rule it reads.
            of_markets = batch.where(F.col("r.market_id").isin(sorted(market_ids))).select(*RAW_COLUMNS, "ok").collect()
            accepted_by_sql = [_raw(row) for row in of_markets if row["ok"]]
            return accepted_by_sql + [row for update, _, row in good if update.market_id in market_ids]

        with self._windows_on_their_way(windows):
            items, statuses, unknown = self._admit(
                merge_conflated(from_sql, conflate((update, ts) for update, ts, _ in good)), rows_of=rows_of
            )
            self._record_late(
                late=sum(late.values()),
                newest=[int(group["newest_event"]) for group in winners],
                python_side=[update.event_ts for update, _, _ in good],
            )
            self.last_sql_ms = aggregated_ms
            return self._apply(
                items,
                statuses=statuses,
                records=len(good) + rejected + sum(merged_by_market.values()),
                rejected=rejected + rejected_winners + unknown,
            )

    def process_partitions(self, batch: DataFrame) -> dict[str, int]:
        """Reduce a micro-batch on the executors: each task runs the reducer's own validator over
        one Kafka partition's records in a Python worker and conflates them (``reduce_partition``);
        only each market's newest accepted record per partition and the refused records reach the
        driver, which merges the partitions' winners and applies them.

        The records of markets the markets table does not know are read again from the batch's
        offsets when there are any.
        """
        started = time.perf_counter()
        watermark = self._current_watermark()
        reduce = partial(reduce_partition, watermark=watermark, window_ms=self._window_ms)
        reduced = batch.select(*RAW_COLUMNS).mapInArrow(reduce, PARTITION_OUTPUT).collect()
        aggregated_ms = round((time.perf_counter() - started) * 1000)
        winners = [row for row in reduced if row["kind"] == WINNER]
        windows = merge_all(decode_partial(row["value"]) for row in reduced if row["kind"] == WINDOW)
        refused = [(_raw(row), row["reason"], row["detail"]) for row in reduced if row["kind"] == REFUSED]
        self._dead_letter(refused)
        # The winners were accepted by the same validator on the executors: decoded again here
        # for their objects, they cannot be refused.
        checked, _ = self._decode([_raw(row) for row in winners])
        merged_by_offset = {(row["partition"], row["offset"]): int(row["merged"]) for row in winners}
        items = merge_conflated(
            [Conflated(update, merged_by_offset[(raw["partition"], raw["offset"])], ts) for update, ts, raw in checked]
        )

        def rows_of(market_ids: set[int]) -> list[Any]:
            accepted = partial(accepted_rows, market_ids=frozenset(market_ids))
            found = batch.select(*RAW_COLUMNS).mapInArrow(accepted, RAW_SCHEMA).collect()
            return [_raw(row) for row in found]

        with self._windows_on_their_way(windows):
            applied, statuses, unknown = self._admit(items, rows_of=rows_of)
            self._record_late(
                late=sum(int(row["late"]) for row in winners),
                newest=[int(row["newest_event"]) for row in winners],
                python_side=[],
            )
            self.last_sql_ms = aggregated_ms
            return self._apply(
                applied,
                statuses=statuses,
                records=len(refused) + sum(merged_by_offset.values()),
                rejected=len(refused) + unknown,
            )

    def _current_watermark(self) -> int:
        if self._watermark is None:
            self._watermark = self._saved_watermark = watermark_read(self._redis, QUERY_NAME)
        return self._watermark

    def _count_late(self, event_times: list[int]) -> None:
        if event_times:
            self._record_late(late=0, newest=[], python_side=event_times)

    def _record_late(self, *, late: int, newest: list[int], python_side: list[int]) -> None:
        """Add late records to the counter and move the watermark past this batch."""
        watermark = self._current_watermark()
        more_late, after_python = advance_watermark(
            watermark=watermark, event_times=python_side, delay_ms=self._delay_ms
        )
        _, after_sql = advance_watermark(watermark=watermark, event_times=newest, delay_ms=self._delay_ms)
        self._watermark = max(after_python, after_sql)
        # The watermark is stored for a restart to go on from; it is written when it has moved a
        # second or more since it last was (or with a late count), not on every batch: a restart
        # may count as on time a record less than a second late, one round trip fewer a batch.
        moved = self._watermark - (self._saved_watermark or 0) >= WATERMARK_SAVE_STEP_MS
        if not (moved or late + more_late):
            return
        pipe = self._redis.pipeline(transaction=False)
        watermark_write(pipe, QUERY_NAME, self._watermark)
        if late + more_late:
            counter_add(pipe, "late_records", QUERY_NAME, late + more_late)
        pipe.execute()
        self._saved_watermark = self._watermark

    def follow(self, query: Any) -> None:
        """Read each batch's offset ranges from ``query``, the running query this reduces
        (``spark.sources.BatchRows.follow``)."""
        self._rows.follow(query)

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        # Up to ``SPARK_SQL_PATH_MIN_RECORDS`` records cost less read from Kafka and reduced on
        # the driver than reduced in SQL (a shuffle stage, its planning and code generation; the
        # timings are in docs/architecture.md); a larger backlog spreads over the executors.
        # The batch's offset ranges say which this one is before it runs.
        started = time.perf_counter()
        ranges = self._rows.ranges(batch, batch_id)
        size = None if ranges is None else sum(part.size for part in ranges)
        sized = time.perf_counter()
        self.last_sql_ms = None
        limit = config().sql_path_min_records
        if size is not None and size > limit:
            stats, self.last_read = self._process_large(batch)
        elif ranges is not None:
            rows, self.last_read = self._rows.read(batch, ranges)
            read_ms = round((time.perf_counter() - sized) * 1000)
            stats = self.process_rows(rows)
            stats["read_ms"] = read_ms
        else:
            # A source whose batch size is not known is probed: at most one record past the
            # limit is read from each partition (``spark.sql.limit.initialNumPartitions``
            # covers them all in one job, see spark/session.py).
            probed = batch.select(*RAW_COLUMNS).limit(limit + 1).collect()
            if len(probed) <= limit:
                stats, self.last_read = self.process_rows(probed), "spark"
            else:
                stats, self.last_read = self._process_large(batch)
        stats["size_ms"] = round((sized - started) * 1000)
        if self.last_sql_ms is not None:
            stats["sql_ms"] = self.last_sql_ms
        stats["fanout_ms"] = self.last_fanout_ms
        stats["ms"] = round((time.perf_counter() - started) * 1000)
        if stats["records"]:
            log.info("batch %s (read by %s): %s", batch_id, self.last_read, stats)

    def _process_large(self, batch: DataFrame) -> tuple[dict[str, int], str]:
        if config().large_batch_path == "sql":
            return self.process_batch(batch), "sql"
        return self.process_partitions(batch), "executors"


def _validated(batch: DataFrame) -> DataFrame:
    """``batch`` with the parsed record and the SQL verdict (``with_validity``), added here to the
    running query's frame of raw rows (``start``) or as a frame comes with them. Resolved once
    a batch: asking a frame for its columns is a round trip to the JVM."""
    return batch if "ok" in batch.columns else with_validity(batch)


def conflated(batch: DataFrame, *, window_ms: int) -> DataFrame:
    """A batch of price records with the parsed record and the verdict (``with_validity``)
    reduced in Spark SQL, one row per market id (null for the records without one) and
    event-time window of ``window_ms`` (``window_start``; null for the records SQL does not
    accept): ``w`` the newest record SQL accepts (the raw columns; null when
    it accepts none), ``merged`` how many accepted records it stands for, ``newest_event`` and
    ``oldest_event`` their newest and oldest event times, ``first_seq`` and ``first`` the
    sequence and the bytes of the oldest (for the movers' window partials, ``window_partial``),
    and ``refused`` the raw records SQL does not accept.

    Listing the refused records makes the aggregation hash-based: ``collect_list`` keeps its
    state as an object, which Spark aggregates in a hash map of objects (``ObjectHashAggregate``),
    where a record held in ``max_by`` alone is not of a fixed width and made Spark sort every row
    of the batch before aggregating (``SortAggregate``).

    The oldest record is kept as its bytes, not as its parsed selections: an array of structs
    in the aggregation buffer cost a third more (300-340 ms of a 200,000-record batch against
    about 200, bench/results/history.md), and Python reads the selections of the thousand or so it keeps.

    Nothing that changes from batch to batch is in the plan (the late-record watermark is not:
    ``late_counts``), so every batch runs the same generated code, compiled once.
    """
    grouping, aggregates = _CONFLATED.get(window_ms)
    return batch.groupBy(*grouping).agg(*aggregates)


def conflated_columns(window_ms: int) -> tuple[list[Column], list[Column]]:
    """The grouping and the aggregates of ``conflated``."""
    ok, seq, event_ts = F.col("ok"), F.col("r.seq"), F.col("r.event_ts")
    raw = F.struct(*RAW_COLUMNS)
    accepted_event = F.when(ok, event_ts)
    accepted_seq = F.when(ok, seq)
    window_start = accepted_event - F.pmod(accepted_event, F.lit(window_ms))
    grouping = [F.col("r.market_id").alias("market_id"), window_start.alias("window_start")]
    aggregates = [
        F.max_by(raw, accepted_seq).alias("w"),
        F.count_if(ok).alias("merged"),
        F.max(accepted_event).alias("newest_event"),
        F.min(accepted_event).alias("oldest_event"),
        F.min(accepted_seq).alias("first_seq"),
        F.min_by(F.col("value"), accepted_seq).alias("first"),
        F.collect_list(F.when(~ok, raw)).alias("refused"),
    ]
    return grouping, aggregates


# ``conflated``'s columns per window length, built once per Spark context.
_CONFLATED = PerContext(conflated_columns)


def _prices(update: PriceUpdate) -> Prices:
    return tuple((selection.id, selection.price) for selection in update.selections)


def window_partial(group: Any, newest: PriceUpdate) -> WindowPartial:
    """The window partial of a ``conflated`` group whose newest record is ``newest``: the first
    snapshot's selections read from the oldest record's bytes (SQL accepted it, so its prices
    are the decimals Python's validator reads), the last the decoded newest record's."""
    return WindowPartial(
        window_start=int(group["window_start"]),
        market_id=newest.market_id,
        first_seq=int(group["first_seq"]),
        first=accepted_record_prices(bytes(group["first"])),
        last_seq=newest.seq,
        last=_prices(newest),
        newest_event=int(group["newest_event"]),
        updates=int(group["merged"]),
    )


def late_counts(batch: DataFrame, *, market_ids: Iterable[int], watermark: int) -> dict[int, int]:
    """Per market of ``market_ids``, how many records of the batch (with the parsed record and
    the verdict, ``with_validity``) SQL accepts are older than ``watermark``: a second read of
    the batch, made only when a market's oldest accepted record is (a literal watermark in
    ``conflated`` would make every batch's code new)."""
    ids = sorted(market_ids)
    if not ids:
        return {}
    rows = (
        batch.where(F.col("r.market_id").isin(ids))
        .groupBy(F.col("r.market_id").alias("market_id"))
        .agg(F.count_if(F.col("ok") & (F.col("r.event_ts") < F.lit(watermark))).alias("late"))
        .collect()
    )
    return {int(row["market_id"]): int(row["late"]) for row in rows}


def decode_rows(rows: Iterable[Any]) -> tuple[list[Decoded], list[tuple[Any, str, str]]]:
    """Validate raw rows with the reducer's validator: the accepted, each with its Kafka
    timestamp and row, and the refused, each with its reason and detail."""
    good: list[Decoded] = []
    rejects: list[tuple[Any, str, str]] = []
    with gc_paused():
        for row, outcome in decoded(rows):
            if isinstance(outcome, PriceUpdate):
                good.append((outcome, int(row["kafka_ts"]), row))
            else:
                rejects.append((row, *outcome))
    return good, rejects


def decoded(rows: Iterable[Any]) -> Iterator[tuple[Any, PriceUpdate | tuple[str, str]]]:
    """Each raw row with its price update, or the reason and detail the validator refuses it for."""
    for row in rows:
        try:
            yield row, decode_price_update(row["value"])
        except InvalidRecord as exc:
            yield row, (exc.reason, exc.detail)
        except Exception as exc:  # anything else a record can raise is that record's fault
            yield row, failure_of(exc, stage="decode")


# What a task of ``process_partitions`` returns: per market, the newest record the validator
# accepts with how many accepted records it stands for, the newest event time among them and how
# many of them were late ("winner"); every record it refuses with why ("refused"); and per
# market and event-time window, the window partial of its accepted records, encoded as its
# window-topic record in ``value`` ("window").
WINNER, REFUSED, WINDOW = "winner", "refused", "window"
_RAW_FIELDS = [
    ("key", pa.binary()),
    ("value", pa.binary()),
    ("partition", pa.int32()),
    ("offset", pa.int64()),
    ("kafka_ts", pa.int64()),
]
_RAW_ARROW = pa.schema(_RAW_FIELDS)
_PARTITION_ARROW = pa.schema(
    [
        ("kind", pa.string()),
        *_RAW_FIELDS,
        ("merged", pa.int64()),
        ("newest_event", pa.int64()),
        ("late", pa.int64()),
        ("reason", pa.string()),
        ("detail", pa.string()),
    ]
)
# The same two layouts as Spark declares a ``mapInArrow`` output.
RAW_SCHEMA = from_arrow_schema(_RAW_ARROW)
PARTITION_OUTPUT = from_arrow_schema(_PARTITION_ARROW)


def _raw(row: Any) -> dict[str, Any]:
    """The raw record columns of a collected row, as the rest of the reducer takes them."""
    return raw_row(*(row[name] for name in RAW_COLUMNS))


def _arrow_rows(batches: Iterable[pa.RecordBatch]) -> Iterator[dict[str, Any]]:
    for arrow in batches:
        columns = [arrow.column(name).to_pylist() for name in RAW_COLUMNS]
        for values in zip(*columns, strict=True):
            yield raw_row(*values)


def reduce_partition(batches: Iterable[pa.RecordBatch], *, watermark: int, window_ms: int) -> Iterator[pa.RecordBatch]:
    """One task's share of a large micro-batch, in a Python worker: every record validated by
    the reducer's validator and conflated to the newest per market (the highest sequence; the
    first read of equal ones, as ``conflate``), and folded into its window partial."""
    # market id → [sequence, row, merged, newest event time, late]; each record is let go as soon
    # as it is folded in.
    best: dict[int, list[Any]] = {}
    rejects: list[tuple[Any, str, str]] = []
    accepted: list[tuple[int, int, int, Prices]] = []
    with gc_paused():
        for row, update in decoded(_arrow_rows(batches)):
            if not isinstance(update, PriceUpdate):
                rejects.append((row, *update))
                continue
            accepted.append((update.market_id, update.seq, update.event_ts, _prices(update)))
            late = int(update.event_ts < watermark)
            entry = best.get(update.market_id)
            if entry is None:
                best[update.market_id] = [update.seq, row, 1, update.event_ts, late]
                continue
            if update.seq > entry[0]:
                entry[0], entry[1] = update.seq, row
            entry[2] += 1
            entry[3] = max(entry[3], update.event_ts)
            entry[4] += late
    out = [
        {"kind": WINNER, **row, "merged": merged, "newest_event": newest, "late": late}
        for _, row, merged, newest, late in best.values()
    ]
    out += [{"kind": REFUSED, **row, "reason": reason, "detail": detail} for row, reason, detail in rejects]
    out += [
        {"kind": WINDOW, "value": encode_partial(window)}
        for window in fold_partials(accepted, window_ms=window_ms).values()
    ]
    yield pa.RecordBatch.from_pylist(out, schema=_PARTITION_ARROW)


def accepted_rows(batches: Iterable[pa.RecordBatch], *, market_ids: frozenset[int]) -> Iterator[pa.RecordBatch]:
    """The raw rows of the records of ``market_ids`` that the validator accepts."""
    with gc_paused():
        rows = [
            row
            for row, update in decoded(_arrow_rows(batches))
            if isinstance(update, PriceUpdate) and update.market_id in market_ids
        ]
    yield pa.RecordBatch.from_pylist(rows, schema=_RAW_ARROW)


# Real-time mode's records in the checked-price topic carry these headers: where the record was
# read (the price topic's offset and Kafka timestamp; the partition is the same) and whether the
# SQL check accepted it ("1" or "0").
HEADER_OFFSET, HEADER_KAFKA_TS, HEADER_SQL_OK = "src_offset", "src_ts", "sql_ok"


def checked_records(source: DataFrame) -> DataFrame:
    """The price records as the real-time query writes them to the checked-price topic: key and
    value as read, into the partition they were read from (per market order is kept), with the
    ``HEADER_*`` headers. Everything here is a JVM expression (no Python), which is what Spark's
    real-time mode supports."""

    def header(name: str, value: Any) -> Any:
        return F.struct(F.lit(name).alias("key"), value.cast("string").cast("binary").alias("value"))

    checked = with_validity(source)
    return checked.select(
        "key",
        "value",
        "partition",
        F.array(
            header(HEADER_OFFSET, F.col("offset")),
            header(HEADER_KAFKA_TS, F.col("kafka_ts")),
            header(HEADER_SQL_OK, F.col("ok").cast("int")),
        ).alias("headers"),
    )


def start_realtime(spark: SparkSession, *, source: DataFrame, bootstrap: str, checkpoint_dir: str):
    """The price query in real-time mode: each record read, checked in SQL and written to the
    checked-price topic as soon as it is read, through Spark's Kafka sink. The reducer's Python
    effect is applied from there (``spark.jobs.applier``); why it is split so: docs/architecture.md,
    "Real-time mode"."""
    return (
        checked_records(source)
        .writeStream.queryName(QUERY_NAME)
        .option("checkpointLocation", checkpoint_dir)
        .format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", topics.prices_checked())
        # A record waits at most this long for others to share its request to the broker: at
        # 1,000 records/s over 12 partitions, one request per record cost the query's producer
        # a tenth of a core.
        .option("kafka.linger.ms", str(REALTIME_LINGER_MS))
        .option("kafka.request.timeout.ms", str(config().kafka_request_timeout_ms))
        .outputMode("update")
        # realTime is missing from PySpark's type overloads of trigger(); passed by name.
        .trigger(**{"realTime": config().realtime_batch})
        .start()
    )


def start(spark: SparkSession, *, bootstrap: str, redis_url: str, checkpoint_dir: str, mode: str):
    """Start the price query and return it."""
    source = read_prices(spark, bootstrap=bootstrap, mode=mode)
    if mode == "realtime":
        return start_realtime(spark, source=source, bootstrap=bootstrap, checkpoint_dir=checkpoint_dir)
    if mode != "microbatch":
        raise ValueError(f"SPARK_TRIGGER_MODE must be microbatch or realtime, got {mode!r}")
    # The query's plan is the raw records alone. With the parse and the SQL verdict in it, every
    # trigger planned them and generated their code before the batch function ran (the sink
    # turns the batch into an RDD first), even when the batch is read on the driver and never
    # runs that plan: 63-71 ms a trigger of a few records against 31-34 ms without (spark
    # progress, 90 triggers each). A batch on the SQL path adds them to its frame
    # (``_validated``): 3.9 s against 3.7 s for 200,000 records, medians of ten alternated runs.
    writer = source.writeStream.queryName(QUERY_NAME).option("checkpointLocation", checkpoint_dir)
    processor = PriceBatchProcessor(
        redis_client=redis_client(redis_url),
        dead_letters=DeadLetterSink(bootstrap_servers=bootstrap, topic=topics.prices_dead_letter()),
        windows=WindowTopic(bootstrap_servers=bootstrap),
        range_reader=range_reader(bootstrap, query=QUERY_NAME) if config().range_read else None,
    )
    if PRICES.async_progress:
        for key, value in async_progress_options(config()).items():
            writer = writer.option(key, value)
    query = (
        writer.foreachBatch(Replicated(processor, redis_url=redis_url))
        .trigger(processingTime=config().triggers[PRICES.name])
        .start()
    )
    # A batch run before this reads its ranges from its frame.
    processor.follow(query)
    return query
