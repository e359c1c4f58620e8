"""The subscriber channels' decisions (reducers/channels.py), without a broker or a store."""

from __future__ import annotations

from reducers.channels import (
    Create,
    QueryMember,
    Remove,
    SaveSpec,
    SendImage,
    SetMarkets,
    Stream,
    command_decision,
    context_markets,
    fan_out_routes,
    match_routes,
    query_refresh_decision,
)
from reducers.subscriptions import StreamCommand, spec_from_json

CHANNEL = "c" * 32
MARKETS = spec_from_json({"view": "markets", "markets": [1, 2]})
QUERY = spec_from_json({"view": "markets", "markets": [1], "query": {"sport": "football"}})
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


def test_a_query_subscribe_joins_the_query_stage_with_what_the_query_matches_now():
    resolve = Resolver(3, 4)
    decision = command_decision(
        command("subscribe", spec=QUERY), owner=None, markets=frozenset(), now_ms=5, resolve=resolve
    )
    assert decision.effects == (Create(7, QUERY, 5), QueryMember(True), SetMarkets(frozenset({1, 3, 4}), frozenset()))
    assert resolve.asked == [QUERY]


def test_a_repeated_subscribe_changes_nothing_and_resolves_nothing():
    resolve = Resolver(3)
    decision = command_decision(
        command("subscribe", spec=QUERY), owner=7, markets=frozenset({1, 3}), now_ms=5, resolve=resolve
    )
    assert (decision.outcome, decision.effects, resolve.asked) == ("exists", (), [])


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
    assert decision.effects == (
        SaveSpec(SLIP),
        QueryMember(False),
        SetMarkets(frozenset(), frozenset({2})),
        SendImage(),
    )


def test_an_unsubscribe_removes_the_channel_with_its_reason():
    plain = command_decision(command("unsubscribe"), owner=7, markets=frozenset(), now_ms=9, resolve=Resolver())
    expired = command_decision(
        command("unsubscribe", reason="expired"), owner=7, markets=frozenset(), now_ms=9, resolve=Resolver()
    )
    assert plain.effects == (Remove("unsubscribed"),)
    assert expired.effects == (Remove("expired"),)


def test_the_query_stage_moves_markets_and_sends_an_image_only_to_a_streaming_channel():
    assert query_refresh_decision(QUERY, markets=frozenset({1, 3}), streaming=True, matched={3}) == ()
    moved = SetMarkets(frozenset({4}), frozenset({3}))
    assert query_refresh_decision(QUERY, markets=frozenset({1, 3}), streaming=True, matched={4}) == (moved, SendImage())
    assert query_refresh_decision(QUERY, markets=frozenset({1, 3}), streaming=False, matched={4}) == (moved,)


def test_deltas_reach_each_channel_with_the_markets_it_holds_in_order():
    routes = fan_out_routes({2: ["a", "b"], 1: ["a"], 3: []})
    assert routes == {"a": [1, 2], "b": [2]}


def test_match_states_reach_each_channel_showing_a_market_of_the_event():
    routes = match_routes({10: [1, 2], 20: [3]}, {1: ["a"], 2: ["a", "b"], 3: ["b"]})
    assert routes == {"a": [10], "b": [10, 20]}


def test_a_slip_delta_needs_the_states_of_its_other_markets_a_markets_delta_does_not():
    assert context_markets(SLIP, held={1, 2, 3}, changed=[2]) == {1, 3}
    assert context_markets(MARKETS, held={1, 2, 3}, changed=[2]) == set()
