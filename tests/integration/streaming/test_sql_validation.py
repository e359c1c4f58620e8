"""Spark SQL's price validation never accepts a record the Python validator rejects."""

from __future__ import annotations

from decimal import Decimal

import orjson
import pytest

from reducers.schemas import InvalidRecord, PriceUpdate, SelectionPrice, decode_price_update
from spark.validation import with_validity
from tests.unit.test_price_avro import UPDATE, item, padded, written, zigzag

pytestmark = pytest.mark.integration

GOOD = item(3001, 250) + item(3002, 100000, status=2)


def selections(*items: bytes, count: int | None = None) -> bytes:
    """The selections as one block of ``items`` (``count`` of them unless told)."""
    return zigzag(len(items) if count is None else count) + b"".join(items) + b"\x00"


def in_full(*extra: bytes) -> bytes:
    """UPDATE with a first selection good and whole and the ``extra`` items after it, ids of one
    byte each: only the rules on those items can refuse the record."""
    return written(selections=selections(item(1, 250), *extra))


CORPUS = [
    UPDATE.encode(),
    written(source=zigzag(2)),
    written(selections=selections(item(1, 100000), item(2, 101, status=1))),
    # bytes that are not a record of the schema, or not all of one
    b"",
    b"{not json",
    b'{"v":1,"market_id":10,"seq":3,"status":"open","selections":[],"event_ts":1,"produce_ts":1}',
    b"\x02" * 20000,
    written()[:-1],
    written()[:5],
    written() + b"\x00",
    written() + b"\x02\x02\x02",
    written() + written(),
    written(selections=selections(item(1, 250), count=10**6)),
    written(market_id=b"\xff" * 10 + b"\x01"),
    written(status=b"\xff" * 5 + b"\x01"),
    written(selections=zigzag(2) + item(3001, 250)),
    # the rules on the members
    written(v=zigzag(2)),
    written(v=zigzag(0)),
    written(market_id=zigzag(0)),
    written(market_id=zigzag(-1)),
    written(market_id=zigzag(-(2**63))),
    written(seq=zigzag(0)),
    written(event_ts=zigzag(0)),
    written(produce_ts=zigzag(-7)),
    written(status=zigzag(3)),
    written(status=zigzag(-1)),
    written(source=zigzag(3)),
    written(selections=b"\x00"),
    written(selections=selections(*[item(i, 250) for i in range(1, 66)])),
    written(selections=selections(item(1, 100))),
    written(selections=selections(item(1, 100001))),
    written(selections=selections(item(1, -250))),
    written(selections=selections(item(1, 2**23 - 1))),
    written(selections=selections(item(1, -(2**23)))),
    written(selections=selections(item(0, 250))),
    written(selections=selections(item(-1, 250))),
    written(selections=selections(item(1, 250, status=3))),
    written(selections=selections(item(1, 250, status=-1))),
    # written in full as our producers write, so that only the rules on one selection can refuse
    in_full(item(0, 300)),
    in_full(item(-1, 300)),
    in_full(item(2, 100)),
    in_full(item(2, 100001)),
    in_full(item(2, 300, status=3)),
    # numbers in more bytes than they need, selections in more than one block, a block with its
    # size: Avro, and Python reads them, but not in the fewest bytes
    written(v=padded(1, 2)),
    written(market_id=padded(300, 10), seq=padded(70, 3)),
    written(selections=zigzag(1) + item(3001, 250) + zigzag(1) + item(3002, 100000, status=2) + b"\x00"),
    written(selections=zigzag(-2) + zigzag(len(GOOD)) + GOOD + b"\x00"),
    written(selections=zigzag(32) + item(1, 250) * 32 + zigzag(32) + item(2, 250) * 32 + b"\x00"),
    # the padding of one number made up for by a shorter one elsewhere is not possible; trailing
    # bytes made up for by padding are the lengths the check compares
    written(v=padded(1, 2))[:-1],
    written(selections=selections(item(1, 250), item(300, 250))),
]


def python_accepts(raw: bytes) -> bool:
    try:
        decode_price_update(raw)
    except InvalidRecord:
        return False
    return True


