"""The markets table, price admission and movers decisions (reducers/markets.py,
reducers/prices.py, reducers/movers.py), without a broker or a store."""

from __future__ import annotations

from decimal import Decimal

import orjson

from reducers.markets import (
    StoredDefinition,
    WriteDefinition,
    definition_change,
    plan_table,
)
from reducers.movers import (
    Move,
    Movement,
    WindowPartial,
    biggest_moves,
    decode_partial,
    encode_partial,
    fold_partials,
    merge_all,
    move_bps,
    movers_frame,
    window_movements,
)
from reducers.prices import Conflated, admit, unknown_items
from reducers.schemas import PriceUpdate, SelectionPrice
from tests.factories import definition_build

ABSENT = StoredDefinition()


def item(market_id: int, seq: int = 1) -> Conflated:
    update = PriceUpdate(
        market_id=market_id,
        seq=seq,
        status="open",
        selections=(SelectionPrice(1, Decimal("2.00")),),
        event_ts=1,
        produce_ts=1,
    )
    return Conflated(update, 1, 1)


# --- the markets table ---


def test_a_new_market_is_written_and_its_status_counts_as_changed():
    definition = definition_build(7)
    change = definition_change(7, definition, ABSENT)
    assert change.outcome == "status_changed"
    assert change.effect == WriteDefinition(7, definition)
    assert change.releases_kept_price
    assert change.restates


def test_a_newer_version_with_the_same_status_is_an_upsert_that_restates_nothing():
    change = definition_change(7, definition_build(7, version=3), StoredDefinition(version=2, status="open"))
    assert change.outcome == "upserted"
    assert isinstance(change.effect, WriteDefinition)
    assert change.releases_kept_price
    assert not change.restates


def test_a_suspension_is_a_status_change():
    change = definition_change(
        7, definition_build(7, version=3, status="suspended"), StoredDefinition(version=2, status="open")
    )
    assert change.outcome == "status_changed"
    assert change.restates


def test_an_old_or_equal_version_is_stale_writes_nothing_and_still_releases_a_kept_price():
    for version in (1, 2):
        change = definition_change(7, definition_build(7, version=version), StoredDefinition(version=2, status="open"))
        assert change.outcome == "stale"
        assert change.effect is None
        # a replay after a crash between writing the definition and applying the kept price
        assert change.releases_kept_price
        assert not change.restates


def test_a_tombstone_removes_the_market_whatever_is_stored():
    for stored in (ABSENT, StoredDefinition(version=9, status="open")):
        change = definition_change(7, None, stored)
        assert change.outcome == "removed"
        assert change.effect == WriteDefinition(7, None)
        assert change.restates
        assert not change.releases_kept_price


def test_a_batch_is_decided_in_order_against_the_table_as_the_batch_leaves_it():
    plan = plan_table(
        [
            (1, definition_build(1, version=2)),
            (1, definition_build(1, version=1)),  # older than the one just written: stale
            (2, definition_build(2, version=5, status="suspended")),
            (2, None),
            (2, definition_build(2, version=1)),  # after a removal any version is new
            (3, definition_build(3, version=4)),
        ],
        {2: StoredDefinition(version=4, status="open"), 3: StoredDefinition(version=4, status="open")},
    )
    assert [c.outcome for c in plan.changes] == [
        "status_changed",
        "stale",
        "status_changed",
        "removed",
        "status_changed",
        "stale",
    ]
    assert plan.counts() == {"upserted": 3, "removed": 1, "stale": 2}
    assert plan.released == [1, 2, 3]
    assert plan.restated == [1, 2]


def test_the_plan_does_not_change_the_stored_table_it_was_given():
    stored = {1: StoredDefinition(version=1, status="open")}
    plan_table([(1, definition_build(1, version=2))], stored)
    assert stored == {1: StoredDefinition(version=1, status="open")}


# --- admission of prices of markets the table does not know ---


def test_prices_of_known_markets_are_applied_with_their_table_status():
    items = [item(1), item(2)]
    admission = admit(items, ["open", "suspended"], {})
    assert admission.applied == items
    assert admission.statuses == ["open", "suspended"]
    assert admission.kept == frozenset()


def test_a_price_of_an_unknown_market_is_kept_and_not_applied():
    items = [item(1), item(2)]
    statuses = ["open", None]
    assert unknown_items(items, statuses) == [item(2)]
    admission = admit(items, statuses, {2: None})
    assert admission.applied == [item(1)]
    assert admission.statuses == ["open"]
    assert admission.kept == frozenset({2})


def test_a_definition_written_between_the_lookup_and_the_keeping_admits_the_price_with_its_status():
    admission = admit([item(1), item(2)], [None, None], {1: "suspended", 2: None})
    assert admission.applied == [item(1)]
    assert admission.statuses == ["suspended"]
    assert admission.kept == frozenset({2})


# --- movers ---


