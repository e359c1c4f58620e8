"""Per-subscriber views computed from market states: plain functions over plain data.

A market state is the document the price reducer stores and publishes (see
``reducers.prices.market_state``). Views never hold floats: prices and money are Decimal
strings on the wire.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import orjson

from reducers.betting import cash_out_value, combined_odds, potential_return
from reducers.subscriptions import SubscriptionSpec

VIEW_VERSION = 1


def _selection(states: dict[int, dict[str, Any]], market_id: int, selection_id: int) -> dict[str, Any] | None:
    state = states.get(market_id)
    if state is None:
        return None
    for selection in state["selections"]:
        if selection["id"] == selection_id:
            return selection
    return None


def _leg_open(states: dict[int, dict[str, Any]], market_id: int, selection: dict[str, Any] | None) -> bool:
    state = states.get(market_id)
    return bool(state and state.get("tradable") and selection and selection.get("status") == "active")


def slip_summary(spec: SubscriptionSpec, states: dict[int, dict[str, Any]]) -> dict[str, Any]:
    """Live legs of a bet slip with the accumulator's combined odds and potential return.

    A leg whose market has no state yet, or is suspended, blocks placement (``placeable``).
    Legs from the same event make an accumulator invalid; the API enforces that on placement.
    """
    legs = []
    prices: list[Decimal] = []
    placeable = True
    for leg in spec.slip:
        selection = _selection(states, leg.market_id, leg.selection_id)
        open_ = _leg_open(states, leg.market_id, selection)
        placeable = placeable and open_
        price = Decimal(selection["price"]) if selection else None
        if price is not None:
            prices.append(price)
        legs.append(
            {
                "selection_id": leg.selection_id,
                "market_id": leg.market_id,
                "price": str(price) if price is not None else None,
                "suspended": not open_,
            }
        )
    summary: dict[str, Any] = {"legs": legs, "placeable": placeable and bool(legs)}
    if len(prices) == len(spec.slip) and prices:
        odds = combined_odds(prices)
        summary["combined_odds"] = str(odds)
        if spec.stake is not None:
            summary["potential_return"] = str(potential_return(stake=spec.stake, prices=prices))
    return summary


def bets_summary(spec: SubscriptionSpec, states: dict[int, dict[str, Any]]) -> list[dict[str, Any]]:
    """Cash-out value of each open bet at the live prices; unavailable while a leg is suspended."""
    out = []
    for bet in spec.bets:
        current = []
        available = True
        for selection_id, market_id, _ in bet.legs:
            selection = _selection(states, market_id, selection_id)
            if selection is None or not _leg_open(states, market_id, selection):
                available = False
                break
            current.append(Decimal(selection["price"]))
        value = (
            cash_out_value(stake=bet.stake, accepted=[p for _, _, p in bet.legs], current=current)
            if available
            else None
        )
        out.append({"bet_id": bet.bet_id, "cash_out": str(value) if value is not None else None})
    return out


def view_summary(spec: SubscriptionSpec, states: dict[int, dict[str, Any]]) -> dict[str, Any] | None:
    if spec.view == "slip":
        return {"slip": slip_summary(spec, states)}
    if spec.view == "bets":
        return {"bets": bets_summary(spec, states)}
    return None


def view_frame(
    *,
    kind: str,
    channel_id: str,
    spec: SubscriptionSpec,
    changed: list[dict[str, Any]],
    states: dict[int, dict[str, Any]],
    resync: bool = False,
) -> bytes:
    """A channel frame without its sequence number (the publishing script stamps it).

    ``kind`` is ``image`` (every market of the channel) or ``delta`` (the markets that changed).
    """
    frame: dict[str, Any] = {
        "type": f"view.{kind}",
        "v": VIEW_VERSION,
        "channel": channel_id,
        "markets": changed,
    }
    if resync:
        frame["resync"] = True
    summary = view_summary(spec, states)
    if summary is not None:
        frame.update(summary)
    return orjson.dumps(frame)
