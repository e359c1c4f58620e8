"""``manage.py after_restore`` against the real PostgreSQL, Kafka and Redis.

The database is put in the state a restore leaves, with Kafka ahead of it: an outbox row whose
record Kafka already holds (relayed after the restore point, its ``sent_at`` lost), one that
never left, a bet event of a bet the database never saw, and a settlement of a bet the
database still holds open. The liability reducer's own processor (spark/jobs/liability.py) has
counted every event and committed its offsets, as the running reducer does.
"""

from __future__ import annotations

import contextlib
import io
import threading
from decimal import Decimal

import pytest
from confluent_kafka import TopicPartition
from django.conf import settings
from django.core.management import CommandError, call_command
from django.utils import timezone

from odds.betting.services.bets import bet_event
from odds.core.kafka import producer_create
from odds.core.metrics import topic_partitions
from odds.core.outbox import outbox_relay
from odds.models import OutboxMessage
from odds.ops.services.restore import records_since
from reducers import restore, topics
from reducers.liability import SelectionTotal
from reducers.schemas import BetEvent
from store import keys
from store.clients import kafka_consumer
from store.liability import BookStore
from store.markets import LiabilityStore
from tests.factories import market_create, user_create
from tests.integration.betting.helpers import bet_accepted, selections_of

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


class LiabilityReducer(threading.Thread):
    """Plays the running liability reducer: reads the bets topic's new records every few tenths of
    a second with the reducer's own processor, then commits the offsets it read to its group."""

    def __init__(self, redis_client, since) -> None:
        super().__init__(daemon=True)
        from spark.jobs.liability import LiabilityProcessor
        from tests.fakes import FakeDeadLetters

        self._processor = LiabilityProcessor(redis_client=redis_client, dead_letters=FakeDeadLetters())
        self._since = since
        self._read: set[tuple[int, int]] = set()
        self.stopped = threading.Event()

    def read_once(self) -> None:
        committer = kafka_consumer(settings.KAFKA_BOOTSTRAP_SERVERS, topics.reducer_group("liability"))
        try:
            partitions = topic_partitions(topics.bets())
            # Read up to these ends at least; records before the test's own were earlier tests'.
            ends = {
                p: committer.get_watermark_offsets(TopicPartition(topics.bets(), p), timeout=10)[1] for p in partitions
            }
            rows = [r for r in rows_since(self._since) if (r["partition"], r["offset"]) not in self._read]
            self._processor.process_rows(rows)
            self._read.update((r["partition"], r["offset"]) for r in rows)
            for partition, offset in self._read:
                ends[partition] = max(ends[partition], offset + 1)
            committer.commit(offsets=[TopicPartition(topics.bets(), p, o) for p, o in ends.items()], asynchronous=False)
        finally:
            committer.close()

    def run(self) -> None:
        while not self.stopped.wait(0.3):
            self.read_once()


@contextlib.contextmanager
def liability_reducer(redis_client, since):
    reducer = LiabilityReducer(redis_client, since)
    reducer.read_once()
    reducer.start()
    try:
        yield reducer
    finally:
        reducer.stopped.set()
        reducer.join(10)


def rows_since(since):
    return [
        {"key": r.key, "value": r.value, "partition": r.partition, "offset": r.offset}
        for r in records_since(topics.bets(), since=since)
    ]


