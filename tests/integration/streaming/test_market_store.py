"""The reducers' Redis store (store/markets.py) against real Redis: the layouts the decisions'
effects are written in, and what the readers get back."""

from __future__ import annotations

import time
from decimal import Decimal

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reducers.latency import PIPELINE_STAGES, histogram_read
from reducers.markets import StoredDefinition, WriteDefinition
from reducers.movers import Move
from reducers.prices import conflate, is_newer
from store import keys
from store.latency import histogram_key
from store.markets import MarketStore, queue_states, raw_states
from tests.conftest import wait_for
from tests.factories import definition_build, raw_price_update

pytestmark = pytest.mark.integration


def test_a_written_definition_is_read_back_indexed_under_its_event(redis_client):
    store = MarketStore(redis_client)
    definition = definition_build(987_001, version=3, status="suspended")
    store.execute_definition(WriteDefinition(987_001, definition))
    assert store.stored_definitions([987_001, 987_002]) == {
        987_001: StoredDefinition(version=3, status="suspended"),
        987_002: StoredDefinition(),
    }
    assert store.definitions([987_001, 987_002]) == {987_001: definition}
    assert definition in store.all_definitions()
    assert redis_client.sismember(keys.event_markets(definition.event_id), 987_001)
    assert store.table_statuses([987_001, 987_002]) == ["suspended", None]


def test_a_removed_market_is_closed_and_leaves_the_table(redis_client):
    store = MarketStore(redis_client)
    store.execute_definition(WriteDefinition(987_011, definition_build(987_011)))
    store.execute_definition(WriteDefinition(987_011, None))
    assert store.stored_definitions([987_011]) == {987_011: StoredDefinition(version=None, status="closed")}
    assert store.definitions([987_011]) == {}
    assert 987_011 not in {d.market_id for d in store.all_definitions()}
    assert store.table_statuses([987_011]) == ["closed"]


def test_a_damaged_definition_row_is_left_out_of_what_the_readers_see(redis_client):
    store = MarketStore(redis_client)
    redis_client.hset(keys.market_definition(987_021), mapping={"version": 1, "status": "open", "def": b"{not json"})
    redis_client.sadd(keys.market_definitions_index(), 987_021)
    assert store.definitions([987_021]) == {}
    assert 987_021 not in {d.market_id for d in store.all_definitions()}


def test_applied_states_are_read_the_same_through_the_store_and_a_callers_own_pipeline(redis_client):
    store = MarketStore(redis_client)
    store.execute_definition(WriteDefinition(987_031, definition_build(987_031)))
    applied = store.apply(conflate([(raw_price_update(market_id=987_031, seq=4, prices=((1, "2.50"),)), 1)]))
    assert set(applied) == {987_031}
    states = store.states([987_031, 987_032])
    assert list(states) == [987_031]
    assert states[987_031]["seq"] == 4
    pipe = redis_client.pipeline(transaction=False)
    queue_states(pipe, [987_031, 987_032])
    raw = raw_states([987_031, 987_032], pipe.execute())
    assert list(raw) == [987_031]
    # an older sequence is neither stored nor reported applied
    assert store.apply(conflate([(raw_price_update(market_id=987_031, seq=3, prices=((1, "9.00"),)), 1)])) == {}
    assert store.states([987_031])[987_031]["selections"][0]["price"] == "2.50"


def test_movers_rankings_keep_an_hour_of_windows(redis_client):
    store = MarketStore(redis_client)
    now = 10_000_000_000
    old, recent = now - 2 * 3_600_000, now - 60_000
    store.rank_movers({(old, 1): Move(11, Decimal("2.00"), Decimal("2.01"), 50)}, now_ms=old)
    store.rank_movers(
        {
            (recent, 1): Move(11, Decimal("2.00"), Decimal("2.10"), 500),
            (recent, 2): Move(21, Decimal("5.00"), Decimal("4.99"), -20),
        },
        now_ms=now,
    )
    assert redis_client.zrange(keys.movers(recent), 0, -1, desc=True, withscores=True) == [(b"1", 500.0), (b"2", 20.0)]
    # The index is shared with the running movers query, whose windows are real times: only
    # the two windows of this test are looked at.
    indexed = set(redis_client.zrange(keys.movers_index(), 0, -1))
    assert str(recent).encode() in indexed
    assert str(old).encode() not in indexed
    assert 0 < redis_client.ttl(keys.movers(recent)) <= 3600
    assert 0 < redis_client.ttl(keys.movers_moves(recent)) <= 3600


