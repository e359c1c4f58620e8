"""Per-subscriber views computed from market states: plain functions over plain data.

A market state is the document the price reducer stores and publishes (see
``reducers.prices.market_state``). Views never hold floats: prices and money are Decimal
strings on the wire.

A view never fails its channel's fan-out, which publishes many channels in one micro-batch: a
slip or bet whose amounts cannot be computed exactly carries an ``error`` (``TOO_LARGE``), and a
summary that cannot be computed at all is left out of the frame, which then carries the error.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any, Literal

from reducers import frames
from reducers.betting import BetMathsError, cash_out_offer, combined_odds, live_leg, potential_return
from reducers.frames import (
    BetCashOut,
    ErrorBody,
    GameLeader,
    GameNews,
    GamePunter,
    GameQuestion,
    GameQuestionsFrame,
    GameRank,
    GameTopFrame,
    GameViewBody,
    MarketFrame,
    MatchFrameBody,
    MatchMessage,
    QueryFrameBody,
    SlipLegSummary,
    SlipSummary,
    ViewFrameBody,
)
from reducers.subscriptions import SubscriptionSpec

log = logging.getLogger(__name__)

VIEW_VERSION = 1
# ``error.code`` of a slip, a bet or a frame: the amounts are beyond the exact bet maths
# (reducers.betting.PRECISION), or the view's market states could not be read.
TOO_LARGE = "too_large"
VIEW_FAILED = "view_failed"


def _error(code: str, message: str) -> ErrorBody:
    return {"code": code, "message": message}


def _selection(states: Mapping[int, Mapping[str, Any]], market_id: int, selection_id: int) -> Mapping[str, Any] | None:
    state = states.get(market_id)
    if state is None:
        return None
    for selection in state["selections"]:
        if selection["id"] == selection_id:
            return selection
    return None


def _leg_open(states: Mapping[int, Mapping[str, Any]], market_id: int, selection: Mapping[str, Any] | None) -> bool:
    """Whether the live state lets the leg be backed, by the rule placement uses (``leg_verdict``)."""
    state = states.get(market_id)
    return state is not None and selection is not None and live_leg(state, selection["id"]).reason == ""


def slip_summary(spec: SubscriptionSpec, states: Mapping[int, Mapping[str, Any]]) -> SlipSummary:
    """Live legs of a bet slip with the accumulator's combined odds and potential return.

    A leg whose market has no state yet, or is suspended, blocks placement (``placeable``).
    Legs from the same event make an accumulator invalid; the API enforces that on placement.
    A slip whose odds or return cannot be computed exactly is not placeable and carries an
    ``error`` (``too_large``) in place of ``combined_odds`` and ``potential_return``.
    """
    legs: list[SlipLegSummary] = []
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
    summary: SlipSummary = {"legs": legs, "placeable": placeable and bool(legs)}
    if len(prices) == len(spec.slip) and prices:
        try:
            odds = str(combined_odds(prices))
            returns = None if spec.stake is None else str(potential_return(stake=spec.stake, prices=prices))
        except BetMathsError:
            summary["placeable"] = False
            summary["error"] = _error(TOO_LARGE, "the slip's odds or return are too large to compute exactly")
        else:
            summary["combined_odds"] = odds
            if returns is not None:
                summary["potential_return"] = returns
    return summary


def bets_summary(spec: SubscriptionSpec, states: Mapping[int, Mapping[str, Any]]) -> list[BetCashOut]:
    """Cash-out value of each open bet at the live prices, by ``reducers.betting.cash_out_offer``
    (the rule the REST quote follows too): won legs count as settled at 1.00, void legs at 1.00
    on both sides; ``null`` when a leg is lost or an undecided leg has no live price (its market
    suspended or closed), and also, with an ``error`` (``too_large``), when the value cannot be
    computed exactly."""
    out: list[BetCashOut] = []
    for bet in spec.bets:
        legs = []
        for leg in bet.legs:
            selection = _selection(states, leg.market_id, leg.selection_id)
            open_ = selection is not None and _leg_open(states, leg.market_id, selection)
            live = Decimal(selection["price"]) if open_ and selection is not None else None
            legs.append((leg.result, leg.price, live))
        entry: BetCashOut = {"bet_id": bet.bet_id, "cash_out": None}
        try:
            value = cash_out_offer(stake=bet.stake, legs=legs)
        except BetMathsError:
            entry["error"] = _error(TOO_LARGE, "the bet's cash-out value is too large to compute exactly")
        else:
            entry["cash_out"] = str(value) if value is not None else None
        out.append(entry)
    return out


def view_summary(frame: ViewFrameBody, spec: SubscriptionSpec, states: Mapping[int, Mapping[str, Any]]) -> None:
    """Add the view's summary to the frame: ``slip`` for a slip view, ``bets`` for a bets view."""
    if spec.view == "slip":
        frame["slip"] = slip_summary(spec, states)
    elif spec.view == "bets":
        frame["bets"] = bets_summary(spec, states)


