"""Trading and lifecycle writes on markets: suspend, resume, set a price, result, settle.

Every change bumps ``Market.version`` and, in the same transaction, queues the market's
definition for the compacted markets topic (via the outbox). Changes that traders and punters
see in the price stream (status, prices) bind before they commit: the decision is written where
bets and cash-outs read prices inside the transaction (a refusal there refuses the change), then
published on the price topic after commit, with the next per-market sequence shared with the
feed and ``source="trader"``, so that the reducers apply them exactly like feed updates.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping
from decimal import Decimal

import orjson
import redis
from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.db import transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from odds.audit.models import AuditEntry
from odds.audit.services.audit import audit_record
from odds.catalogue.models import Competition, Event, Market, Selection
from odds.catalogue.selectors.prices import live_states
from odds.core import task_names
from odds.core.connections import redis_shared
from odds.core.kafka import producer_shared
from odds.core.outbox import outbox_enqueue
from odds.core.task_names import enqueue
from reducers import topics
from reducers.schemas import MarketDefinition, PriceUpdate, SelectionPrice, parse_price
from reducers.suspensions import Reason
from reducers.trading import margin_checked, price_change_needs_confirmation, price_change_ratio
from store.markets import MarketStore, sequences_next, trader_decision_write

log = logging.getLogger(__name__)

Actor = User | AnonymousUser | None
PRICE_STATUS = {
    Market.Status.OPEN: "open",
    Market.Status.SUSPENDED: "suspended",
    Market.Status.CLOSED: "closed",
    Market.Status.SETTLED: "closed",
}


# How long a trader's decision is kept beside the reducers' state: far longer than they take to
# apply it; it only bounds what a market that is no longer traded leaves behind.
TRADER_DECISION_TTL_S = 24 * 3600


class MarketStateError(Exception):
    """The market is not in a state that allows the change."""


def _ms(value: object) -> int:
    return int(value.timestamp() * 1000) if hasattr(value, "timestamp") else 0


def market_definition(*, market: Market) -> MarketDefinition:
    """The markets-topic record of a market as it is in the catalogue now."""
    event = market.event
    return MarketDefinition(
        market_id=market.id,
        version=market.version,
        event_id=event.id,
        sport=event.competition.sport.slug,
        competition=event.competition.name,
        event_name=event.name,
        kind=market.kind,
        name=market.name,
        status=market.status,
        event_status=event.status,
        starts_at=max(1, _ms(event.starts_at)),
        selections=tuple((s.id, s.name) for s in market.selections.order_by("display_order", "id")),
        ts=int(time.time() * 1000),
        competition_id=event.competition_id,
        headline=market.display_order == 0,
    )


def _market_fresh(market_id: int) -> Market:
    return Market.objects.select_related("event__competition__sport").get(id=market_id)


def market_definition_enqueue(*, market: Market) -> Market:
    """Queue the market's definition as stored now (a tombstone once settled) for the compacted
    markets topic, in the current transaction. Returns the market as stored."""
    market = _market_fresh(market.id)
    if market.status == Market.Status.SETTLED:
        # Settled markets leave the table: a tombstone lets compaction remove them.
        outbox_enqueue(topic=topics.markets(), key=str(market.id).encode(), value=None)
        return market
    definition = market_definition(market=market)
    outbox_enqueue(topic=topics.markets(), key=definition.key(), value=definition.encode())
    return market


def _changed(market: Market, *, reason: str = "", by: str = "", **fields: object) -> Market:
    """Apply ``fields`` to a locked market, bump its version and queue its definition.

    A suspension is stamped (``suspended_at``) with its ``reason`` and who set it (``by``): a bet
    held by the in-play delay is rejected when its market was suspended at any time during the
    delay, even if it reopened since. Leaving the suspension clears the reason.
    """
    status = fields.get("status")
    if status == Market.Status.SUSPENDED:
        fields.update(suspended_at=timezone.now(), suspension_reason=reason, suspended_by=by[:150])
    elif status is not None:
        fields.update(suspension_reason="", suspended_by="")
    Market.objects.filter(id=market.id).update(version=F("version") + 1, **fields)
    return market_definition_enqueue(market=market)


def actor_name(by: Actor | str) -> str:
    """Who made a change, as the catalogue keeps it: a user's name, or the process's own."""
    if isinstance(by, str):
        return by
    if by is None or not by.is_authenticated:
        return "system"
    return by.get_username()


def _lock(market: Market) -> Market:
    return Market.objects.select_for_update().get(id=market.id)


def market_price_update(*, market_id: int, overrides: Mapping[int, Decimal] | None = None) -> PriceUpdate:
    """A full snapshot of the market's book for the price topic, with the next source sequence.

    Prices come from the live state (what punters see now) and fall back to the catalogue;
    ``overrides`` (a trader's new prices) win over both.
    """
    market = Market.objects.prefetch_related("selections").get(id=market_id)
    live = {
        item["id"]: item
        for item in (live_states(market_ids=[market_id]).get(market_id) or {}).get("selections", [])
        if isinstance(item, dict) and "id" in item
    }
    selections = []
    for selection in sorted(market.selections.all(), key=lambda s: (s.display_order, s.id)):
        price = selection.price
        if selection.id in live:
            price = parse_price(str(live[selection.id].get("price")))
        if overrides and selection.id in overrides:
            price = overrides[selection.id]
        status = "removed" if selection.status == Selection.Status.REMOVED else selection.status
        selections.append(SelectionPrice(selection.id, price, status))
    (seq,) = sequences_next(redis_shared(), [market_id])
    now_ms = int(time.time() * 1000)
    return PriceUpdate(
        market_id=market_id,
        seq=seq,
        status=PRICE_STATUS[Market.Status(market.status)],
        selections=tuple(selections),
        event_ts=now_ms,
        produce_ts=now_ms,
        source="trader",
    )


def trader_decision_record(update: PriceUpdate) -> None:
    """Keep the decision where bets and cash-outs read prices (``store.markets.trader_decision_write``), so that
    they go by it from now on, not once the reducers have applied it a moment later."""
    state = {
        "type": "market",
        "v": 1,
        "market_id": update.market_id,
        "seq": update.seq,
        "status": update.status,
        "tradable": update.status == "open",
        "selections": [selection.to_json() for selection in update.selections],
        # When the trader decided: how old the decision is when a bet or a cash-out reads it.
        "ts": {"decided": int(time.time() * 1000)},
    }
    trader_decision_write(
        redis_shared(),
        market_id=update.market_id,
        seq=update.seq,
        state=orjson.dumps(state),
        ttl_s=TRADER_DECISION_TTL_S,
    )


def market_prices_publish(*, market_id: int, overrides: Mapping[int, Decimal] | None = None) -> PriceUpdate:
    """Record the market's current book as the trader's decision, produce it to the price topic
    and wait for the acknowledgement."""
    update = market_price_update(market_id=market_id, overrides=overrides)
    trader_decision_record(update)
    _price_update_produce(update)
    return update


def _price_update_produce(update: PriceUpdate) -> None:
    producer = producer_shared()
    producer.produce(topics.prices(), key=update.key(), value=update.encode())
    remaining = producer.flush(10)
    if remaining:
        log.error("trader price update for market %s not acknowledged by Kafka", update.market_id)


def markets_defined(*, market_ids: list[int]) -> list[int]:
    """The markets the reducers' markets table holds (a price of any other goes to the dead
    letters as ``unknown_market`` until its definition arrives)."""
    statuses = MarketStore(redis_shared()).table_statuses(market_ids)
    return [market_id for market_id, status in zip(market_ids, statuses, strict=True) if status is not None]


# How long an opening book waits for its market's definition to reach the markets table (the
# outbox relays it within a second or so, the markets query writes it on its next trigger).
OPENING_WAIT_S = 15.0
OPENING_POLL_S = 0.25


def market_openings_publish(*, market_ids: list[int], wait_s: float = OPENING_WAIT_S) -> list[int]:
    """Publish new markets' opening books once the markets table holds their definitions, so
    that none of them is refused as a price of an unknown market. A market still undefined after
    ``wait_s`` is published anyway (the reducers keep its price until the definition comes);
    returns those."""
    waiting = list(market_ids)
    deadline = time.monotonic() + wait_s
    while waiting:
        ready = set(markets_defined(market_ids=waiting))
        for market_id in [m for m in waiting if m in ready]:
            market_prices_publish(market_id=market_id)
        waiting = [m for m in waiting if m not in ready]
        if not waiting or time.monotonic() >= deadline:
            break
        time.sleep(OPENING_POLL_S)
    for market_id in waiting:
        log.warning(
            "market %s not in the markets table after %.0f s: its opening book goes out anyway", market_id, wait_s
        )
        market_prices_publish(market_id=market_id)
    return waiting


class DecisionNotRecorded(MarketStateError):
    """The trader's decision could not be written where bets read prices (Redis refused or is
    unreachable): the change is refused, nothing of it is committed."""


def _decision_bind(market_id: int, overrides: Mapping[int, Decimal] | None = None) -> None:
    """Make a trader's change binding before its transaction commits: the decision is written
    where bets and cash-outs read prices (``trader_decision_record``) inside the transaction, so
    no bet placed after the commit prices at what it replaced; Redis refusing raises
    ``DecisionNotRecorded`` and the change rolls back. Kafka (and so the reducers and the
    browsers) hears of it after the commit."""
    try:
        update = market_price_update(market_id=market_id, overrides=overrides)
        trader_decision_record(update)
    except redis.RedisError as exc:
        log.warning("trader decision on market %s not recorded; the change is refused", market_id, exc_info=True)
        raise DecisionNotRecorded(
            f"market {market_id}: the decision could not be recorded for bets (the price store refused it);"
            " nothing was changed, try again"
        ) from exc

    def produce() -> None:
        try:
            _price_update_produce(update)
        except Exception:
            # Bets already go by the decision (recorded above); the feed republishes the market
            # with its next update.
            log.exception("publishing market %s to the price topic failed", market_id)

    transaction.on_commit(produce)


def _status_audit(*, before: Market, after: Market, by: Actor, note: str = "") -> None:
    """The audit row of a staff member's suspension or resumption of one market."""
    kind = AuditEntry.Kind.MARKET_SUSPEND if after.status == Market.Status.SUSPENDED else AuditEntry.Kind.MARKET_RESUME

    def status(market: Market) -> dict[str, str]:
        return {
            "status": market.status,
            "suspension_reason": market.suspension_reason,
            "suspended_by": market.suspended_by,
        }

    audit_record(by=by, kind=kind, obj=after, before=status(before), after=status(after), reason=note)