def sql_verdicts(spark, values: list[bytes]) -> list[bool]:
    rows = [(None, raw, 0, i, 0) for i, raw in enumerate(values)]
    frame = spark.createDataFrame(rows, "key binary, value binary, partition int, offset long, kafka_ts long")
    verdicts = {int(r["offset"]): bool(r["ok"]) for r in with_validity(frame).collect()}
    return [verdicts[i] for i in range(len(values))]


def test_a_record_written_in_full_is_what_sql_accepts(spark):
    """The corpus's records written in full differ from this one in a selection alone."""
    assert sql_verdicts(spark, [in_full(item(2, 300, status=1))]) == [True]


def test_what_spark_reads_from_a_record_is_what_python_reads(spark):
    """Spark's Avro reader and Python's read the same members from our producers' bytes, and
    Spark's writer writes the bytes our producers write."""
    from pyspark.sql import functions as F
    from pyspark.sql.avro.functions import to_avro

    from reducers.schemas import PRICE_AVRO_SCHEMA
    from spark.validation import parse_record

    updates = [
        UPDATE,
        PriceUpdate(
            market_id=2**63 - 1,
            seq=8192,
            status="closed",
            selections=tuple(SelectionPrice(i, Decimal("1.01") + i, "suspended") for i in range(1, 65)),
            event_ts=1,
            produce_ts=2**62,
            source="replay",
        ),
    ]
    frame = spark.createDataFrame([(u.encode(),) for u in updates], "value binary")
    rows = (
        frame.select(parse_record(F.col("value")).alias("r"))
        .select("r", to_avro("r", PRICE_AVRO_SCHEMA).alias("again"))
        .collect()
    )
    for update, row in zip(updates, rows, strict=True):
        r = row["r"]
        assert (r["v"], r["market_id"], r["seq"], r["status"], r["event_ts"], r["produce_ts"], r["source"]) == (
            update.v,
            update.market_id,
            update.seq,
            update.status,
            update.event_ts,
            update.produce_ts,
            update.source,
        )
        assert [(s["id"], s["price"], s["status"]) for s in r["selections"]] == [
            (s.id, s.price, s.status) for s in update.selections
        ]
        assert bytes(row["again"]) == update.encode()


def test_sql_accepts_only_what_python_accepts(spark):
    verdicts = sql_verdicts(spark, CORPUS)
    wrongly_accepted = [raw for raw, ok in zip(CORPUS, verdicts, strict=True) if ok and not python_accepts(raw)]
    assert not wrongly_accepted, f"SQL accepted records Python rejects: {[raw[:160] for raw in wrongly_accepted]}"


def test_sql_accepts_every_record_our_producers_write(spark):
    """The pre-filter is only fast if what the feed and the traders write passes it: a record it
    does not accept is validated again in Python, one by one."""
    from reducers.schemas import MAX_PRICE, MIN_PRICE

    prices = [MIN_PRICE, Decimal("2"), Decimal("2.5"), Decimal("2.50"), Decimal("17.25"), Decimal("999.99"), MAX_PRICE]
    written = [
        PriceUpdate(
            market_id=m,
            seq=m * 7,
            status=status,
            selections=tuple(SelectionPrice(i + 1, price, sel_status) for i, price in enumerate(prices)),
            event_ts=1_700_000_000_000 + m,
            produce_ts=1_700_000_000_005 + m,
            source=source,
        ).encode()
        for m, (status, sel_status, source) in enumerate(
            [("open", "active", "feed"), ("suspended", "suspended", "trader"), ("closed", "active", "feed")], start=1
        )
    ]
    assert all(python_accepts(raw) for raw in written)
    assert sql_verdicts(spark, written) == [True] * len(written)


# The two ways a micro-batch above SPARK_SQL_PATH_MIN_RECORDS is reduced (SPARK_LARGE_BATCH_PATH).
LARGE_BATCH_PATHS = ("sql", "executors")


def markets_of(path: str) -> int:
    """Each path's own market ids (their state stays in Redis between the cases)."""
    return 1000 * LARGE_BATCH_PATHS.index(path)


