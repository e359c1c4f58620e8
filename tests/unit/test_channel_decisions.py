"""The subscriber channels' decisions (reducers/channels.py), without a broker or a store."""

from __future__ import annotations

from reducers.channels import (
    SHARED_OWNER,
    Create,
    PublishQuery,
    QueryChange,
    QueryMember,
    Remove,
    SaveSpec,
    SendImage,
    SetMarkets,
    SetQueryMarkets,
    Stream,
    command_decision,
    context_markets,
    fan_out_routes,
    match_routes,
    query_change,
)
from reducers.subscriptions import StreamCommand, shared_channel_id, spec_from_json
from tests.factories import definition_build

CHANNEL = "c" * 32
MARKETS = spec_from_json({"view": "markets", "markets": [1, 2]})
QUERY = spec_from_json({"view": "markets", "query": {"sport": "football", "headline": True}})
assert QUERY.query is not None
SHARED = shared_channel_id(QUERY.query)
SLIP = spec_from_json({"view": "slip", "slip": [{"selection_id": 11, "market_id": 1}]})


def command(kind: str, *, user: int = 7, spec=None, **extra) -> StreamCommand:
    return StreamCommand(type=kind, channel_id=CHANNEL, user_id=user, spec=spec, ts=1, **extra)


class Resolver:
    """A query resolver that finds ``found`` and remembers the specs it was asked about."""

    def __init__(self, *found: int) -> None:
        self.found = set(found)
        self.asked: list = []

    def __call__(self, spec) -> set[int]:
        self.asked.append(spec)
        return set(self.found)


def test_a_subscribe_creates_the_channel_then_maps_its_markets():
    decision = command_decision(
        command("subscribe", spec=MARKETS), owner=None, markets=frozenset(), now_ms=5, resolve=Resolver()
    )
    assert decision.outcome == "subscribed"
    assert decision.effects == (Create(7, MARKETS, 5), SetMarkets(frozenset({1, 2}), frozenset()))


def share(*, user: int | None = None) -> StreamCommand:
    return StreamCommand(type="share", channel_id=SHARED, user_id=user, spec=QUERY, ts=1)


def test_a_share_makes_the_querys_one_channel_with_what_the_query_matches_now():
    resolve = Resolver(3, 4)
    decision = command_decision(share(), owner=None, markets=frozenset(), now_ms=5, resolve=resolve)
    assert decision.outcome == "shared"
    assert decision.effects == (
        Create(SHARED_OWNER, QUERY, 5),
        Stream(5),
        QueryMember(True),
        SetQueryMarkets(frozenset({3, 4}), frozenset()),
        PublishQuery(image=True),
    )
    assert resolve.asked == [QUERY]


def test_a_share_of_a_query_that_has_its_channel_only_keeps_it_alive_and_resolves_nothing():
    resolve = Resolver(3)
    decision = command_decision(share(user=8), owner=SHARED_OWNER, markets=frozenset({3}), now_ms=5, resolve=resolve)
    assert (decision.outcome, decision.effects, resolve.asked) == ("exists", (Stream(5),), [])


def test_a_share_must_name_its_querys_channel():
    import pytest

    from reducers.schemas import InvalidRecord

    with pytest.raises(InvalidRecord, match="shared channel"):
        StreamCommand(type="share", channel_id="q" + "0" * 39, user_id=None, spec=QUERY, ts=1)


def test_a_punters_command_on_a_shared_channel_is_ignored_and_only_the_sweeper_ends_it():
    for kind, spec in (("begin", None), ("change", MARKETS), ("unsubscribe", None)):
        decision = command_decision(
            StreamCommand(type=kind, channel_id=SHARED, user_id=7, spec=spec, ts=1),
            owner=SHARED_OWNER,
            markets=frozenset(),
            now_ms=5,
            resolve=Resolver(),
        )
        assert decision.effects == ()
    expired = StreamCommand(type="unsubscribe", channel_id=SHARED, user_id=None, ts=1, reason="expired")
    decision = command_decision(expired, owner=SHARED_OWNER, markets=frozenset(), now_ms=5, resolve=Resolver())
    assert decision.effects == (Remove("expired"),)


def test_a_punters_channel_never_takes_a_query():
    for kind in ("subscribe", "change"):
        decision = command_decision(
            command(kind, spec=QUERY),
            owner=None if kind == "subscribe" else 7,
            markets=frozenset(),
            now_ms=5,
            resolve=Resolver(1),
        )
        assert decision.effects == ()


def test_a_repeated_subscribe_changes_nothing():
    decision = command_decision(
        command("subscribe", spec=MARKETS), owner=7, markets=frozenset({1, 2}), now_ms=5, resolve=Resolver()
    )
    assert (decision.outcome, decision.effects) == ("exists", ())


