from decimal import Decimal

import pytest

from reducers import frames
from reducers.liability import (
    MarketBook,
    MarketNames,
    SelectionTotal,
    aggregate,
    books_of,
    event_worst,
    liability_deltas,
    liability_frame,
    market_book_frame,
    outcome_deltas,
    ticker_frame,
)
from reducers.schemas import BetEvent, BetLeg
from store import keys
from tests.factories import bet_event_build as event
from tests.fakes import fake_store_client


@pytest.fixture
def fake_store():
    return fake_store_client()


def test_a_placed_single_adds_its_net_payout():
    [delta] = liability_deltas(event("placed", event_id="e1"))
    assert (delta.selection_id, delta.pence, delta.bets) == (1, 1500, 1)


def test_void_cash_out_and_settlement_subtract_again():
    for kind in ("voided", "cashed_out", "settled"):
        [delta] = liability_deltas(event(kind, event_id="e2"))
        assert (delta.pence, delta.bets) == (-1500, -1)


def test_a_pending_rejected_offered_or_resettled_bet_changes_no_book():
    for kind in ("pending", "rejected", "offered", "resettled"):
        held = event(kind, event_id=f"1:{kind}", legs=((1, "2.00"), (2, "3.00")))
        assert liability_deltas(held) == []
        assert outcome_deltas(held) == []
        assert books_of([held]) == {}
        assert aggregate([held]) == {}


def test_a_settled_bet_a_corrected_result_opens_again_is_back_in_the_book_until_it_settles_again():
    """docs/resettlement.md: ``reopened`` adds the bet's exposure back; its next settlement (an
    event id of its own) takes it away again."""
    events = [
        event("placed", event_id="1:placed", bet_id=1),
        event("settled", event_id="1:settled", bet_id=1),
        event("reopened", event_id="1:reopened:1", bet_id=1, reason="result corrected: lost → open again"),
    ]
    assert aggregate(events) == {1: SelectionTotal((("GBP", 1500),), 1)}
    settled_again = event("settled", event_id="1:settled:reopened1", bet_id=1)
    assert aggregate([*events, settled_again]) == {1: SelectionTotal((), 0)}


def test_a_bet_held_then_accepted_counts_once_and_a_refused_one_never():
    events = [
        event("pending", event_id="1:pending", bet_id=1, until=5_000),
        event("placed", event_id="1:placed", bet_id=1),
        event("pending", event_id="2:pending", bet_id=2, until=5_000),
        event("rejected", event_id="2:rejected", bet_id=2, reason="the price moved from 2.50 to 2.20"),
    ]
    assert aggregate(events) == {1: SelectionTotal((("GBP", 1500),), 1)}
    [book] = books_of(events).values()
    assert (book.staked, book.bets) == ((("GBP", 1000),), 1)


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
    assert totals == {1: SelectionTotal((("GBP", 600),), 1)}


# --- liability per outcome (docs/liability.md) ---


def leg_event(
    kind: str,
    *,
    event_id: str,
    bet_id: int,
    stake: str,
    legs: tuple[tuple[int, int, int, str], ...],
    currency: str = "GBP",
):
    """A bet event in ``currency`` whose legs are (selection, market, event, price); return =
    stake times the prices."""
    ret = Decimal(stake)
    for *_, price in legs:
        ret *= Decimal(price)
    return BetEvent(
        event_id=event_id,
        type=kind,
        bet_id=bet_id,
        user_id=7,
        stake=Decimal(stake),
        potential_return=ret.quantize(Decimal("0.01")),
        legs=tuple(BetLeg(selection_id=s, market_id=m, event_id=e, price=Decimal(p)) for s, m, e, p in legs),
        ts=1,
        currency=currency,
    )


ARSENAL, DRAW, CHELSEA = 11, 12, 13  # market 1 of event 100
LAKERS, CELTICS = 21, 22  # market 2 of event 200


