import orjson

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


def test_frame_has_no_sequence_until_stamped_and_flags_resync():
    frame = orjson.loads(view_frame(kind="image", channel_id="c" * 32, spec=SLIP, changed=[], states={}, resync=True))
    assert frame["type"] == "view.image"
    assert frame["resync"] is True
    assert "seq" not in frame
