from decimal import Decimal
from typing import Any

from reducers.prices import conflate, held_is_current, is_newer, market_state, restated
from reducers.schemas import PriceUpdate, SelectionPrice


def update(market_id: int, seq: int, price: str = "2.00") -> PriceUpdate:
    return PriceUpdate(
        market_id=market_id,
        seq=seq,
        status="open",
        selections=(SelectionPrice(1, Decimal(price)),),
        event_ts=seq,
        produce_ts=seq,
    )


def test_conflate_keeps_the_highest_sequence_per_market_and_counts_merged():
    result = conflate([(update(1, 1), 100), (update(2, 7), 101), (update(1, 3, "2.50"), 102), (update(1, 2), 103)])
    by_market = {c.update.market_id: c for c in result}
    assert by_market[1].update.seq == 3
    assert by_market[1].update.selections[0].price == Decimal("2.50")
    assert by_market[1].merged == 3
    assert by_market[1].kafka_ts == 102
    assert by_market[2].merged == 1


def test_conflate_of_duplicates_keeps_one():
    result = conflate([(update(1, 4), 1), (update(1, 4), 2)])
    assert [(c.update.seq, c.merged) for c in result] == [(4, 2)]


def test_only_a_newer_sequence_is_applied():
    assert is_newer(stored_seq=None, incoming_seq=1)
    assert is_newer(stored_seq=4, incoming_seq=5)
    assert not is_newer(stored_seq=5, incoming_seq=5)
    assert not is_newer(stored_seq=6, incoming_seq=5)


def test_market_state_is_tradable_only_when_open():
    suspended = PriceUpdate(
        market_id=1, seq=1, status="suspended", selections=(SelectionPrice(1, Decimal("2")),), event_ts=1, produce_ts=2
    )
    state = market_state(item=conflate([(suspended, 3)])[0], reducer_ts=4)
    assert state["tradable"] is False
    assert state["ts"] == {"event": 1, "produce": 2, "kafka": 3, "reducer": 4}


def test_merging_conflations_keeps_the_newest_and_adds_the_counts():
    from reducers.prices import Conflated, merge_conflated

    a = [Conflated(update(1, 5), 3, 10), Conflated(update(2, 1), 1, 11)]
    b = [Conflated(update(1, 7), 2, 12)]
    merged = {c.update.market_id: c for c in merge_conflated(a, b)}
    assert (merged[1].update.seq, merged[1].merged, merged[1].kafka_ts) == (7, 5, 12)
    assert (merged[2].update.seq, merged[2].merged) == (1, 1)


def test_restated_takes_the_markets_tables_new_verdict_and_keeps_the_price():

    state: Any = {
        "market_id": 1,
        "seq": 7,
        "status": "suspended",
        "tradable": False,
        "selections": [],
        "ts": {"reducer": 1},
    }
    reopened = restated(state=state, price_status="open", table_status="open", reducer_ts=5)
    assert reopened is not None
    assert (reopened["seq"], reopened["status"], reopened["tradable"], reopened["ts"]["reducer"]) == (
        7,
        "open",
        True,
        5,
    )
    # The table no longer suspends it, but the feed itself had suspended the market: stays suspended.
    assert restated(state=state, price_status="suspended", table_status="open", reducer_ts=5) is None
    assert restated(state={**state, "status": "open"}, price_status="open", table_status="closed", reducer_ts=5) == {
        **state,
        "status": "closed",
        "tradable": False,
        "ts": {"reducer": 5},
    }


def test_a_client_holding_the_stored_sequence_and_status_is_current():
    assert held_is_current(stored_seq=4, stored_status="open", held_seq=4, held_status="open")
    assert held_is_current(stored_seq=4, stored_status="open", held_seq=5, held_status="suspended")


def test_a_client_behind_or_holding_another_status_at_the_same_sequence_is_not_current():
    assert not held_is_current(stored_seq=5, stored_status="open", held_seq=4, held_status="open")
    assert not held_is_current(stored_seq=4, stored_status="open", held_seq=4, held_status="suspended")