def _status_move(
    *, market: Market, by: Actor, start: str, end: str, verb: str, reason: str = "", note: str = ""
) -> Market:
    """Move ``market`` from ``start`` to ``end`` under its row lock binding before the commit;
    a market already at ``end`` is left as it is (a repeated click or redelivered command), but
    a suspension set by someone else, or for another reason, becomes this one. A staff member's
    move is audited with ``note`` as its reason."""
    with transaction.atomic():
        locked = _lock(market)
        actor = actor_name(by)
        if locked.status == end:
            # Suspending a market the feed holds suspended makes the suspension the trader's:
            # the feed lifts only its own.
            taken_over = end == Market.Status.SUSPENDED and (locked.suspension_reason, locked.suspended_by) != (
                reason,
                actor,
            )
            if not taken_over:
                return _market_fresh(locked.id)
        elif locked.status != start:
            article = "an" if start[0] in "aeiou" else "a"
            raise MarketStateError(
                f"market {locked.id} is {locked.status}; only {article} {start} market can be {verb}"
            )
        fresh = _changed(locked, status=end, reason=reason, by=actor)
        _decision_bind(fresh.id)
        _status_audit(before=locked, after=fresh, by=by, note=note)
    log.info("market %s %s by %s", fresh.id, verb, by)
    return fresh