def test_movers_are_read_back_newest_window_first_biggest_move_first_and_announced_to_the_desk(redis_client):
    store = MarketStore(redis_client)
    pubsub = redis_client.pubsub()
    pubsub.subscribe(keys.desk_movers_channel())
    wait_for(lambda: pubsub.get_message(timeout=1) is not None, what="subscribed")
    # Far in the future, so the running movers query's real windows come after these in the index.
    first, second = 4_000_000_000_000, 4_000_000_060_000
    now = int(time.time() * 1000)
    store.rank_movers(
        {
            (first, 7): Move(71, Decimal("3.00"), Decimal("2.50"), -1666),
            (second, 7): Move(72, Decimal("4.00"), Decimal("4.20"), 500),
            (second, 8): Move(81, Decimal("1.50"), Decimal("1.80"), 2000),
        },
        now_ms=now,
    )
    windows = store.movers(windows=2, top=10)
    assert windows == [
        (
            second,
            [
                (8, Move(81, Decimal("1.50"), Decimal("1.80"), 2000)),
                (7, Move(72, Decimal("4.00"), Decimal("4.20"), 500)),
            ],
        ),
        (first, [(7, Move(71, Decimal("3.00"), Decimal("2.50"), -1666))]),
    ]
    assert store.movers(windows=1, top=1) == [(second, [(8, Move(81, Decimal("1.50"), Decimal("1.80"), 2000))])]
    message = pubsub.get_message(timeout=5)
    assert message is not None
    assert orjson.loads(message["data"]) == {"type": "desk.movers", "v": 1, "windows": [first, second], "ts": now}
    pubsub.close()
    for window in (first, second):
        redis_client.delete(keys.movers(window), keys.movers_moves(window))
        redis_client.zrem(keys.movers_index(), str(window))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    batches=st.lists(
        st.lists(
            st.tuples(st.integers(0, 2), st.integers(1, 6), st.sampled_from(["open", "suspended"])),
            min_size=1,
            max_size=5,
        ),
        min_size=1,
        max_size=6,
    )
)
def test_the_stores_apply_if_newer_is_the_pure_rule(redis_client, batches):
    """The Lua apply-if-newer does what ``reducers.prices.is_newer`` says, on duplicates, replays
    and out-of-order sequences, and publishes a status message exactly when the status changes."""
    store = MarketStore(redis_client)
    markets = [987_101, 987_102, 987_103]
    for market_id in markets:
        redis_client.delete(keys.market_state(market_id))
        store.execute_definition(WriteDefinition(market_id, definition_build(market_id)))
    pubsub = redis_client.pubsub(ignore_subscribe_messages=True)
    pubsub.subscribe(*(keys.market_channel(m) for m in markets))
    model: dict[int, tuple[int, str]] = {}
    expected_messages: list[tuple[str, int, int]] = []
    for batch in batches:
        items = conflate(
            (raw_price_update(market_id=markets[m], seq=seq, prices=((1, "2.00"),), status=status), 1)
            for m, seq, status in batch
        )
        expected = set()
        for item in items:
            market_id, seq, status = item.update.market_id, item.update.seq, item.update.status
            stored = model.get(market_id)
            if is_newer(stored_seq=stored[0] if stored else None, incoming_seq=seq):
                expected.add(market_id)
                if stored is not None and stored[1] != status:
                    expected_messages.append(("market.status", market_id, seq))
                expected_messages.append(("market", market_id, seq))
                model[market_id] = (seq, status)
        assert set(store.apply(items)) == expected
    states = store.states(markets)
    assert {m: (s["seq"], s["status"]) for m, s in states.items()} == model
    received: list[tuple[str, int, int]] = []
    deadline = time.monotonic() + 5
    while len(received) < len(expected_messages) and time.monotonic() < deadline:
        message = pubsub.get_message(timeout=0.1)
        if message is not None:
            frame = orjson.loads(message["data"])
            received.append((frame["type"], frame["market_id"], frame["seq"]))
    pubsub.close()
    assert sorted(received) == sorted(expected_messages)


