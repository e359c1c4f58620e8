from decimal import Decimal

import orjson
import pytest

from reducers.betting import cash_out_offer
from reducers.schemas import InvalidRecord
from reducers.subscriptions import spec_from_json
from reducers.views import bets_summary, slip_summary, view_frame


def state(market_id: int, *prices: str, tradable: bool = True, seq: int = 1) -> dict:
    return {
        "type": "market",
        "market_id": market_id,
        "seq": seq,
        "status": "open" if tradable else "suspended",
        "tradable": tradable,
        "selections": [{"id": i + 1, "price": p, "status": "active"} for i, p in enumerate(prices)],
    }


SLIP = spec_from_json(
    {
        "view": "slip",
        "slip": [{"selection_id": 1, "market_id": 10}, {"selection_id": 2, "market_id": 20}],
        "stake": "5.00",
    }
)


def test_slip_combines_live_prices_into_accumulator_odds_and_return():
    summary = slip_summary(SLIP, {10: state(10, "2.10", "3.00"), 20: state(20, "1.50", "1.95")})
    assert summary["combined_odds"] == "4.10"
    assert summary["potential_return"] == "20.47"
    assert summary["placeable"] is True


def test_a_suspended_leg_blocks_placement():
    summary = slip_summary(SLIP, {10: state(10, "2.10"), 20: state(20, "1.50", "1.95", tradable=False)})
    assert summary["placeable"] is False
    assert [leg["suspended"] for leg in summary["legs"]] == [False, True]


def test_a_leg_without_a_live_price_has_no_combined_odds():
    summary = slip_summary(SLIP, {10: state(10, "2.10")})
    assert "combined_odds" not in summary
    assert summary["placeable"] is False


def test_cash_out_follows_live_prices_and_is_withheld_while_suspended():
    spec = spec_from_json(
        {
            "view": "bets",
            "bets": [{"bet_id": 1, "stake": "10.00", "legs": [{"selection_id": 1, "market_id": 10, "price": "3.00"}]}],
        }
    )
    shortened = bets_summary(spec, {10: state(10, "2.00")})
    drifted = bets_summary(spec, {10: state(10, "4.00")})
    assert shortened == [{"bet_id": 1, "cash_out": "14.25"}]
    assert drifted == [{"bet_id": 1, "cash_out": "7.12"}]
    assert bets_summary(spec, {10: state(10, "2.00", tradable=False)}) == [{"bet_id": 1, "cash_out": None}]


def accumulator(*results: str) -> object:
    legs = [
        {"selection_id": 1, "market_id": 10, "price": "2.00", "result": results[0]},
        {"selection_id": 2, "market_id": 20, "price": "3.00", "result": results[1]},
    ]
    return spec_from_json({"view": "bets", "bets": [{"bet_id": 9, "stake": "10.00", "legs": legs}]})


# The first leg's market is closed (resulted): only the second leg has a live price.
AFTER_FIRST_LEG = {10: state(10, "2.00", tradable=False), 20: state(20, "1.00", "1.50")}


def test_an_accumulator_with_a_won_leg_still_offers_cash_out_counting_the_leg_at_evens():
    # Return 10 x 2.00 x 3.00 = 60.00 over the live 1.50 of the last leg, less the 5 % margin.
    assert bets_summary(accumulator("won", "undecided"), AFTER_FIRST_LEG) == [{"bet_id": 9, "cash_out": "38.00"}]


def test_a_void_leg_counts_at_evens_on_both_sides_of_the_cash_out():
    # Return 10 x 1.00 x 3.00 = 30.00 over 1.50, less the margin.
    assert bets_summary(accumulator("void", "undecided"), AFTER_FIRST_LEG) == [{"bet_id": 9, "cash_out": "19.00"}]


def test_an_accumulator_with_a_lost_leg_has_no_cash_out():
    assert bets_summary(accumulator("lost", "undecided"), AFTER_FIRST_LEG) == [{"bet_id": 9, "cash_out": None}]


def test_an_undecided_leg_on_a_closed_market_withholds_the_cash_out():
    assert bets_summary(accumulator("undecided", "undecided"), AFTER_FIRST_LEG) == [{"bet_id": 9, "cash_out": None}]


@pytest.mark.parametrize("results", [("won", "undecided"), ("void", "undecided"), ("lost", "undecided")])
def test_the_streamed_cash_out_is_the_rest_quotes_rule(results):
    expected = cash_out_offer(
        stake=Decimal("10.00"),
        legs=[(results[0], Decimal("2.00"), None), (results[1], Decimal("3.00"), Decimal("1.50"))],
    )
    [entry] = bets_summary(accumulator(*results), AFTER_FIRST_LEG)
    assert entry["cash_out"] == (str(expected) if expected is not None else None)


def test_a_leg_result_outside_the_known_ones_is_refused():
    with pytest.raises(InvalidRecord, match="result"):
        accumulator("half-won", "undecided")


def test_frame_has_no_sequence_until_stamped_and_flags_resync():
    frame = orjson.loads(view_frame(kind="image", channel_id="c" * 32, spec=SLIP, changed=[], states={}, resync=True))
    assert frame["type"] == "view.image"
    assert frame["resync"] is True
    assert "seq" not in frame