def market_suspend(*, market: Market, by: Actor = None, reason: str = Reason.TRADER, note: str = "") -> Market:
    """Stop trading an open market (bets on it are rejected until it is resumed), for ``reason``
    (a trader's by default), recording who did it (and, for a staff member, an audit row with
    ``note``)."""
    return _status_move(
        market=market,
        by=by,
        start=Market.Status.OPEN,
        end=Market.Status.SUSPENDED,
        verb="suspended",
        reason=reason,
        note=note,
    )


def market_resume(*, market: Market, by: Actor = None, note: str = "") -> Market:
    """Reopen a suspended market."""
    return _status_move(
        market=market, by=by, start=Market.Status.SUSPENDED, end=Market.Status.OPEN, verb="resumed", note=note
    )


def _markets_move(
    *, markets: Iterable[Market], by: Actor, suspend: bool, scope: Event | Competition, note: str = ""
) -> list[Market]:
    """Suspend (or resume) every market of ``markets`` that can move, each one as
    ``market_suspend`` (``market_resume``) moves it — its own row lock, its own record bound for
    bets before the commit and produced to the price topic after it, its own audit row — in one
    transaction with one audit row for the whole ``scope``."""
    start, end = (
        (Market.Status.OPEN, Market.Status.SUSPENDED) if suspend else (Market.Status.SUSPENDED, Market.Status.OPEN)
    )
    moved = []
    with transaction.atomic():
        for market in markets:
            if market.status != start:
                continue
            if suspend:
                moved.append(market_suspend(market=market, by=by, note=note))
            else:
                moved.append(market_resume(market=market, by=by, note=note))
        if isinstance(scope, Event):
            kind = AuditEntry.Kind.EVENT_SUSPEND if suspend else AuditEntry.Kind.EVENT_RESUME
        else:
            kind = AuditEntry.Kind.COMPETITION_SUSPEND if suspend else AuditEntry.Kind.COMPETITION_RESUME
        if moved:
            audit_record(
                by=by,
                kind=kind,
                obj=scope,
                before={"status": start, "markets": [m.id for m in moved]},
                after={"status": end, "markets": [m.id for m in moved]},
                reason=note,
            )
    return moved