def view_frame(
    *,
    kind: Literal["image", "delta"],
    channel_id: str,
    spec: SubscriptionSpec,
    changed: list[MarketFrame],
    states: Mapping[int, Mapping[str, Any]],
    resync: bool = False,
    matches: list[MatchMessage] | None = None,
    since: bool = False,
) -> bytes:
    """A channel frame without its sequence number (the publishing script stamps it).

    ``kind`` is ``image`` (every market of the channel) or ``delta`` (the markets that changed).
    An image asked for ``since`` what the client holds carries only the markets that moved since,
    and says so (``"since": true``).
    An image carries ``matches``: the match state of the events of its markets.
    Never raises for the view's data: a summary that cannot be computed (a market state it
    cannot read) is left out and the frame carries ``error`` (``view_failed``) instead.
    """
    frame: ViewFrameBody = {
        "type": "view.image" if kind == "image" else "view.delta",
        "v": VIEW_VERSION,
        "channel": channel_id,
        "markets": changed,
    }
    if resync:
        frame["resync"] = True
    if since:
        frame["since"] = True
    if matches is not None:
        frame["matches"] = matches
    try:
        view_summary(frame, spec, states)
    except (ArithmeticError, LookupError, TypeError, ValueError):
        # One channel's bad data must not fail the micro-batch that fans out to every channel.
        log.exception("channel %s: %s view not computed", channel_id, spec.view)
        frame["error"] = _error(VIEW_FAILED, f"the {spec.view} view could not be computed")
    return frames.encode(frame)


# The ``view`` recorded for a shared query channel: its frames name markets, never price them.
QUERY_VIEW = "query"


def query_frame(
    *,
    channel_id: str,
    markets: list[int] | None = None,
    added: Iterable[int] = (),
    removed: Iterable[int] = (),
    changed: Iterable[int] = (),
) -> bytes:
    """A shared query channel's frame without its sequence number: an image of every market it
    holds (``markets`` given), or the markets that joined, left, or changed in what an event list
    shows of them."""
    frame: QueryFrameBody = {"type": "view.query", "v": VIEW_VERSION, "channel": channel_id}
    if markets is not None:
        frame["image"] = True
        frame["markets"] = markets
    else:
        frame["added"] = sorted(added)
        frame["removed"] = sorted(removed)
        frame["changed"] = sorted(changed)
    return frames.encode(frame)


def match_frame(*, channel_id: str, matches: list[MatchMessage]) -> bytes:
    """A channel frame carrying new match states (``match`` messages) of the channel's events,
    without its sequence number (the publishing script stamps it)."""
    frame: MatchFrameBody = {"type": "view.match", "v": VIEW_VERSION, "channel": channel_id, "matches": matches}
    return frames.encode(frame)


# --- the predictor game ---


def game_me(doc: GamePunter, event_id: int) -> GamePunter:
    """A punter's game state as one event's game view shows it: the event's answers and points,
    the day's points, the streak and counts."""
    event = str(event_id)
    return {
        **doc,
        "matches": {e: p for e, p in doc["matches"].items() if e == event},
        "answers": {q: a for q, a in doc["answers"].items() if a["event_id"] == event_id},
    }


def game_view_frame(
    *,
    kind: Literal["image", "delta"],
    channel_id: str,
    event_id: int,
    me: GamePunter | None = None,
    news: list[GameNews] | None = None,
    rank: GameRank | None = None,
    questions: list[GameQuestion] | None = None,
    top: list[GameLeader] | None = None,
    resync: bool = False,
) -> bytes:
    """A game channel's frame without its sequence number (the publishing script stamps it). An
    image carries everything (``me`` null before the punter's first answer); a delta what
    changed."""
    frame: GameViewBody = {
        "type": "game.image" if kind == "image" else "game.delta",
        "v": VIEW_VERSION,
        "channel": channel_id,
        "event_id": event_id,
    }
    if kind == "image" or me is not None:
        frame["me"] = None if me is None else game_me(me, event_id)
    if news:
        frame["news"] = [n for n in news if n["event_id"] == event_id]
    if rank is not None:
        frame["rank"] = rank
    if questions is not None:
        frame["questions"] = questions
    if top is not None:
        frame["top"] = top
    if resync:
        frame["resync"] = True
    return frames.encode(frame)


def game_questions_frame(*, event_id: int, questions: list[GameQuestion], batch: int) -> bytes:
    """The event's public game frame of questions that changed."""
    frame: GameQuestionsFrame = {
        "type": "game.questions",
        "v": VIEW_VERSION,
        "event_id": event_id,
        "questions": questions,
        "batch": batch,
    }
    return frames.encode(frame)


def game_top_frame(*, event_id: int, top: list[GameLeader], players: int, batch: int) -> bytes:
    """The event's public game frame of its leaderboard's top."""
    frame: GameTopFrame = {
        "type": "game.top",
        "v": VIEW_VERSION,
        "event_id": event_id,
        "top": top,
        "players": players,
        "batch": batch,
    }
    return frames.encode(frame)
