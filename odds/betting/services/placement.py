"""Bet placement: the one service both ways of placing a bet call (``bet_place``).

A bet is placed by the database function ``sb_bet_place`` (odds/betting/sql/) in a single round
trip: it locks the wallet, answers a repeated idempotency key, checks the legs against the
catalogue (by the leg verdicts, ``reducers.betting.leg_verdict``), and writes the bet, its legs,
the ledger entry and the outbox event. What it needs from outside the database is the live
quote of every leg: the reducers' state in Redis (or a trader's decision they have not applied
yet), read before the call, and judged here by the same rule.

``bet_place`` is asynchronous and does its I/O through a ``PlacementIO``: the API's event-loop
endpoint (``odds.api.placement``) gives it its asyncio pool and Redis client;
``odds.betting.services.bets.bet_place`` runs it for the Django view, the admin and the tests
on Django's connection (``DjangoPlacementIO``). The attempt is counted against the punter's rate
limit by the caller, before any of this (``bet_attempt_count``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, Protocol

import orjson

from odds.betting.models import Bet, BetLeg
from odds.betting.play import PlayState, play_refusal
from odds.betting.selectors.play import play_state_of
from odds.betting.services.wallet import exclusion_message
from odds.catalogue.models import Event, Market, Selection
from odds.catalogue.selectors.prices import LiveStates
from reducers import betting, limits, rules, schemas, topics, trading

MIN_STAKE = rules.MIN_STAKE
MAX_STAKE = rules.MAX_STAKE
MAX_RETURN = rules.MAX_RETURN
MAX_LEGS = rules.MAX_LEGS
MAX_KEY_LENGTH = 64
# A signed-up punter bets once their email is verified (the wallet's ``email_unverified``).
EMAIL_UNVERIFIED_MESSAGE = (
    "Verify your email address before you bet: follow the link we mailed you (Account: email sends a new one)."
)

# The answer as text, parsed with orjson whichever driver runs it (Django reads jsonb as text).
PLACE_SQL = "SELECT sb_bet_place(%s, %s, %s, %s, %s::integer[], %s, %s::jsonb, %s, %s, %s, %s)::text"
SELECTION_MARKETS_SQL = "SELECT id, market_id FROM odds_selection WHERE id = ANY(%s)"


class BetInvalid(Exception):
    """The request is malformed or breaks a rule of the bet itself; nothing was recorded."""

    def __init__(self, *, field: str, message: str, code: str = "invalid", extra: dict[str, Any] | None = None) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message
        self.code = code
        # More members of the API's error (a limit's ``period`` and ``resets_at``).
        self.extra = extra or {}


@dataclass(frozen=True)
class LegRequest:
    selection_id: int
    price_seen: Decimal


@dataclass(frozen=True)
class Placement:
    bet: Bet
    created: bool

    @property
    def accepted(self) -> bool:
        return self.bet.status == Bet.Status.ACCEPTED

    @property
    def rejected(self) -> bool:
        return self.bet.status == Bet.Status.REJECTED


def bet_request_validate(
    *, idempotency_key: str, stake: Decimal, legs: Sequence[LegRequest], price_policy: str
) -> None:
    """Rules that need no database: raise ``BetInvalid`` naming the field at fault."""
    if not idempotency_key or len(idempotency_key) > MAX_KEY_LENGTH or not idempotency_key.isprintable():
        raise BetInvalid(field="idempotency_key", message=f"1 to {MAX_KEY_LENGTH} printable characters")
    if price_policy not in betting.PRICE_POLICIES:
        raise BetInvalid(field="price_policy", message=f"one of {', '.join(betting.PRICE_POLICIES)}")
    if not stake.is_finite():
        raise BetInvalid(field="stake", message="stake must be a number")
    exponent = stake.as_tuple().exponent
    if isinstance(exponent, int) and exponent < -2:
        raise BetInvalid(field="stake", message="stake has at most two decimal places")
    if stake < MIN_STAKE:
        raise BetInvalid(field="stake", message=f"the minimum stake is {MIN_STAKE}", code="stake_too_low")
    if stake > MAX_STAKE:
        raise BetInvalid(field="stake", message=f"the maximum stake is {MAX_STAKE}", code="stake_too_high")
    if not legs:
        raise BetInvalid(field="selections", message="at least one selection")
    if len(legs) > MAX_LEGS:
        raise BetInvalid(field="selections", message=f"at most {MAX_LEGS} selections")
    seen: set[int] = set()
    for index, leg in enumerate(legs):
        if leg.selection_id in seen:
            raise BetInvalid(field=f"selections[{index}].selection_id", message="selection appears twice")
        seen.add(leg.selection_id)
        if not (schemas.MIN_PRICE <= leg.price_seen <= schemas.MAX_PRICE):
            raise BetInvalid(field=f"selections[{index}].price", message="not a valid decimal price")


def fingerprint(*, stake: Decimal, legs: Sequence[LegRequest], price_policy: str) -> str:
    """What a retry must repeat for its idempotency key to return the first attempt's bet."""
    canonical = "|".join(
        [str(stake.normalize()), price_policy, *(f"{leg.selection_id}@{leg.price_seen.normalize()}" for leg in legs)]
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


class SelectionMarkets:
    """Which market each selection belongs to: fixed once a selection exists, so every process
    keeps what it has looked up and asks the database only for selections it has not seen."""

    def __init__(self, limit: int = 200_000) -> None:
        self.known: dict[int, int] = {}
        self.limit = limit

    def missing(self, selection_ids: Iterable[int]) -> list[int]:
        return [selection_id for selection_id in selection_ids if selection_id not in self.known]

    def learn(self, rows: Iterable[tuple[int, int]]) -> None:
        if len(self.known) > self.limit:
            self.known.clear()
        self.known.update(rows)

    def of(self, selection_ids: Iterable[int]) -> dict[int, int]:
        return {selection_id: self.known[selection_id] for selection_id in selection_ids if selection_id in self.known}


selection_markets = SelectionMarkets()


def placement_params(
    *,
    user_id: int,
    idempotency_key: str,
    stake: Decimal,
    legs: Sequence[LegRequest],
    price_policy: str,
    markets: Mapping[int, int],
    live: LiveStates,
    topic: str,
) -> tuple[Any, ...]:
    """The parameters of ``PLACE_SQL``: the request, the price moves its policy accepts and, per
    leg, the live quote and the live state's reason against it (``reducers.betting.live_leg``; a
    selection of unknown market is left to the function, which names it)."""
    quoted = []
    for leg in legs:
        market_id = markets.get(leg.selection_id)
        fresh = market_id is not None and live.fresh(market_id)
        quote = betting.live_leg(live.get(market_id), leg.selection_id, fresh=fresh)
        quoted.append(
            {
                "selection_id": leg.selection_id,
                "price_seen": str(leg.price_seen),
                "price": str(quote.price) if quote.price is not None else None,
                "unavailable": quote.reason,
            }
        )
    return (
        user_id,
        idempotency_key,
        fingerprint(stake=stake, legs=legs, price_policy=price_policy),
        price_policy,
        list(betting.price_moves(price_policy)),
        stake,
        orjson.dumps(quoted).decode(),
        MAX_RETURN,
        topic,
        MAX_STAKE,
        trading.REFERRAL_WINDOW_S,
    )


class PlacementIO(Protocol):
    """The I/O a placement needs, on whichever connections its caller holds."""

    async def selection_markets(self, selection_ids: list[int]) -> Iterable[tuple[int, int]]:
        """``(selection id, market id)`` of each selection that exists."""

    async def live_states(self, market_ids: list[int]) -> LiveStates:
        """The markets' live states (``odds.catalogue.selectors.prices``)."""

    async def place(self, params: tuple[Any, ...]) -> str:
        """Run ``PLACE_SQL`` with ``params``; its answer as text."""


def play_state_from_answer(answer: dict[str, Any]) -> PlayState:
    """``sb_bet_place``'s ``play`` answer (the punter's open play session) as the play rules take it."""
    return play_state_of(
        started_at=_instant(answer["started_at"]),
        time_limit_s=answer["time_limit_s"],
        reality_check_s=answer["reality_check_s"],
        acknowledged_at=_time(answer["acknowledged_at"]),
    )


def play_check(*, state: PlayState | None, now: datetime) -> None:
    """Raise ``BetInvalid`` (``session_limit`` or ``reality_check``, on the account) when the
    punter's play session refuses bets now (``odds.betting.play.play_refusal``)."""
    refusal = play_refusal(state=state, now=now)
    if refusal is not None:
        raise BetInvalid(field="account", message=refusal.message, code=refusal.code)


async def bet_place(
    *,
    user_id: int,
    idempotency_key: str,
    stake: Decimal,
    legs: Sequence[LegRequest],
    price_policy: str,
    io: PlacementIO,
) -> Placement:
    """Place a single (one leg) or an accumulator (several legs, one per event).

    Raises ``BetInvalid`` for a malformed request (nothing is recorded). Otherwise returns the
    bet: ``accepted`` with its stake held; ``pending`` with its stake held until ``accept_at``
    when a leg's event is in play (the in-play delay of its sport); or ``rejected`` with
    ``reject_code`` one of ``market_suspended``, ``market_closed``, ``selection_unavailable``,
    ``price_changed`` or ``insufficient_funds`` and every leg's current price. ``created`` is
    false on a retry. A bet in a play session past its time limit, or with a reality check
    waiting, is refused (``BetInvalid``, ``session_limit`` or ``reality_check``) and nothing is
    recorded. A bet over the punter's loss or wager limit is
    refused (``BetInvalid`` ``over_loss_limit`` / ``over_wager_limit``, with the period and when
    the limit frees room), nothing recorded. The money part is one statement (``PLACE_SQL``).
    """
    bet_request_validate(idempotency_key=idempotency_key, stake=stake, legs=legs, price_policy=price_policy)
    ids = [leg.selection_id for leg in legs]
    missing = selection_markets.missing(ids)
    if missing:
        selection_markets.learn(await io.selection_markets(missing))
    markets = selection_markets.of(ids)
    live = await io.live_states(sorted(set(markets.values())))
    params = placement_params(
        user_id=user_id,
        idempotency_key=idempotency_key,
        stake=stake,
        legs=legs,
        price_policy=price_policy,
        markets=markets,
        live=live,
        topic=topics.bets(),
    )
    return placement_result(await io.place(params))


def _instant(micros: int) -> datetime:
    return datetime.fromtimestamp(micros / 1_000_000, tz=UTC)


def _time(micros: int | None) -> datetime | None:
    return _instant(micros) if micros is not None else None


def bet_from_json(data: dict[str, Any]) -> Bet:
    """A bet as ``sb_bet_json`` gives it, with its legs, their selections, markets and events in
    memory: what the response and the outbox need, without reading anything back."""
    bet = Bet(
        id=data["id"],
        user_id=data["user_id"],
        idempotency_key=data["idempotency_key"],
        request_fingerprint=data["request_fingerprint"],
        kind=data["kind"],
        status=data["status"],
        price_policy=data["price_policy"],
        stake=Decimal(data["stake"]),
        odds=Decimal(data["odds"]),
        potential_return=Decimal(data["potential_return"]),
        payout=Decimal(data["payout"]),
        reject_code=data["reject_code"],
        reject_message=data["reject_message"],
        placed_at=_instant(data["placed_at"]),
        accept_at=_time(data["accept_at"]),
        settled_at=_time(data["settled_at"]),
        # The placement's own answer says whether it referred the bet (sb_bet_json does not).
        referred_limit=Decimal(data["referred_limit"]) if data.get("referred_limit") else None,
    )
    legs = []
    for item in data["legs"] or ():
        event = Event(id=item["event_id"], home=item["home"], away=item["away"])
        market = Market(id=item["market_id"], name=item["market"], event=event)
        selection = Selection(id=item["selection_id"], name=item["selection"], market=market)
        legs.append(
            BetLeg(
                id=item.get("id"),
                bet=bet,
                selection=selection,
                market=market,
                event=event,
                price=Decimal(item["price"]),
                price_seen=Decimal(item["price_seen"]),
                result=item["result"],
                position=item["position"],
            )
        )
    queryset = bet.legs.all()
    queryset._result_cache = legs
    # The cache prefetch_related fills; django-stubs does not declare it.
    bet._prefetched_objects_cache = {"legs": queryset}  # type: ignore[attr-defined]
    return bet


def limit_refusal(answer: dict[str, Any]) -> BetInvalid:
    """``sb_bet_place``'s ``over_limit`` answer as the refusal the punter reads: which loss or
    wager limit, what is left of it and when it next frees room."""
    resets_at = _time(answer["resets_at"])
    breach = limits.Breach(
        kind=answer["kind"],
        period=answer["period"],
        amount=Decimal(answer["amount"]),
        left=Decimal(answer["left"]),
        resets_at=resets_at,
    )
    return BetInvalid(
        field="stake",
        message=limits.breach_message(breach, currency=answer["currency"]),
        code=breach.code,
        extra={
            "period": breach.period,
            "limit": breach.amount,
            "left": breach.left,
            "resets_at": answer["resets_at"] // 1000 if answer["resets_at"] is not None else None,
        },
    )


def placement_result(text: str) -> Placement:
    """``sb_bet_place``'s answer as a ``Placement``; raises ``BetInvalid`` when nothing was recorded."""
    answer = orjson.loads(text)
    outcome = answer["outcome"]
    if outcome == "created":
        return Placement(bet=bet_from_json(answer["bet"]), created=True)
    if outcome == "existing":
        return Placement(bet=bet_from_json(answer["bet"]), created=False)
    if outcome == "key_reused":
        raise BetInvalid(
            field="idempotency_key", message="this key was used for a different bet", code="idempotency_key_reused"
        )
    if outcome == "unknown_selection":
        raise BetInvalid(
            field=f"selections[{answer['index']}].selection_id", message="no such selection", code="unknown_selection"
        )
    if outcome == "same_event":
        raise BetInvalid(field="selections", message="an accumulator takes one selection per event", code="same_event")
    if outcome == "email_unverified":
        raise BetInvalid(field="account", message=EMAIL_UNVERIFIED_MESSAGE, code="email_unverified")
    if outcome == "excluded":
        message = exclusion_message(until=_instant(answer["until"]), exclusion=answer["exclusion"])
        raise BetInvalid(field="account", message=message, code="excluded")
    if outcome == "over_limit":
        raise limit_refusal(answer)
    if outcome == "play":
        play_check(state=play_state_from_answer(answer), now=_instant(answer["now"]))
        raise ValueError(f"sb_bet_place refused a bet the play rules allow: {answer!r}")
    if outcome == "return_too_high":
        raise BetInvalid(
            field="stake", message=f"the potential return is above the maximum of {MAX_RETURN}", code="return_too_high"
        )
    raise ValueError(f"sb_bet_place answered an unknown outcome {outcome!r}")
