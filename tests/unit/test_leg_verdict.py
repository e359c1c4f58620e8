"""Whether a leg can be backed: one rule for placement, the in-play delay, cash-out quotes and
the reducers' views (reducers.betting)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from reducers.betting import (
    LIVE_STALE,
    leg_verdict,
    live_leg,
    live_state_fresh,
    price_acceptable,
)

pytestmark = pytest.mark.unit

OPEN = {"event_status": "scheduled", "market_status": "open", "selection_status": "active"}


def state(*, status: str = "open", tradable: bool = True, selection: str = "active", price: str = "2.10") -> dict:
    return {"status": status, "tradable": tradable, "selections": [{"id": 7, "price": price, "status": selection}]}


def test_the_catalogues_statuses_come_before_the_live_states_word():
    assert leg_verdict(**{**OPEN, "market_status": "suspended"}, live="market_closed").code == "market_suspended"
    assert leg_verdict(**{**OPEN, "event_status": "finished"}).code == "market_closed"
    assert leg_verdict(**{**OPEN, "selection_status": "removed"}).code == "selection_unavailable"
    assert leg_verdict(**OPEN, live="market_suspended").code == "market_suspended"
    assert leg_verdict(**OPEN).backable


def test_a_stale_live_state_counts_as_a_suspension_with_its_own_words():
    verdict = leg_verdict(**OPEN, live=LIVE_STALE)
    assert verdict.code == "market_suspended"
    assert "not current" in verdict.message


def test_the_live_state_says_suspended_closed_or_gone():
    assert live_leg(state(tradable=False), 7).reason == "market_suspended"
    assert live_leg(state(status="closed", tradable=False), 7).reason == "market_suspended"
    assert live_leg(state(status="closed", tradable=True), 7).reason == "market_closed"
    assert live_leg(state(selection="removed"), 7).reason == "selection_unavailable"
    assert live_leg(state(), 7).price == Decimal("2.10")
    assert live_leg(state(), 7, fresh=False).reason == LIVE_STALE
    assert live_leg(None, 7).price is None
    assert live_leg(state(price="NaN"), 7).price is None


def test_freshness_is_the_states_own_time_or_the_pipes_sign_of_life():
    old = {"ts": {"reducer": 1_000}}
    assert not live_state_fresh(state=old, pipe_seen_ms=0, now_ms=20_000, max_age_ms=15_000)
    assert live_state_fresh(state=old, pipe_seen_ms=10_000, now_ms=20_000, max_age_ms=15_000)
    assert live_state_fresh(state={"ts": {"decided": 19_000}}, pipe_seen_ms=0, now_ms=20_000, max_age_ms=15_000)
    assert not live_state_fresh(state={}, pipe_seen_ms=0, now_ms=20_000, max_age_ms=15_000)


@pytest.mark.parametrize(
    ("policy", "lower", "same", "higher"),
    [("none", False, True, False), ("better", False, True, True), ("any", True, True, True)],
)
def test_each_price_policy_accepts_its_moves(policy, lower, same, higher):
    seen = Decimal("2.00")
    assert [price_acceptable(seen=seen, current=Decimal(c), policy=policy) for c in ("1.90", "2.00", "2.10")] == [
        lower,
        same,
        higher,
    ]