def _tradable(markets: QuerySet[Market]) -> list[Market]:
    return list(markets.filter(status__in=(Market.Status.OPEN, Market.Status.SUSPENDED)).order_by("id"))


def event_markets_suspend(*, event: Event, by: Actor = None, note: str = "") -> list[Market]:
    """Suspend every open market of an event in one action; returns the markets suspended."""
    return _markets_move(markets=_tradable(event.markets.all()), by=by, suspend=True, scope=event, note=note)


def event_markets_resume(*, event: Event, by: Actor = None, note: str = "") -> list[Market]:
    """Reopen every suspended market of an event in one action; returns the markets reopened."""
    return _markets_move(markets=_tradable(event.markets.all()), by=by, suspend=False, scope=event, note=note)


def competition_markets_suspend(*, competition: Competition, by: Actor = None, note: str = "") -> list[Market]:
    """Suspend every open market of every event of a competition in one action."""
    markets = _tradable(Market.objects.filter(event__competition=competition))
    return _markets_move(markets=markets, by=by, suspend=True, scope=competition, note=note)


def competition_markets_resume(*, competition: Competition, by: Actor = None, note: str = "") -> list[Market]:
    """Reopen every suspended market of every event of a competition in one action."""
    markets = _tradable(Market.objects.filter(event__competition=competition))
    return _markets_move(markets=markets, by=by, suspend=False, scope=competition, note=note)


def selection_live_price(*, selection: Selection) -> Decimal:
    """The selection's price as bets are priced now: the live state (or the trader's decision not
    yet applied), else the catalogue's."""
    state = live_states(market_ids=[selection.market_id]).get(selection.market_id) or {}
    for item in state.get("selections", []):
        if isinstance(item, dict) and item.get("id") == selection.id:
            try:
                return parse_price(str(item.get("price")))
            except ValueError:
                break
    return Decimal(selection.price)


class PriceChangeUnconfirmed(Exception):
    """A price override beyond ``PRICE_CHANGE_CONFIRM_RATIO`` of the live price, not confirmed:
    nothing was changed; ``current`` and ``price`` are for the question put to the trader."""

    def __init__(self, *, selection: Selection, current: Decimal, price: Decimal, ratio: Decimal) -> None:
        times = price_change_ratio(current=current, new=price).quantize(Decimal("0.1"))
        super().__init__(
            f"{selection.name} from {current} to {price} is a change of {times} times (more than {ratio}):"
            " confirm it to apply it"
        )
        self.message = str(self)
        self.selection = selection
        self.current = current
        self.price = price


