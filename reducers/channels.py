"""Subscriber channels' decisions: what a stream command does to a channel, and which channels a
change of market states reaches, as effects a state store carries out.

Nothing here reads or writes anything: ``store/channels.py`` (the Redis state store) reads
what a decision needs, calls it and executes the effects it returns, in their order. The
decisions are tested without a broker or a store (tests/unit/test_channel_decisions.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from reducers.schemas import MarketDefinition
from reducers.subscriptions import (
    GAME_VIEW,
    MAX_QUERY_MARKETS,
    StreamCommand,
    SubscriptionSpec,
    listed_change,
    map_changes,
    query_matches,
)

# --- effects on one channel, executed in order ---


@dataclass(frozen=True)
class Create:
    """The channel's entry in the channels index, then its meta (owner, spec, ``pending``,
    sequence 0): a channel whose meta can be seen is already indexed, so an expiry decided after
    that never overwrites the subscribe."""

    user_id: int
    spec: SubscriptionSpec
    now_ms: int


@dataclass(frozen=True)
class Stream:
    """The channel streams from now on (``streaming``), and its index entry is touched."""

    now_ms: int


@dataclass(frozen=True)
class SaveSpec:
    spec: SubscriptionSpec


@dataclass(frozen=True)
class QueryMember:
    """In (or out of) the set of query channels the query stage re-resolves."""

    member: bool


@dataclass(frozen=True)
class SetMarkets:
    """Markets joining and leaving the channel, in both maps (market → channels, channel → markets)."""

    added: frozenset[int]
    removed: frozenset[int]


@dataclass(frozen=True)
class SendImage:
    """Publish the channel's image (flagged ``resync``; without the markets held at ``since``)."""

    resync: bool = False
    since: Mapping[int, tuple[int, str]] | None = None


@dataclass(frozen=True)
class Remove:
    """Drop the channel and its entries, and tell its websockets it ended and why."""

    reason: str


@dataclass(frozen=True)
class SetQueryMarkets:
    """Markets joining and leaving a shared query channel: only its channel → markets set (its
    frames name markets, they carry no prices, so no market → channels entry routes prices to it)."""

    added: frozenset[int]
    removed: frozenset[int]


@dataclass(frozen=True)
class PublishQuery:
    """Publish a shared query channel's ``view.query`` frame: with ``image``, every market it holds
    (read after the effects before it); otherwise what joined, left or changed."""

    image: bool = False
    added: frozenset[int] = frozenset()
    removed: frozenset[int] = frozenset()
    changed: frozenset[int] = frozenset()


@dataclass(frozen=True)
class WatchGame:
    """The channel shows this event's game (and no other): the game reducer's output reaches it
    (the punter's changes, their ranks as the event's leaderboard moves)."""

    event_id: int
    user_id: int


Effect = (
    Create
    | Stream
    | SaveSpec
    | QueryMember
    | SetMarkets
    | SendImage
    | Remove
    | SetQueryMarkets
    | PublishQuery
    | WatchGame
)


@dataclass(frozen=True)
class Decision:
    """What happened (for logs and tests) and the effects that make it so."""

    outcome: str
    effects: tuple[Effect, ...] = ()


def _markets(spec: SubscriptionSpec, current: frozenset[int]) -> SetMarkets:
    added, removed = map_changes(old=set(current), new=spec.explicit_markets())
    return SetMarkets(frozenset(added), frozenset(removed))


def _game(spec: SubscriptionSpec, user_id: int) -> tuple[Effect, ...]:
    """A game view's own effect: the channel joins its event's game."""
    return (WatchGame(spec.event, user_id),) if spec.view == GAME_VIEW and spec.event is not None else ()


