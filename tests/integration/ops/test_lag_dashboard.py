"""What the lag dashboard tells someone on call: seconds behind per partition from the age of
the oldest unprocessed record, each query against its objective, stale figures marked stale,
and the dead letters browsable by topic and reason."""

from __future__ import annotations

import time
import uuid

import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import NewTopic
from django.conf import settings

from odds.core import metrics
from odds.core.kafka import admin_client
from reducers import topics
from store import keys
from tests.conftest import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def probe_topic(kafka_topics):
    """A three-partition topic of its own, read by a query named ``probe`` (no reducer runs it)."""
    name = f"{topics.namespace()}.probe.{uuid.uuid4().hex[:8]}"
    admin = admin_client()
    admin.create_topics([NewTopic(name, num_partitions=3, replication_factor=1)])[name].result(30)
    # Created is not yet led: records produced before every partition has a leader can be refused.
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found = admin.list_topics(name, timeout=10).topics.get(name)
        if found is not None and len(found.partitions) == 3 and all(p.leader >= 0 for p in found.partitions.values()):
            break
        time.sleep(0.2)
    yield name
    admin_client().delete_topics([name], operation_timeout=30)[name].result(30)


def _produce(producer, topic: str, partition: int, *ages_ms: int) -> None:
    now = int(time.time() * 1000)
    failed = []

    def delivered(err, _msg) -> None:
        if err is not None:
            failed.append(err)

    for age in ages_ms:
        producer.produce(topic, value=b"{}", partition=partition, timestamp=now - age, on_delivery=delivered)
    assert producer.flush(10) == 0, "every record delivered within 10 s"
    assert not failed, failed


def _commit(group: str, topic: str, offsets: dict[int, int]) -> None:
    consumer = Consumer({"bootstrap.servers": settings.KAFKA_BOOTSTRAP_SERVERS, "group.id": group})
    try:
        consumer.commit(offsets=[TopicPartition(topic, p, o) for p, o in offsets.items()], asynchronous=False)
    finally:
        consumer.close()


def _read_back(topic: str, group: str, *, ends: dict[int, int], committed: dict[int, int]) -> None:
    """Wait (10 s at most) until Kafka's admin answers show the records produced and the offsets
    committed: the dashboard reads them the same way, and what these tests check is its arithmetic
    on them, not how soon a broker reports a write it has acknowledged."""

    def seen() -> tuple[dict, dict]:
        return (
            metrics.log_end_offsets((topic, p) for p in ends),
            metrics.committed_offsets(group, [(topic, p) for p in committed]),
        )

    def read_back() -> bool:
        seen_ends, seen_committed = seen()
        return all(seen_ends.get((topic, p)) == n for p, n in ends.items()) and all(
            seen_committed.get((topic, p)) == n for p, n in committed.items()
        )

    wait_for(
        read_back,
        timeout=10,
        interval=0.1,
        what=f"Kafka reading back ends {ends} and commits {committed}",
        detail=lambda: "ends {}, commits {}".format(*seen()),
    )


@pytest.fixture
def probe_query(probe_topic, monkeypatch, settings, redis_client):
    monkeypatch.setattr(metrics, "QUERY_TOPICS", {"probe": lambda: probe_topic})
    settings.OPS_LAG_OBJECTIVES_S = {"probe": 10.0}
    settings.OPS_REPORT_STALE_S = 30
    yield topics.reducer_group("probe")
    redis_client.hdel(keys.reducer_seen(), "probe")


def test_seconds_behind_is_the_age_of_each_partitions_oldest_unprocessed_record(probe_topic, probe_query, producer):
    _produce(producer, probe_topic, 0, 30_000, 29_000, 28_000)
    _produce(producer, probe_topic, 1, 20_000, 5_000, 4_000)
    _produce(producer, probe_topic, 2, 1_000)
    _commit(probe_query, probe_topic, {0: 0, 1: 1, 2: 1})
    _read_back(probe_topic, probe_query, ends={0: 3, 1: 3, 2: 1}, committed={0: 0, 1: 1, 2: 1})

    query = metrics.reducer_lag(record=False)["probe"]
    by_partition = {p["partition"]: p for p in query["partitions"]}
    assert [by_partition[p]["lag"] for p in (0, 1, 2)] == [3, 2, 0], query["partitions"]
    assert 29.5 <= by_partition[0]["lag_seconds"] < 40
    assert 4.5 <= by_partition[1]["lag_seconds"] < 15
    assert by_partition[2]["lag_seconds"] == 0.0
    assert [by_partition[p]["lag_seconds_source"] for p in (0, 1, 2)] == ["record", "record", "caught_up"]
    assert query["lag_seconds"] == by_partition[0]["lag_seconds"]
    assert (query["objective_s"], query["objective"]) == (10.0, metrics.OBJECTIVE_BREACHED)


def test_a_query_within_its_objective_is_met_and_one_never_heard_from_is_stale(
    probe_topic, probe_query, producer, redis_client
):
    _produce(producer, probe_topic, 0, 3_000, 2_000)
    _commit(probe_query, probe_topic, {0: 1, 1: 0, 2: 0})
    query = metrics.reducer_lag(record=False)["probe"]
    assert 1.5 <= query["lag_seconds"] < 10
    assert query["objective"] == metrics.OBJECTIVE_MET
    assert query["stale"] is True
    assert query["seen_ms"] is None

    redis_client.hset(keys.reducer_seen(), "probe", int(time.time() * 1000))
    assert metrics.reducer_lag(record=False)["probe"]["stale"] is False
    redis_client.hset(keys.reducer_seen(), "probe", int(time.time() * 1000) - 31_000)
    assert metrics.reducer_lag(record=False)["probe"]["stale"] is True