def selection_price_set(
    *, selection: Selection, price: Decimal, by: Actor = None, reason: str = "", confirmed: bool = False
) -> Selection:
    """A trader's price override: stored in the catalogue and published through the price topic;
    a staff member's is audited with the price it replaced (the live one) and ``reason``. A price
    beyond ``PRICE_CHANGE_CONFIRM_RATIO`` of the live one raises ``PriceChangeUnconfirmed`` (and
    changes nothing) unless ``confirmed``."""
    price = parse_price(str(price))
    with transaction.atomic():
        market = _lock(selection.market)
        if market.status not in (Market.Status.OPEN, Market.Status.SUSPENDED):
            raise MarketStateError(f"market {market.id} is {market.status}; its prices can no longer change")
        try:
            replaced = selection_live_price(selection=selection)
        except redis.RedisError as exc:
            raise DecisionNotRecorded(
                f"market {market.id}: the live price could not be read (the price store refused);"
                " nothing was changed, try again"
            ) from exc
        ratio = settings.PRICE_CHANGE_CONFIRM_RATIO
        if not confirmed and price_change_needs_confirmation(current=replaced, new=price, ratio=ratio):
            raise PriceChangeUnconfirmed(selection=selection, current=replaced, price=price, ratio=ratio)
        Selection.objects.filter(id=selection.id).update(price=price)
        _changed(market)
        _decision_bind(market.id, {selection.id: price})
        audit_record(
            by=by,
            kind=AuditEntry.Kind.PRICE_SET,
            obj=selection,
            label=f"{selection.name} — {market}",
            before={"price": replaced},
            after={"price": price, **({"confirmed": True} if confirmed else {})},
            reason=reason,
        )
    log.info("selection %s priced at %s by %s", selection.id, price, by)
    return Selection.objects.get(id=selection.id)


def market_margin_set(*, market: Market, margin: Decimal | None, by: Actor = None, reason: str = "") -> Market:
    """A trader's margin for ``market`` (``None``: back to the pricing model's own), audited with the
    margin it replaced. The market's version moves, so the feed picks the margin up on its next
    look at the catalogue and prices the market's next book with it (``Feed.sync_catalogue``).
    Setting the margin it already has changes nothing."""
    if margin is not None:
        margin_checked(margin)
    with transaction.atomic():
        locked = _lock(market)
        if locked.status not in (Market.Status.OPEN, Market.Status.SUSPENDED):
            raise MarketStateError(f"market {locked.id} is {locked.status}; its margin can no longer change")
        if locked.margin == margin:
            return locked
        _changed(locked, margin=margin)
        audit_record(
            by=by,
            kind=AuditEntry.Kind.MARGIN_SET,
            obj=locked,
            before={"margin": locked.margin},
            after={"margin": margin},
            reason=reason,
        )
    log.info("market %s margin set to %s by %s", market.id, margin, by)
    return Market.objects.get(id=market.id)


