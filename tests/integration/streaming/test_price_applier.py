"""Real-time mode's two halves: the price query's checked records (SQL only, real Spark on a few
rows) and the applier that reduces them from the checked-price topic (real Kafka and Redis)."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from decimal import Decimal

import orjson
import pytest
from confluent_kafka import TopicPartition
from django.conf import settings

from reducers import topics
from reducers.movers import WindowPartial, decode_partial, merge_all
from spark.jobs.applier import COUNTER_SQL_ACCEPTED_PYTHON_REFUSED, PriceApplier
from spark.jobs.prices import HEADER_KAFKA_TS, HEADER_OFFSET, HEADER_SQL_OK, checked_records
from store import keys
from store.clients import kafka_consumer
from tests.conftest import wait_for
from tests.factories import market_ids_define, raw_price_update
from tests.integration.streaming.dead_letters import dead_letter_of
from tests.integration.topic_records import records_from_start, topic_reader

pytestmark = pytest.mark.integration


def stored(redis_client, market_id: int) -> tuple[int, str] | None:
    raw = redis_client.hget(keys.market_state(market_id), "state")
    if raw is None:
        return None
    state = orjson.loads(raw)
    return state["seq"], state["selections"][0]["price"]


def committed(applier_name: str, partition: int) -> int:
    """The offset the applier named ``applier_name`` committed on a checked-price partition
    (negative when none)."""
    consumer = kafka_consumer(settings.KAFKA_BOOTSTRAP_SERVERS, topics.reducer_group(applier_name))
    try:
        [part] = consumer.committed([TopicPartition(topics.prices_checked(), partition)], timeout=10)
        return part.offset
    finally:
        consumer.close()


@pytest.fixture
def applier(kafka_topics, redis_client) -> Iterator[PriceApplier]:
    """An applier in a consumer group of its own (it reads the checked-price topic from the start)."""
    running = PriceApplier.start(
        bootstrap=settings.KAFKA_BOOTSTRAP_SERVERS,
        redis_url=settings.REDIS_URL,
        name=f"prices-apply-{uuid.uuid4().hex[:8]}",
    )
    yield running
    running.stop()
    assert not running.isActive


def checked(producer, update_or_value, *, partition: int, offset: int, sql_ok: bool, key: bytes | None = None) -> None:
    value = update_or_value if isinstance(update_or_value, bytes) else update_or_value.encode()
    producer.produce(
        topics.prices_checked(),
        key=key if key is not None else b"0",
        value=value,
        partition=partition,
        headers=[
            (HEADER_OFFSET, str(offset).encode()),
            (HEADER_KAFKA_TS, b"1"),
            (HEADER_SQL_OK, b"1" if sql_ok else b"0"),
        ],
    )


def test_the_applier_reduces_checked_records_and_names_their_place_in_the_price_topic(applier, producer, redis_client):
    known, unknown = 940_001, 940_002
    market_ids_define(redis_client, known)
    for seq in (1, 3, 2):
        update = raw_price_update(market_id=known, seq=seq, prices=((1, f"2.{seq}0"),))
        checked(producer, update, partition=1, offset=100 + seq, sql_ok=True, key=update.key())
    stranger = raw_price_update(market_id=unknown, seq=1, prices=((1, "6.00"),))
    checked(producer, stranger, partition=2, offset=7, sql_ok=True, key=stranger.key())
    producer.flush(10)

    wait_for(lambda: stored(redis_client, known) == (3, "2.30"), what="the newest checked price applied")
    letter = dead_letter_of(stranger.encode())
    headers = dict(letter.headers())
    assert headers["reason"] == b"unknown_market"
    # The dead letter points at the record in the price topic, not in the checked-price topic.
    assert headers["origin"] == f"{topics.prices()}/2/7".encode()
    assert redis_client.hget(keys.market_state(unknown), "state") is None

    wait_for(lambda: committed(applier.name, 2) > 0, what="the applier's offsets committed")
    assert applier.isActive
    assert applier.exception() is None


def test_a_record_the_sql_check_passed_and_the_validator_refuses_is_counted_and_dead_lettered(
    applier, producer, redis_client
):
    market_id = 940_011
    market_ids_define(redis_client, market_id)
    bad = raw_price_update(market_id=market_id, seq=1, prices=((0, "2.00"),)).encode()  # a selection id of 0
    checked(producer, bad, partition=0, offset=55, sql_ok=True)
    producer.flush(10)

    headers = dict(dead_letter_of(bad).headers())
    assert headers["reason"] == b"bad_field"
    wait_for(
        lambda: redis_client.hget(keys.counter(COUNTER_SQL_ACCEPTED_PYTHON_REFUSED), topics.prices()),
        what="the disagreement counted",
    )
    assert applier.isActive


def test_a_record_without_the_query_headers_is_still_reduced(applier, producer, redis_client):
    market_id = 940_021
    market_ids_define(redis_client, market_id)
    update = raw_price_update(market_id=market_id, seq=4, prices=((1, "3.40"),))
    producer.produce(topics.prices_checked(), key=update.key(), value=update.encode(), partition=3)
    producer.flush(10)

    wait_for(lambda: stored(redis_client, market_id) == (4, "3.40"), what="a header-less record applied")
    assert applier.isActive


def test_the_real_time_query_writes_each_record_with_its_place_and_the_sql_verdict(spark):
    good = raw_price_update(market_id=940_031, seq=1, prices=((1, "2.00"),))
    bad = b'{"v": 1, "market_id": 940031, "seq": "x"}'
    rows = [(good.key(), good.encode(), 5, 41, 1_700_000_000_123), (b"940031", bad, 5, 42, 1_700_000_000_456)]
    source = spark.createDataFrame(rows, "key binary, value binary, partition int, offset long, kafka_ts long")

    out = checked_records(source).collect()

    assert [(row["key"], row["value"], row["partition"]) for row in out] == [
        (good.key(), good.encode(), 5),
        (b"940031", bad, 5),
    ]
    headers = [{h["key"]: bytes(h["value"]) for h in row["headers"]} for row in out]
    assert headers == [
        {HEADER_OFFSET: b"41", HEADER_KAFKA_TS: b"1700000000123", HEADER_SQL_OK: b"1"},
        {HEADER_OFFSET: b"42", HEADER_KAFKA_TS: b"1700000000456", HEADER_SQL_OK: b"0"},
    ]


def test_an_applier_that_cannot_reach_redis_stops_with_the_error_for_its_supervisor(kafka_topics):
    from spark.jobs.reducers import error_summary

    failing = PriceApplier.start(
        bootstrap=settings.KAFKA_BOOTSTRAP_SERVERS,
        redis_url="redis://127.0.0.1:1/0",
        name=f"prices-apply-{uuid.uuid4().hex[:8]}",
    )
    wait_for(lambda: not failing.isActive, what="the applier to stop")
    error = failing.exception()
    assert error is not None
    assert "127.0.0.1:1" in error_summary(str(error))


def window_partials_of(market_id: int) -> list[WindowPartial]:
    """The partials of ``market_id`` on the window topic (other tests' markets are there too)."""
    partials = (decode_partial(record.value() or b"") for record in records_from_start(topics.price_windows()))
    return [partial for partial in partials if partial.market_id == market_id]


def test_the_applier_sends_the_window_partials_of_what_it_applied(applier, producer, redis_client):
    market_id = 940_051
    market_ids_define(redis_client, market_id)
    for seq in (1, 2):
        update = raw_price_update(market_id=market_id, seq=seq, prices=((1, f"4.{seq}0"),))
        checked(producer, update, partition=2, offset=200 + seq, sql_ok=True, key=update.key())
    producer.flush(10)

    wait_for(lambda: stored(redis_client, market_id) == (2, "4.20"), what="the prices applied")
    partials = wait_for(lambda: window_partials_of(market_id), what="the window partials sent")
    merged = merge_all(partials)
    assert [(p.first_seq, p.last_seq, p.updates) for p in merged] == [(1, 2, 2)]
    assert merged[0].last == ((1, Decimal("4.20")),)


def test_the_offsets_of_applied_records_are_committed_only_once_their_window_partials_are_stored(
    kafka_topics, producer, redis_client, monkeypatch
):
    """The applier sends the movers' window partials a few polls at a time: a record whose
    partials were not stored is not committed, so a new applier reads it again."""

    class _WindowTopicAway:
        def __init__(self, **_: object) -> None:
            pass

        def send(self, partials: object) -> None:
            raise RuntimeError("window topic away")

    monkeypatch.setattr("spark.jobs.applier.WindowTopic", _WindowTopicAway)
    market_id = 940_041
    market_ids_define(redis_client, market_id)
    name = f"prices-apply-{uuid.uuid4().hex[:8]}"
    failing = PriceApplier.start(bootstrap=settings.KAFKA_BOOTSTRAP_SERVERS, redis_url=settings.REDIS_URL, name=name)
    update = raw_price_update(market_id=market_id, seq=1, prices=((1, "2.00"),))
    checked(producer, update, partition=3, offset=9, sql_ok=True, key=update.key())
    producer.flush(10)

    wait_for(lambda: not failing.isActive, what="the applier to stop when its window partials are not stored")
    assert "window topic away" in str(failing.exception())
    # The price itself was applied; its offset was not committed.
    assert stored(redis_client, market_id) == (1, "2.00")
    assert committed(name, 3) < 0


def test_a_steady_stream_of_refused_records_is_committed_while_it_lasts(applier, producer):
    """Refused records leave no window partial to wait for: their offsets are committed as they
    are read, not only when a poll finds nothing, which a steady stream never lets happen."""
    feeding = threading.Event()
    feeding.set()

    def feed() -> None:
        offset = 0
        deadline = time.monotonic() + 20
        while feeding.is_set() and time.monotonic() < deadline:
            offset += 1
            checked(producer, b'{"v": 1, "refused": %d}' % offset, partition=1, offset=offset, sql_ok=False)
            producer.flush(10)
            time.sleep(0.05)  # well inside the applier's poll wait: no poll finds nothing

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    try:
        # Two seconds in, well past any commit the records before the stream (other tests',
        # with partials) brought about: the stream's records so far are committed while it runs.
        time.sleep(2)
        reader = topic_reader("watermarks")
        try:
            _, mark = reader.get_watermark_offsets(TopicPartition(topics.prices_checked(), 1), timeout=10)
        finally:
            reader.close()
        wait_for(
            lambda: committed(applier.name, 1) >= mark, timeout=10, what="the refused records committed mid-stream"
        )
        assert feeder.is_alive(), "the stream ended before the commit was seen"
    finally:
        feeding.clear()
        feeder.join(timeout=15)
    assert applier.isActive