def test_a_group_that_never_committed_is_behind_by_the_age_of_the_first_record(probe_topic, probe_query, producer):
    _produce(producer, probe_topic, 1, 12_000, 1_000)
    partitions = {p["partition"]: p for p in metrics.reducer_lag(record=False)["probe"]["partitions"]}
    assert partitions[1]["committed"] == -1
    assert 11.5 <= partitions[1]["lag_seconds"] < 25


def test_two_positions_on_one_partition_are_both_read(probe_topic, producer):
    """Two queries reading one topic (prices and movers) sit at different offsets of a partition."""
    _produce(producer, probe_topic, 2, 9_000, 3_000)
    found = metrics.record_times([(probe_topic, 2, 0), (probe_topic, 2, 1)])
    now = time.time() * 1000
    assert set(found) == {(probe_topic, 2, 0), (probe_topic, 2, 1)}
    assert 8_500 <= now - found[(probe_topic, 2, 0)] < 20_000
    assert 2_500 <= now - found[(probe_topic, 2, 1)] < 14_000


def _dead_letter(producer, topic: str, reason: str, n: int, *, first_ms: int) -> None:
    # The n-th letter is stamped n ms after ``first_ms``: letters of two topics produced within
    # one millisecond would otherwise tie, and newest first would have no order between them.
    producer.produce(
        topic,
        key=f"k{n}".encode(),
        value=f'{{"n": {n}, "broken": true'.encode(),
        headers=[("reason", reason.encode()), ("detail", f"detail {n}".encode()), ("origin", f"src/0/{n}".encode())],
        timestamp=first_ms + n,
    )
    producer.flush(10)


def test_dead_letters_are_browsed_newest_first_by_topic_and_reason(staff_client, kafka_topics, producer):
    tag = uuid.uuid4().hex[:6]
    bad_json, missing = f"bad_json_{tag}", f"missing_field_{tag}"
    first_ms = int(time.time() * 1000)
    _dead_letter(producer, topics.prices_dead_letter(), bad_json, 1, first_ms=first_ms)
    _dead_letter(producer, topics.commands_dead_letter(), missing, 2, first_ms=first_ms)
    _dead_letter(producer, topics.prices_dead_letter(), bad_json, 3, first_ms=first_ms)

    page = staff_client.get("/ops/dead-letters")
    assert page.status_code == 200
    body = page.content.decode()
    assert f'data-reason="{bad_json}"' in body
    assert f'data-reason="{missing}"' in body
    origins = [o for o in ("src/0/3", "src/0/2", "src/0/1") if f'data-origin="{o}"' in body]
    assert origins == ["src/0/3", "src/0/2", "src/0/1"]
    assert (
        body.index('data-origin="src/0/3"') < body.index('data-origin="src/0/2"') < body.index('data-origin="src/0/1"')
    )
    assert "detail 2" in body
    assert "&quot;n&quot;: 2, &quot;broken&quot;: true" in body

    only = staff_client.get("/ops/dead-letters", {"reason": bad_json}).content.decode()
    assert 'data-origin="src/0/3"' in only
    assert 'data-origin="src/0/1"' in only
    assert 'data-origin="src/0/2"' not in only

    commands = staff_client.get("/ops/dead-letters", {"source": "commands"}).content.decode()
    assert f'data-reason="{missing}"' in commands
    assert f'data-reason="{bad_json}"' not in commands

    unknown = staff_client.get("/ops/dead-letters", {"source": "nonsense"})
    assert unknown.status_code == 400
    assert "There is no dead-letter topic for “nonsense”" in unknown.content.decode()


def test_a_dead_price_record_is_shown_by_its_members_or_its_bytes(staff_client, kafka_topics, producer):
    """The price topic's records are Avro: the page shows a dead one's members as JSON, and bytes
    that are not a record as why they are not and the bytes themselves."""
    from tests.factories import raw_price_update

    tag = uuid.uuid4().hex[:6]
    out_of_range = raw_price_update(market_id=97_531, seq=4, prices=((1, "1.00"),)).encode()
    for n, value in enumerate((out_of_range, b"\xff\x01", b'{"v":1}'), start=1):
        producer.produce(
            topics.prices_dead_letter(),
            key=b"97531",
            value=value,
            headers=[("reason", f"shown_{tag}".encode()), ("origin", f"shown/{tag}/{n}".encode())],
        )
    producer.flush(10)

    body = staff_client.get("/ops/dead-letters", {"source": "prices", "reason": f"shown_{tag}"}).content.decode()
    assert "&quot;market_id&quot;:97531,&quot;seq&quot;:4,&quot;status&quot;:&quot;open&quot;" in body
    assert "{&quot;id&quot;:1,&quot;price&quot;:&quot;1.00&quot;,&quot;status&quot;:&quot;active&quot;}" in body
    assert "not a price record in Avro (record ends early, at byte 2): ff 01" in body
    assert "the price topic carries Avro (price_update.avsc)): {&quot;v&quot;:1}" in body


def test_the_dashboard_names_every_reducer_query_including_match_states(tmp_path):
    from spark.jobs.reducers import starters

    # starters() only builds the start functions; none is called, so no Spark session is needed.
    def names(mode: str) -> set[str]:
        return set(starters(None, bootstrap="", redis_url="", checkpoint_root=tmp_path, mode=mode))  # type: ignore[arg-type]

    assert set(metrics.QUERY_TOPICS) == names("microbatch")
    # Real-time mode adds the price reducer's applier, shown while it runs.
    assert set(metrics.QUERY_TOPICS) | set(metrics.APPLIER_TOPICS) == names("realtime")
    assert set(settings.OPS_LAG_OBJECTIVES_S) == names("realtime")