def market_result(
    *,
    market: Market,
    winners: Iterable[int] | None,
    voided: Iterable[int] = (),
    by: Actor = None,
    publish: bool = True,
) -> Market:
    """Result a market: ``winners`` won, ``voided`` are void, the rest lost; ``winners=None`` voids
    the whole market. The market closes and its bets are settled by a task after commit.
    ``publish=False`` leaves announcing the closed book on the price topic to the caller (the feed).
    """
    with transaction.atomic():
        locked = _lock(market)
        if locked.status not in (Market.Status.OPEN, Market.Status.SUSPENDED):
            # Bets may already be settled on the first result; changing it needs a resettlement
            # (reversing payouts), which is not something a second result may do silently.
            raise MarketStateError(f"market {locked.id} is already resulted ({locked.status})")
        selections = list(locked.selections.all())
        ids = {s.id for s in selections}
        won = set(winners) if winners is not None else set()
        void = ids if winners is None else set(voided)
        foreign = (won | void) - ids
        if foreign:
            raise MarketStateError(f"selections {sorted(foreign)} are not in market {locked.id}")
        if won & void:
            raise MarketStateError("a selection cannot both win and be void")
        for selection in selections:
            if selection.id in won:
                result = Selection.Result.WON
            elif selection.id in void:
                result = Selection.Result.VOID
            else:
                result = Selection.Result.LOST
            Selection.objects.filter(id=selection.id).update(result=result)
        fresh = _changed(locked, status=Market.Status.CLOSED)
        if publish:
            _decision_bind(fresh.id)
        names = {s.id: s.name for s in selections}
        audit_record(
            by=by,
            kind=AuditEntry.Kind.MARKET_RESULT,
            obj=fresh,
            before={"status": locked.status},
            after={
                "status": fresh.status,
                "won": sorted(names[i] for i in won),
                "void": sorted(names[i] for i in void),
            },
        )
        transaction.on_commit(lambda: _settlement_enqueue(fresh.id))
    log.info("market %s resulted by %s: winners %s, void %s", fresh.id, by or "system", sorted(won), sorted(void))
    return fresh


def market_settlement_request(*, market: Market, by: Actor = None) -> None:
    """Ask for (another) settlement run of a resulted market; settlement is idempotent."""
    if market.status not in (Market.Status.CLOSED, Market.Status.SETTLED):
        raise MarketStateError(f"market {market.id} is {market.status}; result it first")
    log.info("settlement of market %s requested by %s", market.id, by)
    with transaction.atomic():
        audit_record(by=by, kind=AuditEntry.Kind.SETTLEMENT_REQUEST, obj=market, after={"status": market.status})
        transaction.on_commit(lambda: _settlement_enqueue(market.id))


def _settlement_enqueue(market_id: int) -> None:
    enqueue(task_names.MARKET_SETTLE, market_id)


def market_settled_mark(*, market_id: int) -> Market:
    """Mark a closed market settled once all of its bets are settled; idempotent."""
    with transaction.atomic():
        locked = Market.objects.select_for_update().get(id=market_id)
        if locked.status != Market.Status.CLOSED:
            return _market_fresh(locked.id)
        return _changed(locked, status=Market.Status.SETTLED)


def markets_status_set(
    *,
    market_ids: Iterable[int],
    status: str,
    only_from: Iterable[str],
    publish: bool = True,
    reason: str = "",
    by: str = "",
    only_by: Iterable[str] | None = None,
) -> list[Market]:
    """Move the markets that are in one of ``only_from`` to ``status`` (kick-off, a goal, reopening),
    a suspension with its ``reason`` and setter ``by``; ``only_by`` moves only the markets whose
    suspension one of those set (the feed reopens its own suspensions, never a trader's).

    ``publish=False`` leaves the price topic to the caller: the feed publishes these changes
    itself, with its own prices.
    """
    changed = []
    with transaction.atomic():
        markets = Market.objects.select_for_update().filter(id__in=list(market_ids), status__in=list(only_from))
        if only_by is not None:
            markets = markets.filter(suspended_by__in=list(only_by))
        for market in markets.order_by("id"):
            changed.append(_changed(market, status=status, reason=reason, by=by))
            if publish:
                _decision_bind(market.id)
    return changed


def event_update(
    *,
    event: Event,
    status: str | None = None,
    home_score: int | None = None,
    away_score: int | None = None,
    clock: str | None = None,
) -> Event:
    """Change an event's status, score or clock; its markets' definitions carry the event status."""
    fields: dict[str, object] = {}
    if status is not None:
        fields["status"] = status
    if home_score is not None:
        fields["home_score"] = home_score
    if away_score is not None:
        fields["away_score"] = away_score
    if clock is not None:
        fields["clock"] = clock
    with transaction.atomic():
        Event.objects.filter(id=event.id).update(**fields)
        if status is not None:
            for market in Market.objects.select_for_update().filter(event=event).exclude(status=Market.Status.SETTLED):
                _changed(market)
    return Event.objects.get(id=event.id)
