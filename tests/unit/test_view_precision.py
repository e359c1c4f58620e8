"""Slip and bet views are exact to the penny for everything the control API accepts, and a view
that cannot be computed is flagged in its frame instead of failing the channel fan-out.

Found by the API fuzzing: the reducers rounded a slip's combined odds and potential return in the
default decimal context (28 significant digits), so a slip of ten legs at 500.00, which the API
accepts, made ``view_frame`` raise ``InvalidOperation`` in the fan-out and failed the micro-batch.
The oracle below is exact rational arithmetic."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import orjson
from hypothesis import given
from hypothesis import strategies as st

from reducers.betting import MAX_LEGS
from reducers.rules import SLIP_VIEW_MAX_STAKE as MAX_STAKE
from reducers.subscriptions import spec_from_json
from reducers.views import TOO_LARGE, VIEW_FAILED, slip_summary, view_frame

MAX_BET_STAKE_PENNIES = 1_000_000  # a claimed bet's stake, at most 10000.00 through the API
CHANNEL = "c" * 32


def _text(coefficient: int, places: int) -> str:
    """``coefficient`` * 10**-places as a plain decimal string, without a decimal context."""
    if places == 0:
        return str(coefficient)
    digits = str(coefficient).rjust(places + 1, "0")
    return f"{digits[:-places]}.{digits[-places:]}"


def _pennies(value: Fraction, *, half_up: bool = False) -> str:
    """The exact value to two places: rounded down, or half up."""
    return _text(math.floor(value * 100 + (Fraction(1, 2) if half_up else 0)), 2)


def _slip_states(prices: list[str]) -> dict[int, dict[str, Any]]:
    return {
        i: {"market_id": i, "tradable": True, "selections": [{"id": i, "price": price, "status": "active"}]}
        for i, price in enumerate(prices, start=1)
    }


def _slip_spec(legs: int, stake: str | None) -> Any:
    return spec_from_json(
        {"view": "slip", "slip": [{"selection_id": i, "market_id": i} for i in range(1, legs + 1)], "stake": stake}
    )


def _frame(spec: Any, states: dict[int, dict[str, Any]]) -> dict[str, Any]:
    return orjson.loads(view_frame(kind="image", channel_id=CHANNEL, spec=spec, changed=[], states=states))


# Prices the schemas admit (1.01 to 1000 at two places), often the longest ones.
prices = st.one_of(st.integers(101, 100_000), st.integers(99_000, 100_000)).map(lambda c: _text(c, 2))
# Stakes the spec reader accepts up to the slip's maximum, pennies or finer.
stakes = st.integers(0, 30).flatmap(
    lambda places: st.integers(0, int(MAX_STAKE) * 10**places).map(lambda c: _text(c, places))
)


def test_a_slip_of_ten_long_prices_is_summarised_to_the_penny():
    summary = slip_summary(_slip_spec(10, "10.00"), _slip_states(["500.00"] * 10))
    assert summary["placeable"] is True
    assert summary["combined_odds"] == str(500**10) + ".00"
    assert summary["potential_return"] == str(10 * 500**10) + ".00"


@given(legs=st.lists(prices, min_size=1, max_size=MAX_LEGS), stake=st.none() | stakes)
def test_slip_frames_are_exact_to_the_penny_up_to_the_apis_limits(legs, stake):
    slip = _frame(_slip_spec(len(legs), stake), _slip_states(legs))["slip"]
    odds = math.prod((Fraction(price) for price in legs), start=Fraction(1))
    assert "error" not in slip
    assert slip["placeable"] is True
    assert slip["combined_odds"] == _pennies(odds, half_up=True)
    if stake is None:
        assert "potential_return" not in slip
    else:
        assert slip["potential_return"] == _pennies(Fraction(stake) * odds)


@given(
    accepted=st.lists(prices, min_size=1, max_size=MAX_LEGS),
    live=st.data(),
    stake=st.integers(0, MAX_BET_STAKE_PENNIES).map(lambda c: _text(c, 2)),
)
def test_cash_out_frames_are_exact_to_the_penny(accepted, live, stake):
    current = live.draw(st.lists(prices, min_size=len(accepted), max_size=len(accepted)))
    legs = [{"selection_id": i, "market_id": i, "price": price} for i, price in enumerate(accepted, start=1)]
    spec = spec_from_json({"view": "bets", "bets": [{"bet_id": 7, "stake": stake, "legs": legs}]})
    (bet,) = _frame(spec, _slip_states(current))["bets"]
    returned = Fraction(_pennies(Fraction(stake) * math.prod(Fraction(p) for p in accepted)))
    fair = returned * Fraction(95, 100) / math.prod(Fraction(p) for p in current)
    assert bet == {"bet_id": 7, "cash_out": _pennies(fair)}


def test_a_slip_beyond_the_exact_maths_is_flagged_not_placeable():
    # 30 legs (more than the API takes) of 999.99: the product has 150 significant digits.
    frame = _frame(_slip_spec(30, "10.00"), _slip_states(["999.99"] * 30))
    slip = frame["slip"]
    assert slip["error"]["code"] == TOO_LARGE
    assert slip["placeable"] is False
    assert "combined_odds" not in slip
    assert "potential_return" not in slip
    assert [leg["price"] for leg in slip["legs"]] == ["999.99"] * 30


def test_a_bet_beyond_the_exact_maths_has_no_cash_out_and_an_error():
    # A claimed stake the API refuses, as a command from elsewhere could still carry it.
    legs = [{"selection_id": 1, "market_id": 1, "price": "2.00"}]
    spec = spec_from_json({"view": "bets", "bets": [{"bet_id": 7, "stake": "1E+200", "legs": legs}]})
    (bet,) = _frame(spec, _slip_states(["2.00"]))["bets"]
    assert bet["cash_out"] is None
    assert bet["error"]["code"] == TOO_LARGE


def test_a_view_over_an_unreadable_market_state_is_an_error_frame():
    states = _slip_states(["2.00"])
    states[1]["selections"][0]["price"] = None
    frame = _frame(_slip_spec(1, "10.00"), states)
    assert frame["error"]["code"] == VIEW_FAILED
    assert "slip" not in frame
    assert frame["channel"] == CHANNEL