def worked_example() -> list[BetEvent]:
    """docs/liability.md's example: a double across two events and two singles."""
    return [
        leg_event(
            "placed", event_id="d", bet_id=1, stake="10.00", legs=((ARSENAL, 1, 100, "2.00"), (LAKERS, 2, 200, "1.50"))
        ),
        leg_event("placed", event_id="s1", bet_id=2, stake="20.00", legs=((ARSENAL, 1, 100, "2.00"),)),
        leg_event("placed", event_id="s2", bet_id=3, stake="10.00", legs=((DRAW, 1, 100, "3.50"),)),
    ]


def test_a_single_keeps_the_markets_stakes_and_pays_its_outcomes_return():
    book = books_of(worked_example()[1:])[1]
    figures = book.figures({})
    assert (figures.staked, book.bets) == (3000, 2)
    assert [figures.pl(s) for s in (ARSENAL, DRAW, CHELSEA)] == [-1000, -500, 3000]


def test_a_double_counts_its_whole_stake_and_return_on_each_of_its_markets():
    books = books_of(worked_example())
    assert [books[1].figures({}).pl(s) for s in (ARSENAL, DRAW, CHELSEA)] == [-3000, 500, 4000]
    assert [books[2].figures({}).pl(s) for s in (LAKERS, CELTICS)] == [-2000, 1000]


def test_the_worst_outcome_is_the_selection_that_returns_most():
    books = books_of(worked_example())
    first, second = books[1].figures({}), books[2].figures({})
    assert (first.worst, first.worst_selection) == (-3000, ARSENAL)
    assert (second.worst, second.worst_selection) == (-2000, LAKERS)


def test_an_event_worst_case_sums_its_markets_worst_outcomes():
    second = leg_event("placed", event_id="s3", bet_id=4, stake="5.00", legs=((31, 3, 100, "4.00"),))
    books = books_of([*worked_example(), second])
    assert event_worst([b for b in books.values() if b.event_id == 100], {}) == -3000 + (500 - 2000)


def test_a_market_with_nobody_paid_on_any_outcome_keeps_its_whole_stake():
    figures = MarketBook(market_id=1, event_id=1, staked=(("GBP", 1000),), bets=1, returns=()).figures({})
    assert (figures.worst, figures.worst_selection) == (1000, None)


def test_settling_voiding_or_cashing_out_every_bet_removes_the_market_book():
    placed = worked_example()
    closing = [
        leg_event(
            kind,
            event_id=f"{kind}{e.bet_id}",
            bet_id=e.bet_id,
            stake=str(e.stake),
            legs=tuple((leg.selection_id, leg.market_id, leg.event_id, str(leg.price)) for leg in e.legs),
        )
        for kind, e in zip(("settled", "voided", "cashed_out"), placed, strict=True)
    ]
    assert books_of([*placed, *closing]) == {}


def test_a_redelivered_bet_event_moves_the_book_once():
    once = books_of(worked_example())
    assert books_of([*worked_example(), *worked_example()]) == once


def test_amounts_are_integer_pence_never_floats():
    [delta] = outcome_deltas(leg_event("placed", event_id="p", bet_id=1, stake="0.10", legs=((1, 1, 1, "1.01"),)))
    assert (delta.staked, delta.returns) == (10, 10)
    assert all(type(v) is int for v in (delta.staked, delta.returns, delta.bets))


def test_the_store_script_and_the_decision_agree_on_every_book(fake_store):
    from store.liability import BookChange, BookStore

    events = [
        *worked_example(),
        leg_event("placed", event_id="s4", bet_id=5, stake="3.00", legs=((CELTICS, 2, 200, "2.40"),)),
        leg_event("voided", event_id="v2", bet_id=2, stake="20.00", legs=((ARSENAL, 1, 100, "2.00"),)),
    ]
    store = BookStore(fake_store)
    changes = [BookChange(e.event_id, liability_deltas(e), outcome_deltas(e), b"{}") for e in [*events, events[0]]]
    assert store.apply(changes, seen_ttl_s=60) == [1, 1, 1, 1, 1, 0]
    stored, worsts, rates = store.books([1, 2])
    expected = books_of(events)
    first, second = expected[1].figures(rates), expected[2].figures(rates)
    assert stored == expected
    assert worsts == {100: first.worst, 200: second.worst}
    assert store.riskiest_events(limit=5) == [(200, second.worst), (100, first.worst)]  # largest loss first
    assert fake_store.hget(keys.market_book(1), "worst_sel") == str(first.worst_selection).encode()