def produce(event: BetEvent) -> None:
    producer = producer_create(**{"linger.ms": 0})
    producer.produce(topics.bets(), key=event.key(), value=event.encode())
    assert producer.flush(10) == 0


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("after_restore", *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def started(kafka_topics, redis_client):
    """The test's start: its records are the ones produced from then on (read by their time)."""
    return timezone.now()


def test_after_restore_relays_once_dead_letters_what_the_database_lost_and_rebuilds_liability(started, redis_client):
    market = market_create(prices=("2.00", "3.00", "4.00"))
    home, draw, _ = selections_of(market)
    punter = user_create(balance="100.00")
    relayed_and_held = bet_accepted(punter, home, stake="10.00")
    outbox_relay()
    # Relayed after the restore point: the restored row is pending again though Kafka has it.
    in_kafka_already = bet_accepted(punter, draw, stake="5.00")
    outbox_relay()
    OutboxMessage.objects.filter(key=str(in_kafka_already.id).encode()).update(sent_at=None)
    never_left = bet_accepted(punter, home, stake="2.00")
    # A bet placed after the restore point, and a settlement made after it, both in Kafka only.
    lost = BetEvent(
        event_id=f"{never_left.id + 40}:placed",
        type="placed",
        bet_id=never_left.id + 40,
        user_id=punter.id,
        stake=Decimal("7.00"),
        potential_return=Decimal("28.00"),
        legs=bet_event(bet=never_left, type="placed", currency="GBP").legs,
        ts=1,
    )
    produce(lost)
    settled_later = bet_event(bet=relayed_and_held, type="settled", currency="GBP")
    produce(settled_later)
    with liability_reducer(redis_client, started):
        out = run("--since", started.isoformat(), "--skip", "store", "--wait", "10")

    assert "outbox: done: pending 2, already_in_kafka 1, relayed 1, left 0" in out, out
    assert "lost_bet 1, lost_change 1, dead_lettered 2" in out, out
    # Each of the two pending rows is on the topic exactly once.
    placed = [r for r in records_since(topics.bets(), since=started) if r.value and b':placed"' in r.value]
    keys_on_topic = [r.key for r in placed]
    assert keys_on_topic.count(str(in_kafka_already.id).encode()) == 1
    assert keys_on_topic.count(str(never_left.id).encode()) == 1
    dead = {r.value: r.headers for r in records_since(topics.bets_dead_letter(), since=started)}
    assert set(dead) == {lost.encode(), settled_later.encode()}
    assert all(h["reason"] == restore.DEAD_LETTER_REASON.encode() for h in dead.values())
    assert b"not in the restored database" in dead[lost.encode()]["detail"]
    assert b"accepted in the restored database" in dead[settled_later.encode()]["detail"]
    # Liability is the database's open bets: the lost bet is not in it, the lost settlement
    # did not take the open bet out of it.
    totals = LiabilityStore(redis_client).totals()
    assert totals[home.id] == SelectionTotal((("GBP", int((Decimal("20.00") - 10 + Decimal("4.00") - 2) * 100)),), 2)
    assert totals[draw.id] == SelectionTotal((("GBP", int((Decimal("15.00") - 5) * 100)),), 1)
    assert redis_client.exists(keys.bet_event_seen(lost.event_id))
    assert not redis_client.exists(keys.bet_event_seen(settled_later.event_id))
    # So is the market's book: £17 staked; Home pays £24.00, Draw £15.00.
    [book] = BookStore(redis_client).books([market.id])[0].values()
    figures = book.figures({})
    assert (figures.staked, book.bets, figures.pl(home.id), figures.pl(draw.id)) == (1700, 3, 1700 - 2400, 1700 - 1500)
    # The next bet takes an id Kafka has never seen.
    assert bet_accepted(punter, home, stake="1.00").id > lost.bet_id


def test_a_second_run_sends_and_dead_letters_nothing_again(started, redis_client):
    market = market_create()
    punter = user_create()
    bet = bet_accepted(punter, selections_of(market)[0])
    outbox_relay()
    lost = BetEvent(
        event_id=f"{bet.id + 5}:placed",
        type="placed",
        bet_id=bet.id + 5,
        user_id=punter.id,
        stake=Decimal("1.00"),
        potential_return=Decimal("2.10"),
        legs=bet_event(bet=bet, type="placed", currency="GBP").legs,
        ts=1,
    )
    produce(lost)
    with liability_reducer(redis_client, started):
        run("--since", started.isoformat(), "--skip", "store", "--wait", "10")

        again = run("--since", started.isoformat(), "--skip", "store", "--wait", "10")

    assert "relayed 0" in again, again
    assert "dead_lettered 0" in again, again
    dead = [r for r in records_since(topics.bets_dead_letter(), since=started) if r.value == lost.encode()]
    assert len(dead) == 1


def test_liability_waits_for_the_reducer_and_says_what_to_do(own_namespace, started, redis_client):
    # A namespace of its own: the session's liability reducer, when it runs, would read the record.
    bet_accepted(user_create(), selections_of(market_create())[0])
    outbox_relay()  # a record the reducer has not read: nothing committed it

    out = io.StringIO()
    with pytest.raises(CommandError, match="liability"):
        call_command("after_restore", "--skip", "store", "--wait", "1", stdout=out)
    assert "start the reducers" in out.getvalue()


def test_the_store_step_has_the_reducers_rebuild_redis_from_kafka(kafka_topics, redis_client):
    from spark.rebuild import StoreWatch

    redis_client.set(keys.store_mark(), b'{"old": true}')
    watch = StoreWatch(redis_url=settings.REDIS_URL, bootstrap=settings.KAFKA_BOOTSTRAP_SERVERS, interval_s=0.2)
    thread = threading.Thread(target=watch.run, daemon=True)
    thread.start()
    try:
        out = run("--skip", "outbox", "--skip", "bets", "--skip", "liability", "--rebuild-store", "--wait", "30")
    finally:
        watch.stopped.set()
        thread.join(10)
    assert "store: done: mark {'rebuilt_at'" in out, out
    assert watch.rebuilds == 1


def test_the_store_step_is_incomplete_while_no_reducer_rebuilds(kafka_topics, redis_client):
    redis_client.delete(keys.store_mark())
    with pytest.raises(CommandError, match="store"):
        call_command(
            "after_restore",
            "--skip",
            "outbox",
            "--skip",
            "bets",
            "--skip",
            "liability",
            "--wait",
            "1",
            stdout=io.StringIO(),
        )