def test_a_move_is_signed_and_truncated_toward_zero():
    assert move_bps(Decimal("2.00"), Decimal("2.10")) == 500
    assert move_bps(Decimal("2.00"), Decimal("1.90")) == -500
    assert move_bps(Decimal("3.00"), Decimal("3.01")) == 33


def test_a_market_scores_its_largest_absolute_move_in_each_window_with_the_selection_that_made_it():
    best = biggest_moves(
        [
            Movement(window_start=0, market_id=1, first=Decimal("2.00"), last=Decimal("2.10"), selection_id=11),
            Movement(window_start=0, market_id=1, first=Decimal("2.00"), last=Decimal("1.80"), selection_id=12),
            Movement(window_start=0, market_id=2, first=Decimal("5.00"), last=Decimal("5.00"), selection_id=21),
            Movement(window_start=60_000, market_id=1, first=Decimal("2.10"), last=Decimal("2.121"), selection_id=11),
        ]
    )
    assert best == {
        (0, 1): Move(12, Decimal("2.00"), Decimal("1.80"), -1000),
        (0, 2): Move(21, Decimal("5.00"), Decimal("5.00"), 0),
        (60_000, 1): Move(11, Decimal("2.10"), Decimal("2.121"), 100),
    }


def test_a_first_price_that_is_not_positive_is_left_out_instead_of_dividing_by_zero():
    best = biggest_moves(
        [
            Movement(window_start=0, market_id=1, first=Decimal("0"), last=Decimal("2.00")),
            Movement(window_start=0, market_id=2, first=Decimal("-1"), last=Decimal("2.00")),
            Movement(window_start=0, market_id=3, first=Decimal("2.00"), last=Decimal("2.02")),
        ]
    )
    assert list(best) == [(0, 3)]
    assert best[(0, 3)].bps == 100


def test_a_move_is_kept_and_read_back_exactly():
    move = Move(7, Decimal("3.35"), Decimal("2.875"), -1417)
    assert Move.decode(move.encode()) == move
    assert orjson.loads(move.encode()) == {"selection_id": 7, "first": "3.35", "last": "2.875", "bps": -1417}


def test_the_movers_frame_names_each_window_once_in_order():
    frame = orjson.loads(movers_frame([120_000, 60_000, 120_000], ts=5))
    assert frame == {"type": "desk.movers", "v": 1, "windows": [60_000, 120_000], "ts": 5}


def d(text: str) -> Decimal:
    return Decimal(text)


def test_a_batch_folds_into_each_markets_first_and_last_snapshot_per_window_whatever_the_order():
    snapshots = [
        (1, 2, 60_020, ((1, d("2.20")),)),
        (1, 1, 60_010, ((1, d("2.10")),)),
        (2, 1, 60_500, ((1, d("5.00")),)),
        (1, 4, 120_000, ((1, d("2.50")),)),  # the next window starts here
        (1, 3, 119_999, ((1, d("2.30")),)),
    ]
    folded = fold_partials(snapshots, window_ms=60_000)
    assert folded == {
        (60_000, 1): WindowPartial(60_000, 1, 1, ((1, d("2.10")),), 3, ((1, d("2.30")),), 119_999, 3),
        (60_000, 2): WindowPartial(60_000, 2, 1, ((1, d("5.00")),), 1, ((1, d("5.00")),), 60_500, 1),
        (120_000, 1): WindowPartial(120_000, 1, 4, ((1, d("2.50")),), 4, ((1, d("2.50")),), 120_000, 1),
    }


def test_partials_merge_in_any_order_to_the_same_window_and_a_redelivered_one_moves_nothing():
    early = WindowPartial(0, 1, 1, ((1, d("2.00")),), 2, ((1, d("2.10")),), 5, 2)
    late = WindowPartial(0, 1, 3, ((1, d("2.20")),), 5, ((1, d("2.60")),), 9, 3)
    [merged] = merge_all([late], [early])
    assert merged == WindowPartial(0, 1, 1, ((1, d("2.00")),), 5, ((1, d("2.60")),), 9, 5)
    assert merge_all([early, late]) == [merged]
    [again] = merge_all([early, late, late])
    assert (again.first, again.last) == (merged.first, merged.last)


def test_a_partial_survives_its_record_with_exact_prices():
    partial = WindowPartial(60_000, 7, 3, ((1, d("1.01")), (2, d("1000"))), 9, ((1, d("2.5")),), 61_000, 4)
    assert decode_partial(encode_partial(partial)) == partial
    assert b'"price":"1.01"' in encode_partial(partial)  # a decimal string, never a float


def test_a_window_moves_each_selection_in_both_its_first_and_last_snapshot():
    moves = window_movements(0, 1, ((1, d("2.00")), (2, d("3.00"))), ((2, d("3.30")), (3, d("9.00"))))
    assert moves == [Movement(window_start=0, market_id=1, first=d("3.00"), last=d("3.30"), selection_id=2)]
