"""Subscriber channels' decisions: what a stream command does to a channel, and which channels a
change of market states reaches, as effects a state store carries out.

Nothing here reads or writes anything: ``store/channels.py`` (the Redis state store) reads
what a decision needs, calls it and executes the effects it returns, in their order. The
decisions are tested without a broker or a store (tests/unit/test_channel_decisions.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from reducers.subscriptions import StreamCommand, SubscriptionSpec, map_changes

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


Effect = Create | Stream | SaveSpec | QueryMember | SetMarkets | SendImage | Remove


@dataclass(frozen=True)
class Decision:
    """What happened (for logs and tests) and the effects that make it so."""

    outcome: str
    effects: tuple[Effect, ...] = ()


def _markets(
    spec: SubscriptionSpec, current: frozenset[int], resolve: Callable[[SubscriptionSpec], set[int]]
) -> SetMarkets:
    added, removed = map_changes(old=set(current), new=spec.explicit_markets() | resolve(spec))
    return SetMarkets(frozenset(added), frozenset(removed))


def command_decision(
    command: StreamCommand,
    *,
    owner: int | None,
    markets: frozenset[int],
    now_ms: int,
    resolve: Callable[[SubscriptionSpec], set[int]],
) -> Decision:
    """Apply one command idempotently. ``owner``: the user the channel belongs to (None: no such
    channel); ``markets``: the channel's markets now; ``resolve``: the markets a spec's query
    matches now (called only when a spec's markets are needed)."""
    if owner is not None and owner != command.user_id:
        return Decision("ignored: channel belongs to another user")
    if command.type == "subscribe":
        assert command.spec is not None
        if owner is not None:
            return Decision("exists")
        effects: list[Effect] = [Create(command.user_id, command.spec, now_ms)]
        if command.spec.query is not None:
            effects.append(QueryMember(True))
        effects.append(_markets(command.spec, markets, resolve))
        return Decision("subscribed", tuple(effects))
    if owner is None:
        return Decision("ignored: no such channel")
    if command.type == "begin":
        return Decision("streaming", (Stream(now_ms), SendImage(resync=command.resync, since=command.since)))
    if command.type == "change":
        assert command.spec is not None
        return Decision(
            "changed",
            (
                SaveSpec(command.spec),
                QueryMember(command.spec.query is not None),
                _markets(command.spec, markets, resolve),
                SendImage(),
            ),
        )
    return Decision("unsubscribed", (Remove(command.reason or "unsubscribed"),))


def query_refresh_decision(
    spec: SubscriptionSpec, *, markets: frozenset[int], streaming: bool, matched: set[int]
) -> tuple[Effect, ...]:
    """A query channel re-resolved: the markets that start or stop matching join or leave it, and
    a streaming channel whose markets changed gets a fresh image."""
    change = _markets(spec, markets, lambda _: matched)
    if not change.added and not change.removed:
        return ()
    return (change, SendImage()) if streaming else (change,)


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
    return held - set(changed)
