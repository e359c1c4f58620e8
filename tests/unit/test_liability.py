from reducers.liability import aggregate, liability_deltas
from tests.factories import bet_event_build as event


def test_a_placed_single_adds_its_net_payout():
    [delta] = liability_deltas(event("placed", event_id="e1"))
    assert (delta.selection_id, delta.pence, delta.bets) == (1, 1500, 1)


def test_void_cash_out_and_settlement_subtract_again():
    for kind in ("voided", "cashed_out", "settled"):
        [delta] = liability_deltas(event(kind, event_id="e2"))
        assert (delta.pence, delta.bets) == (-1500, -1)


def test_an_accumulator_counts_in_full_on_each_leg():
    deltas = liability_deltas(event("placed", event_id="e3", legs=((1, "2.00"), (2, "3.00"))))
    assert [(d.selection_id, d.pence) for d in deltas] == [(1, 5000), (2, 5000)]


def test_adder_then_subtractor_nets_to_zero_and_duplicates_count_once():
    totals = aggregate(
        [
            event("placed", event_id="a", bet_id=1),
            event("placed", event_id="a", bet_id=1),
            event("placed", event_id="b", bet_id=2, stake="4.00"),
            event("voided", event_id="c", bet_id=1),
        ]
    )
    assert totals == {1: (600, 1)}