def test_a_command_on_another_users_channel_is_ignored():
    for kind, spec in (("subscribe", MARKETS), ("begin", None), ("change", MARKETS), ("unsubscribe", None)):
        decision = command_decision(
            command(kind, spec=spec, user=8), owner=7, markets=frozenset(), now_ms=5, resolve=Resolver()
        )
        assert decision.outcome == "ignored: channel belongs to another user"
        assert decision.effects == ()


def test_a_command_on_no_channel_is_ignored():
    for kind, spec in (("begin", None), ("change", MARKETS), ("unsubscribe", None)):
        decision = command_decision(
            command(kind, spec=spec), owner=None, markets=frozenset(), now_ms=5, resolve=Resolver()
        )
        assert (decision.outcome, decision.effects) == ("ignored: no such channel", ())


def test_a_begin_streams_and_sends_the_image_asked_for():
    since = {1: (4, "open")}
    decision = command_decision(
        command("begin", resync=True, since=since), owner=7, markets=frozenset({1}), now_ms=9, resolve=Resolver()
    )
    assert decision.outcome == "streaming"
    assert decision.effects == (Stream(9), SendImage(resync=True, since=since))


def test_a_change_saves_the_spec_moves_the_markets_and_sends_a_new_image():
    decision = command_decision(
        command("change", spec=SLIP), owner=7, markets=frozenset({1, 2}), now_ms=9, resolve=Resolver()
    )
    assert decision.outcome == "changed"
    assert decision.effects == (SaveSpec(SLIP), SetMarkets(frozenset(), frozenset({2})), SendImage())


def test_an_unsubscribe_removes_the_channel_with_its_reason():
    plain = command_decision(command("unsubscribe"), owner=7, markets=frozenset(), now_ms=9, resolve=Resolver())
    expired = command_decision(
        command("unsubscribe", reason="expired"), owner=7, markets=frozenset(), now_ms=9, resolve=Resolver()
    )
    assert plain.effects == (Remove("unsubscribed"),)
    assert expired.effects == (Remove("expired"),)


NOW = 1_800_000_000_000


def listed(
    market_id: int, *, sport: str = "football", event_status: str = "scheduled", starts_in_s: int = 3600, **more
):
    from dataclasses import replace

    definition = definition_build(market_id)
    return replace(definition, sport=sport, event_status=event_status, starts_at=NOW + starts_in_s * 1000, **more)


def test_the_query_stage_takes_a_market_that_starts_matching_and_lets_go_of_one_that_stops():
    change = query_change(
        QUERY,
        members=frozenset({2}),
        candidates={
            1: (None, listed(1)),  # new, and a football headline market
            2: (listed(2), listed(2, sport="tennis")),  # moved out of the query
            3: (None, listed(3, headline=False)),  # not an event's first market
        },
        now_ms=NOW,
    )
    assert change == QueryChange(added=frozenset({1}), removed=frozenset({2}))
    assert change.effects() == (
        SetQueryMarkets(frozenset({1}), frozenset({2})),
        PublishQuery(added=frozenset({1}), removed=frozenset({2})),
    )


def test_a_held_market_whose_kick_off_or_event_status_changed_is_named_as_changed():
    change = query_change(
        QUERY,
        members=frozenset({1, 2, 3}),
        candidates={
            1: (listed(1), listed(1, starts_in_s=7200)),  # moved
            2: (listed(2), listed(2, event_status="in_play")),  # kicked off
            3: (listed(3), listed(3)),  # the same (a replayed record): nothing to say
        },
        now_ms=NOW,
    )
    assert change == QueryChange(changed=frozenset({1, 2}))
    assert (
        query_change(QUERY, members=frozenset({3}), candidates={3: (listed(3), listed(3))}, now_ms=NOW).effects() == ()
    )


def test_a_finished_or_removed_market_leaves_every_query():
    change = query_change(
        QUERY,
        members=frozenset({1, 2}),
        candidates={1: (listed(1), listed(1, event_status="finished")), 2: (listed(2), None)},
        now_ms=NOW,
    )
    assert change == QueryChange(removed=frozenset({1, 2}))


def test_deltas_reach_each_channel_with_the_markets_it_holds_in_order():
    routes = fan_out_routes({2: ["a", "b"], 1: ["a"], 3: []})
    assert routes == {"a": [1, 2], "b": [2]}


def test_match_states_reach_each_channel_showing_a_market_of_the_event():
    routes = match_routes({10: [1, 2], 20: [3]}, {1: ["a"], 2: ["a", "b"], 3: ["b"]})
    assert routes == {"a": [10], "b": [10, 20]}


def test_a_slip_delta_needs_the_states_of_its_other_markets_a_markets_delta_does_not():
    assert context_markets(SLIP, held={1, 2, 3}, changed=[2]) == {1, 3}
    assert context_markets(MARKETS, held={1, 2, 3}, changed=[2]) == set()