def command_decision(
    command: StreamCommand,
    *,
    owner: int | None,
    markets: frozenset[int],
    now_ms: int,
    resolve: Callable[[SubscriptionSpec], set[int]],
) -> Decision:
    """Apply one command idempotently. ``owner``: the user the channel belongs to (None: no such
    channel; ``SHARED_OWNER`` for a shared query channel); ``markets``: the channel's markets now;
    ``resolve``: the markets a query matches now (called only when a shared channel is made)."""
    if command.type == "share":
        assert command.spec is not None
        if owner is not None:
            return Decision("exists", (Stream(now_ms),))
        resolved = frozenset(sorted(resolve(command.spec))[:MAX_QUERY_MARKETS])
        return Decision(
            "shared",
            (
                Create(SHARED_OWNER, command.spec, now_ms),
                Stream(now_ms),
                QueryMember(True),
                SetQueryMarkets(resolved, frozenset()),
                PublishQuery(image=True),
            ),
        )
    if owner == SHARED_OWNER:
        # A shared channel ends only by the sweeper (no socket attached for the expiry).
        if command.type == "unsubscribe" and command.user_id is None:
            return Decision("unsubscribed", (Remove(command.reason or "expired"),))
        return Decision("ignored: a shared channel takes no punter's command")
    if owner is not None and owner != command.user_id:
        return Decision("ignored: channel belongs to another user")
    if command.type in ("subscribe", "change") and command.spec is not None and command.spec.query is not None:
        # The control API sends a query as a ``share``: one channel per query, whoever asks.
        return Decision("ignored: a query is followed through its shared channel")
    if command.type == "subscribe":
        assert command.spec is not None
        assert command.user_id is not None
        if owner is not None:
            return Decision("exists")
        return Decision(
            "subscribed",
            (
                Create(command.user_id, command.spec, now_ms),
                _markets(command.spec, markets),
                *_game(command.spec, command.user_id),
            ),
        )
    if owner is None:
        return Decision("ignored: no such channel")
    if command.type == "begin":
        return Decision("streaming", (Stream(now_ms), SendImage(resync=command.resync, since=command.since)))
    if command.type == "change":
        assert command.spec is not None
        assert command.user_id is not None
        return Decision(
            "changed",
            (
                SaveSpec(command.spec),
                _markets(command.spec, markets),
                *_game(command.spec, command.user_id),
                SendImage(),
            ),
        )
    return Decision("unsubscribed", (Remove(command.reason or "unsubscribed"),))


# The owner recorded for a shared query channel (no punter owns it).
SHARED_OWNER = 0


@dataclass(frozen=True)
class QueryChange:
    """What a shared query channel's markets do: join, leave, or stay with what a list shows of
    them changed."""

    added: frozenset[int] = frozenset()
    removed: frozenset[int] = frozenset()
    changed: frozenset[int] = frozenset()

    def effects(self) -> tuple[Effect, ...]:
        """Nothing when nothing happened; else the maps' change and the frame that tells it."""
        if not (self.added or self.removed or self.changed):
            return ()
        return (
            SetQueryMarkets(self.added, self.removed),
            PublishQuery(added=self.added, removed=self.removed, changed=self.changed),
        )


def query_change(
    spec: SubscriptionSpec,
    *,
    members: frozenset[int],
    candidates: Mapping[int, tuple[MarketDefinition | None, MarketDefinition | None]],
    now_ms: int,
) -> QueryChange:
    """A shared query channel's change for markets whose definitions changed (or whose kick-off
    crossed the edge of its window): ``candidates`` maps each to its (old, new) definition, None
    when the table had none or it was removed. Markets it already holds up to
    ``MAX_QUERY_MARKETS`` join no more."""
    assert spec.query is not None
    added: set[int] = set()
    removed: set[int] = set()
    changed: set[int] = set()
    room = MAX_QUERY_MARKETS - len(members)
    for market_id in sorted(candidates):
        old, new = candidates[market_id]
        matches = new is not None and query_matches(spec.query, new, now_ms=now_ms)
        held = market_id in members
        if matches and not held and len(added) < room:
            added.add(market_id)
        elif held and not matches:
            removed.add(market_id)
        elif held and listed_change(old, new):
            changed.add(market_id)
    return QueryChange(frozenset(added), frozenset(removed), frozenset(changed))


def fan_out_routes(members: Mapping[int, Iterable[str]]) -> dict[str, list[int]]:
    """Channel id → the changed markets it holds, in market order, from market id → the
    channels holding it."""
    routes: dict[str, list[int]] = {}
    for market_id in sorted(members):
        for channel_id in members[market_id]:
            routes.setdefault(channel_id, []).append(market_id)
    return routes


def match_routes(
    markets_of_event: Mapping[int, Iterable[int]], members: Mapping[int, Iterable[str]]
) -> dict[str, list[int]]:
    """Channel id → the events (in order) with a new match state that it shows a market of, from
    event id → its markets and market id → the channels holding it."""
    routes: dict[str, set[int]] = {}
    for event_id, market_ids in markets_of_event.items():
        for market_id in market_ids:
            for channel_id in members.get(market_id, ()):
                routes.setdefault(channel_id, set()).add(event_id)
    return {channel_id: sorted(events) for channel_id, events in sorted(routes.items())}


def context_markets(spec: SubscriptionSpec, *, held: set[int], changed: Iterable[int]) -> set[int]:
    """The markets whose states a channel's delta needs beyond the changed ones: a slip or bets
    view sums over every market it holds; a markets view needs only what changed."""
    if spec.view == "markets":
        return set()
    # Not ``held - set(changed)``: a backlog's batch changes every market, and copying them into
    # a set for each channel it reaches cost a fifth of its fan-out.
    return held.difference(changed)