def reduce_large(
    spark, redis_client, values: list[bytes], path: str, windows=None, *, checked: bool = True, partitions: int = 3
) -> dict[str, int]:
    """Reduce the records as one large micro-batch of ``partitions`` partitions through ``path``;
    the frame with the parsed record and the SQL verdict, as the running query hands it over
    (``checked``), or of raw rows only."""
    from django.conf import settings

    from reducers import topics
    from spark.jobs.prices import PriceBatchProcessor
    from spark.sinks.dead_letter import DeadLetterSink
    from spark.validation import with_validity

    rows = spark.sparkContext.parallelize(
        [(str(i).encode(), v, i % partitions, i, 1_000 + i) for i, v in enumerate(values)], partitions
    )
    frame = spark.createDataFrame(rows, "key binary, value binary, partition int, offset long, kafka_ts long")
    if checked:
        frame = with_validity(frame)
    processor = PriceBatchProcessor(
        redis_client=redis_client,
        dead_letters=DeadLetterSink(
            bootstrap_servers=settings.KAFKA_BOOTSTRAP_SERVERS, topic=topics.prices_dead_letter()
        ),
        windows=windows,
    )
    return processor.process_batch(frame) if path == "sql" else processor.process_partitions(frame)


def test_a_large_batch_of_more_partitions_than_slots_runs_one_task_a_slot(spark, kafka_topics, redis_client):
    """A batch of the price topic's twelve partitions on a session of four task slots: every
    stage of the SQL path's jobs runs four tasks, not twelve, and the batch is reduced whole."""
    import uuid

    from store import keys
    from tests.factories import market_ids_define, raw_price_update

    slots = spark.sparkContext.defaultParallelism
    markets = [920_001 + n for n in range(3 * slots)]
    market_ids_define(redis_client, *markets)
    values = [raw_price_update(market_id=m, seq=s, prices=((1, f"3.{s}0"),)).encode() for m in markets for s in (1, 2)]
    context, group = spark.sparkContext, f"one-task-a-slot-{uuid.uuid4()}"
    context.setJobGroup(group, "a large batch of more partitions than slots")
    try:
        stats = reduce_large(spark, redis_client, values, "sql", checked=False, partitions=3 * slots)
    finally:
        context.setLocalProperty("spark.jobGroup.id", None)  # None unsets it
    tracker = context.statusTracker()
    stages = [stage for job in tracker.getJobIdsForGroup(group) for stage in tracker.getJobInfo(job).stageIds]
    tasks = [tracker.getStageInfo(stage).numTasks for stage in stages]
    assert stats == {
        "records": len(values),
        "rejected": 0,
        "markets": len(markets),
        "applied": len(markets),
        "frames": 0,
    }
    assert tasks
    assert max(tasks) <= slots < 3 * slots
    assert orjson.loads(redis_client.hget(keys.market_state(markets[-1]), "state"))["seq"] == 2


@pytest.mark.parametrize("checked", [True, False], ids=["as the query hands it", "raw rows"])
@pytest.mark.parametrize("path", LARGE_BATCH_PATHS)
def test_a_large_batch_is_reduced_like_the_python_path(spark, kafka_topics, redis_client, path, checked):
    """A large micro-batch goes through Spark SQL or the executors' Python workers, its records
    spread over three partitions; the outcome equals the Python reduction, whether the frame
    comes with the SQL verdict or of raw rows."""
    from store import keys
    from tests.factories import market_ids_define, raw_price_update

    market_a, market_b = 910_001 + markets_of(path) + 100 * checked, 910_002 + markets_of(path) + 100 * checked
    market_ids_define(redis_client, market_a, market_b)
    values = [raw_price_update(market_id=market_a, seq=s, prices=((1, f"2.{s}0"),)).encode() for s in (3, 1, 2)]
    values += [raw_price_update(market_id=market_b, seq=1, prices=((1, "4.00"),)).encode()]
    values += [b'{"v": 1, "market_id": "x"}', written(selections=selections(item(0, 250)))]
    before = int(redis_client.hget(keys.counter("dead_letters"), "bad_field") or 0)
    stats = reduce_large(spark, redis_client, values, path, checked=checked)
    assert stats == {"records": 6, "rejected": 2, "markets": 2, "applied": 2, "frames": 0}
    state = orjson.loads(redis_client.hget(keys.market_state(market_a), "state"))
    assert (state["seq"], state["merged"], state["selections"][0]["price"]) == (3, 3, "2.30")
    assert int(redis_client.hget(keys.counter("dead_letters"), "bad_field") or 0) == before + 1