def test_applied_states_add_their_pipeline_stages_to_the_latency_histograms_and_replays_do_not(redis_client):
    store = MarketStore(redis_client)
    store.execute_definition(WriteDefinition(987_201, definition_build(987_201)))

    def counts() -> dict[str, int]:
        return {stage: histogram_read(redis_client.hgetall(histogram_key(stage))).count for stage in PIPELINE_STAGES}

    before = counts()
    update = raw_price_update(market_id=987_201, seq=1, prices=((1, "2.00"),))
    store.apply(conflate([(update, update.produce_ts + 3)]))
    assert counts() == {stage: before[stage] + 1 for stage in PIPELINE_STAGES}
    store.apply(conflate([(update, update.produce_ts + 3)]))  # the same record again
    assert counts() == {stage: before[stage] + 1 for stage in PIPELINE_STAGES}


def test_waiting_for_replicas_that_are_not_there_fails_the_batch_and_none_wanted_costs_nothing(redis_client):
    from store.markets import ReplicationLag, replicas_acknowledge

    replicas_acknowledge(redis_client, replicas=0, timeout_ms=1)
    assert redis_client.get(keys.replication_mark()) is None, "no replicas wanted: nothing written"
    with pytest.raises(ReplicationLag, match="0 of 1 replicas"):
        replicas_acknowledge(redis_client, replicas=1, timeout_ms=50)


def test_prices_are_applied_after_redis_loses_its_scripts_and_an_older_one_still_is_not(redis_client):
    store = MarketStore(redis_client)
    store.execute_definition(WriteDefinition(987_041, definition_build(987_041)))
    store.apply(conflate([(raw_price_update(market_id=987_041, seq=2, prices=((1, "2.00"),)), 1)]))
    # As after a restart of Redis or a failover to a replica that never ran the script.
    redis_client.script_flush()

    applied = store.apply(conflate([(raw_price_update(market_id=987_041, seq=3, prices=((1, "3.00"),)), 1)]))
    assert set(applied) == {987_041}
    assert orjson.loads(redis_client.hget(keys.market_state(987_041), "state"))["seq"] == 3
    redis_client.script_flush()
    assert store.apply(conflate([(raw_price_update(market_id=987_041, seq=1, prices=((1, "1.50"),)), 1)])) == {}
    assert orjson.loads(redis_client.hget(keys.market_state(987_041), "state"))["seq"] == 3


def test_a_batch_of_more_markets_than_one_script_call_takes_is_read_and_applied_in_order(redis_client):
    """Statuses and applies go to Redis in calls of ``SCRIPT_MARKETS`` markets: over several
    calls, each market gets its own answer, in the order asked, and a script Redis has lost is
    loaded again."""
    from store.markets import SCRIPT_MARKETS

    store = MarketStore(redis_client)
    markets = [988_000 + n for n in range(2 * SCRIPT_MARKETS + 7)]
    defined = markets[::3]
    for market_id in defined:
        redis_client.hset(keys.market_definition(market_id), "status", "suspended" if market_id % 2 else "open")
    assert store.table_statuses(markets) == [
        ("suspended" if m % 2 else "open") if m in defined else None for m in markets
    ]

    older = set(markets[1::5])
    for market_id in older:
        store.apply(conflate([(raw_price_update(market_id=market_id, seq=9, prices=((1, "3.00"),)), 1)]))
    redis_client.script_flush()
    applied = store.apply(conflate([(raw_price_update(market_id=m, seq=5, prices=((1, "2.00"),)), 1) for m in markets]))

    assert set(applied) == set(markets) - older
    states = store.states(markets)
    assert {m for m in markets if states[m]["seq"] == 9} == older
    assert {m for m in markets if states[m]["seq"] == 5} == set(markets) - older