def test_a_ticker_frame_names_each_leg_from_the_markets_table():
    double = worked_example()[0]
    names = {
        1: MarketNames(
            sport="football",
            event="Arsenal v Chelsea",
            market="Match result",
            in_play=True,
            selections=((ARSENAL, "Arsenal"), (DRAW, "Draw"), (CHELSEA, "Chelsea")),
        )
    }
    frame = ticker_frame(double, names=names, reducer_ts=5, rates={})
    assert frames.SERVER_FRAME.validate_python(frame) == frame
    assert (frame["kind"], frame["stake"], frame["potential_return"]) == ("placed", "10.00", "30.00")
    first, second = frame["legs"]
    assert (first["event"], first["selection"], first["in_play"]) == ("Arsenal v Chelsea", "Arsenal", True)
    assert (second["market"], second["selection"], second["in_play"]) == ("", "", False)
    assert (frame["reason"], frame["until"]) == ("", None)


def test_a_ticker_frame_carries_a_refusal_reason_and_a_pending_bets_decision_time():
    refused = event("rejected", event_id="7:rejected", bet_id=7, reason='the price moved from 2.50 to 2.20 on "Home"')
    frame = ticker_frame(refused, names={}, reducer_ts=5, rates={})
    assert frames.SERVER_FRAME.validate_python(frame) == frame
    assert (frame["kind"], frame["reason"], frame["until"]) == (
        "rejected",
        'the price moved from 2.50 to 2.20 on "Home"',
        None,
    )
    held = ticker_frame(
        event("pending", event_id="8:pending", bet_id=8, until=1_700_000_005_000), names={}, reducer_ts=5, rates={}
    )
    assert (held["kind"], held["reason"], held["until"]) == ("pending", "", 1_700_000_005_000)


def test_a_market_frame_lists_every_named_outcome_with_its_pl():
    book = books_of(worked_example())[1]
    names = MarketNames(selections=((ARSENAL, "Arsenal"), (DRAW, "Draw"), (CHELSEA, "Chelsea")))
    body = market_book_frame(book, names=names, event_worst=-3000, rates={})
    assert [(o["name"], o["pl"]) for o in body["outcomes"]] == [("Arsenal", -3000), ("Draw", 500), ("Chelsea", 4000)]
    assert (body["worst"], body["worst_selection"], body["staked"]) == (-3000, ARSENAL, 4000)
    frame = liability_frame([body], ts=1)
    assert frames.SERVER_FRAME.validate_python(frame) == frame


def test_a_restore_replaces_every_book_and_ranking_with_the_open_bets_figures(fake_store):
    from store.liability import BookChange, BookStore

    store = BookStore(fake_store)
    stale = leg_event("placed", event_id="old", bet_id=9, stake="1.00", legs=((41, 4, 400, "9.00"),))
    store.apply([BookChange(stale.event_id, [], outcome_deltas(stale), b"{}")], seen_ttl_s=60)
    expected = books_of(worked_example())
    store.replace(expected)
    assert store.books([1, 2, 4]) == (
        {**expected, 4: MarketBook(4, 0)},
        {100: -3000, 200: -2000},
        {},
    )
    assert store.riskiest_events(limit=5) == [(100, -3000), (200, -2000)]
    assert fake_store.hget(keys.market_book(1), "worst_sel") == str(ARSENAL).encode()