@pytest.mark.parametrize("path", LARGE_BATCH_PATHS)
def test_a_large_batch_dead_letters_every_record_of_an_unknown_market_and_keeps_its_newest(
    spark, kafka_topics, redis_client, path
):
    from store import keys
    from tests.factories import market_ids_define, raw_price_update

    unknown, known = 910_011 + markets_of(path), 910_012 + markets_of(path)
    market_ids_define(redis_client, known)
    values = [raw_price_update(market_id=unknown, seq=s, prices=((1, f"2.{s}0"),)).encode() for s in (2, 3, 1)]
    values += [raw_price_update(market_id=known, seq=1, prices=((1, "4.00"),)).encode()]
    before = int(redis_client.hget(keys.counter("dead_letters"), "unknown_market") or 0)

    stats = reduce_large(spark, redis_client, values, path)

    assert stats == {"records": 4, "rejected": 3, "markets": 1, "applied": 1, "frames": 0}
    assert int(redis_client.hget(keys.counter("dead_letters"), "unknown_market") or 0) == before + 3
    assert not redis_client.exists(keys.market_state(unknown))
    kept = redis_client.hgetall(keys.unknown_market_price(unknown))
    assert (int(kept[b"seq"]), int(kept[b"merged"])) == (3, 3)


@pytest.mark.parametrize("path", LARGE_BATCH_PATHS)
def test_a_large_batch_applies_the_newest_valid_record_when_a_newer_one_is_invalid(
    spark, kafka_topics, redis_client, path
):
    """Conflation picks the newest accepted record; a newer invalid record is dead-lettered and
    does not hide it."""
    from store import keys
    from tests.factories import market_ids_define, raw_price_update

    market = 910_021 + markets_of(path)
    market_ids_define(redis_client, market)
    values = [raw_price_update(market_id=market, seq=s, prices=((1, f"2.{s}0"),)).encode() for s in (1, 2)]
    values += [raw_price_update(market_id=market, seq=3, prices=((1, "1.00"),)).encode()]  # below the lowest

    stats = reduce_large(spark, redis_client, values, path)

    assert stats == {"records": 3, "rejected": 1, "markets": 1, "applied": 1, "frames": 0}
    state = orjson.loads(redis_client.hget(keys.market_state(market), "state"))
    assert (state["seq"], state["merged"], state["selections"][0]["price"]) == (2, 2, "2.20")


def test_a_micro_batch_knows_its_offsets_before_it_runs_and_the_driver_reads_the_same_records(
    spark, kafka_topics, producer, tmp_path
):
    """The reducer picks its path by the batch's offset ranges: their sizes must add up to the
    records the batch holds (a burst after a quiet spell is reduced in SQL at once), and they
    are "unknown" for a frame that is not a Kafka batch. The driver's range reader, which reads
    a small batch without a Spark job, must give exactly the rows Spark gives for the batch."""
    from django.conf import settings

    from reducers import topics
    from spark.jobs.prices import read_prices
    from spark.sources import RAW_COLUMNS, RangeReader, batch_offset_ranges
    from tests.factories import raw_price_update

    for seq in range(1, 2501):
        update = raw_price_update(market_id=920_000 + seq % 40, seq=seq, prices=((1, "2.00"),))
        producer.produce(topics.prices(), key=update.key(), value=update.encode())
    producer.flush(10)
    reader = RangeReader(settings.KAFKA_BOOTSTRAP_SERVERS)
    seen: list[tuple[int | None, int, bool]] = []

    def batch(frame, _) -> None:
        ranges = batch_offset_ranges(frame)
        assert ranges is not None
        rows = sorted(tuple(bytes(v) if isinstance(v, bytearray) else v for v in row) for row in frame.collect())
        read = reader.read(ranges)
        assert read is not None, ranges
        direct = sorted(tuple(row[name] for name in RAW_COLUMNS) for row in read)
        seen.append((sum(part.size for part in ranges), len(rows), direct == rows))

    query = (
        read_prices(spark, bootstrap=settings.KAFKA_BOOTSTRAP_SERVERS, mode="microbatch")
        .writeStream.option("checkpointLocation", str(tmp_path / "checkpoint"))
        .foreachBatch(batch)
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(120)
    reader.close()
    assert query.exception() is None, query.exception()
    assert sum(count for _, count, _ in seen) >= 2500  # the topic may hold earlier tests' records too
    assert all(size == count for size, count, _ in seen), seen
    assert all(same for _, _, same in seen), seen
    frame = spark.createDataFrame(
        [(b"k", b"v", 0, 0, 0)], "key binary, value binary, partition int, offset long, kafka_ts long"
    )
    assert batch_offset_ranges(frame) is None


@pytest.mark.parametrize("path", LARGE_BATCH_PATHS)
def test_a_large_batch_counts_the_records_older_than_the_watermark_as_late(spark, kafka_topics, redis_client, path):
    """Records older than the late-record watermark are counted (and still conflated); a batch
    with none adds nothing. The SQL path counts them by reading the batch again, only for the
    markets whose oldest record is late."""
    import dataclasses

    from spark.jobs.prices import QUERY_NAME
    from store import keys
    from tests.factories import market_ids_define, raw_price_update

    market, on_time = 910_031 + markets_of(path), 910_032 + markets_of(path)
    market_ids_define(redis_client, market, on_time)
    watermark = max(int(redis_client.get(keys.watermark(QUERY_NAME)) or 0), 10_000)
    redis_client.set(keys.watermark(QUERY_NAME), watermark)
    old = [
        dataclasses.replace(raw_price_update(market_id=market, seq=s, prices=((1, "2.00"),)), event_ts=s).encode()
        for s in (1, 2)
    ]
    values = [*old, raw_price_update(market_id=market, seq=3, prices=((1, "3.00"),)).encode()]
    values += [raw_price_update(market_id=on_time, seq=s, prices=((1, "4.00"),)).encode() for s in (1, 2)]

    def late() -> int:
        return int(redis_client.hget(keys.counter("late_records"), QUERY_NAME) or 0)

    before = late()
    stats = reduce_large(spark, redis_client, values, path)

    assert stats == {"records": 5, "rejected": 0, "markets": 2, "applied": 2, "frames": 0}
    assert late() == before + 2
    state = orjson.loads(redis_client.hget(keys.market_state(market), "state"))
    assert (state["seq"], state["merged"]) == (3, 3)


@pytest.mark.parametrize("path", LARGE_BATCH_PATHS)
def test_a_large_batch_hands_the_movers_the_window_partials_the_python_path_does(
    spark, kafka_topics, redis_client, path
):
    """Per market and event-time window, the first and last snapshot of the records the
    validator accepts, whichever way the batch is reduced: records out of order, over two
    windows, in three partitions, with refused ones among them (a record SQL refuses and Python
    accepts counts too)."""
    import dataclasses

    from spark.jobs.prices import PriceBatchProcessor
    from tests.factories import market_ids_define, raw_price_update
    from tests.fakes import FakeDeadLetters, FakeWindows

    market_a, market_b = 910_041 + markets_of(path), 910_042 + markets_of(path)
    market_ids_define(redis_client, market_a, market_b)
    window = 60_000 * 28_333_333  # a minute's start in 2023

    def at(market: int, seq: int, price: str, event_ts: int) -> bytes:
        update = raw_price_update(market_id=market, seq=seq, prices=((1, price), (2, "1.50")))
        return dataclasses.replace(update, event_ts=event_ts).encode()

    padded_v = padded(1, 2) + at(market_a, 4, "2.40", window + 30)[1:]
    values = [
        at(market_a, 3, "2.30", window + 20),
        at(market_a, 1, "2.10", window + 10),
        padded_v,  # not in the fewest bytes: SQL leaves it to Python, which accepts it
        at(market_a, 5, "2.50", window + 60_000),  # the next window
        at(market_b, 2, "4.20", window + 5),
        b'{"v": 1, "market_id": "x"}',
        at(market_b, 1, "4.00", window + 1),
    ]
    large = FakeWindows()
    reduce_large(spark, redis_client, values, path, windows=large)
    small = FakeWindows()
    python_path = PriceBatchProcessor(redis_client=redis_client, dead_letters=FakeDeadLetters(), windows=small)
    python_path.process_rows(
        [
            {"key": b"k", "value": v, "partition": i % 3, "offset": i, "kafka_ts": 1_000 + i}
            for i, v in enumerate(values)
        ]
    )

    assert large.merged() == small.merged()
    first = large.merged()[(window, market_a)]
    assert (first.first_seq, first.last_seq, first.updates, first.newest_event) == (1, 4, 3, window + 30)
    assert (first.first[0][1], first.last[0][1]) == (Decimal("2.10"), Decimal("2.40"))
    assert sorted(large.merged()) == [(window, market_a), (window, market_b), (window + 60_000, market_a)]


@pytest.mark.parametrize("path", LARGE_BATCH_PATHS)
def test_a_large_batchs_window_partials_are_stored_before_it_returns_once_its_prices_are_applied(
    spark, kafka_topics, redis_client, path, monkeypatch
):
    """A large batch starts sending its window partials before it applies its prices and waits
    for them once the prices are applied: a batch whose apply fails raises without waiting for
    them (its records are replayed, partials included), one that succeeds has had them all
    stored when it returns."""
    from store.markets import MarketStore
    from tests.factories import market_ids_define, raw_price_update
    from tests.fakes import FakeWindows

    market = 910_061 + markets_of(path)
    market_ids_define(redis_client, market)
    values = [raw_price_update(market_id=market, seq=s, prices=((1, f"2.{s}0"),)).encode() for s in (1, 2)]
    windows = FakeWindows()

    def fails(*args: object, **kwargs: object) -> None:
        raise ConnectionError("Redis went away")

    with monkeypatch.context() as patched:
        patched.setattr(MarketStore, "apply", fails)
        with pytest.raises(ConnectionError):
            reduce_large(spark, redis_client, values, path, windows=windows)
    assert windows.sent == []
    assert [(p.market_id, p.first_seq, p.last_seq) for p in windows.produced] == [(market, 1, 2)]

    windows.produced.clear()
    stats = reduce_large(spark, redis_client, values, path, windows=windows)

    assert stats["applied"] == 1
    assert [(p.market_id, p.first_seq, p.last_seq, p.updates) for p in windows.sent] == [(market, 1, 2, 2)]
    assert windows.produced == []


def test_sql_counts_the_bytes_of_every_long_it_counts_as_avro_writes_it(spark):
    """The length check's count of a long's bytes, at every width's edges, at every power of two
    and its neighbours, and at random numbers, against the bytes Python writes; none at or
    above ``COUNTED_BELOW``."""
    import random

    from pyspark.sql import functions as F

    from spark.validation import COUNTED_BELOW, varint_bytes

    edges = [(1 << (7 * k - 1)) + d for k in range(1, 7) for d in range(-300, 300)]
    powers = [(1 << k) + d for k in range(45) for d in range(-3, 4)]
    drawn = random.Random(7)
    values = {v for v in [0, COUNTED_BELOW - 1, *edges, *powers] if 0 <= v < COUNTED_BELOW}
    values |= {drawn.randrange(1 << drawn.randrange(1, 45)) for _ in range(20_000)}
    too_large = [COUNTED_BELOW, COUNTED_BELOW + 1, 2**55, 2**63 - 1]
    frame = spark.createDataFrame([(v,) for v in [*values, *too_large]], "x long")
    counted = {int(r["x"]): r["n"] for r in frame.select("x", varint_bytes(F.col("x")).alias("n")).collect()}
    assert {v: counted[v] for v in values} == {v: len(zigzag(v)) for v in values}
    assert [counted[v] for v in too_large] == [None] * len(too_large)


def test_sql_counts_six_bytes_a_time_inside_its_range_and_none_outside(spark):
    """Every time from ``TIMES_FROM`` to below ``TIMES_BELOW`` takes the six bytes ``times_bytes``
    counts for it; a pair with a time outside is not counted."""
    from pyspark.sql import functions as F

    from spark.validation import TIMES_BELOW, TIMES_FROM, times_bytes

    inside = [TIMES_FROM, TIMES_FROM + 1, 1_795_000_000_000, TIMES_BELOW - 2, TIMES_BELOW - 1]
    assert {len(zigzag(t)) for t in inside} == {6}
    assert len(zigzag(TIMES_FROM - 1)) == 5
    assert len(zigzag(TIMES_BELOW)) == 7
    outside = [1, TIMES_FROM - 1, TIMES_BELOW, 2**44]
    pairs = [(e, p) for e in inside for p in inside]
    pairs += [(o, t) for o in outside for t in inside] + [(t, o) for o in outside for t in inside]
    frame = spark.createDataFrame(pairs, "e long, p long")
    counted = {
        (int(r["e"]), int(r["p"])): r["n"]
        for r in frame.select("e", "p", times_bytes(F.col("e"), F.col("p")).alias("n")).collect()
    }
    assert counted == {(e, p): 12 if e in inside and p in inside else None for e, p in pairs}


@pytest.mark.parametrize(
    ("event_ts", "produce_ts", "sql_accepts"),
    [
        (1_795_000_000_000, 1_795_000_000_005, True),
        (2**34, 2**41 - 1, True),
        (2**34 - 1, 1_795_000_000_005, False),
        (1_795_000_000_000, 2**41, False),
        (5, 6, False),
    ],
    ids=["now", "the range's ends", "event before it", "produced after it", "the first milliseconds"],
)
def test_sql_accepts_a_records_times_inside_their_range_and_leaves_the_others_to_python(
    spark, event_ts, produce_ts, sql_accepts
):
    """A record whose times are outside ``TIMES_FROM``..``TIMES_BELOW`` is valid, and Python,
    which takes it, decides; SQL does not accept it."""
    raw = written(event_ts=zigzag(event_ts), produce_ts=zigzag(produce_ts))
    assert python_accepts(raw)
    assert sql_verdicts(spark, [raw]) == [sql_accepts]


def test_sql_counts_the_bytes_of_every_selection_count_the_rules_take(spark):
    from pyspark.sql import functions as F

    from reducers.schemas import MAX_SELECTIONS
    from spark.validation import count_bytes

    counts = [*range(MAX_SELECTIONS + 1), 8191]
    frame = spark.createDataFrame([(c,) for c in counts], "c int")
    counted = {int(r["c"]): int(r["n"]) for r in frame.select("c", count_bytes(F.col("c")).alias("n")).collect()}
    assert counted == {c: len(zigzag(c)) for c in counts}


@pytest.mark.parametrize(
    ("ids", "sql_accepts"),
    [
        ((1, 63), True),
        ((63, 64), False),
        ((64, 8191), True),
        ((64, 8192), False),
        ((2**34 - 1, 2**34), False),
        ((2**34, 2**41 - 1), True),
        ((2**41 - 1, 2**41), False),
        ((2**41, 2**44 - 1), True),
        ((2**41, 2**44), True),
        ((2**44, 2**44 + 1), False),
        ((2**62, 2**63 - 1), False),
    ],
    ids=[
        "one byte",
        "one and two",
        "two",
        "two and three",
        "five and six",
        "six",
        "six and seven",
        "seven, below the counted",
        "seven, one at the counted",
        "at the counted",
        "ten",
    ],
)
def test_sql_accepts_a_records_ids_of_one_width_and_leaves_the_others_to_python(spark, ids, sql_accepts):
    """The length check counts the narrowest id's bytes for every id: a record whose ids take
    different widths, or whose narrowest id is too large to count (``COUNTED_BELOW``), is not
    accepted by SQL, and Python, which takes it, decides."""
    raw = written(selections=selections(*(item(i, 250) for i in ids)))
    assert python_accepts(raw)
    assert sql_verdicts(spark, [raw]) == [sql_accepts]


def test_sql_accepts_the_most_selections_the_rules_take_in_full(spark):
    from reducers.schemas import MAX_SELECTIONS

    raw = written(selections=selections(*(item(100 + i, 250 + i) for i in range(MAX_SELECTIONS))))
    assert python_accepts(raw)
    assert sql_verdicts(spark, [raw]) == [True]
