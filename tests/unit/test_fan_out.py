"""The fan-out of applied states to subscriber channels, on an in-memory Redis that runs the
store's scripts: every channel's frame in a fixed number of round trips however many channels
there are, and nothing lost when a batch fails between writing its states and fanning them out
(the batch's replay sends what the failed attempt did not)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
import pytest

from reducers.frames import MarketFrame
from reducers.matchstate import ConflatedMatch, match_message
from reducers.schemas import MatchClock, MatchStateUpdate
from reducers.subscriptions import StreamCommand, spec_from_json
from spark.jobs.commands import CommandBatchProcessor
from spark.jobs.matches import MatchBatchProcessor
from spark.jobs.prices import PriceBatchProcessor
from store import keys
from store.channels import ROUTE_MARKETS, ChannelStore
from tests.factories import market_ids_define, raw_price_update
from tests.fakes import FakeDeadLetters, fake_store_client


class InjectedFailure(RuntimeError):
    pass


class FailingFanOut(ChannelStore):
    """The real channel store, except that its next ``fails`` fan-outs raise before sending."""

    def __init__(self, client: Any, *, fails: int) -> None:
        super().__init__(client)
        self.fails = fails

    def fan_out(self, states: Mapping[int, Any], *, journal: str | None = None) -> int:
        if states and self.fails:
            self.fails -= 1
            raise InjectedFailure("the batch failed after writing its states")
        return super().fan_out(states, journal=journal)

    def fan_out_matches(self, matches: Mapping[int, Any], *, journal: str | None = None) -> int:
        if matches and self.fails:
            self.fails -= 1
            raise InjectedFailure("the batch failed after writing its match states")
        return super().fan_out_matches(matches, journal=journal)


class CountingClient:
    """A Redis client that counts the round trips made through it (commands and pipelines)."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.round_trips = 0

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._client, name)
        if name == "pipeline":

            def pipeline(*args: Any, **kwargs: Any) -> Any:
                pipe = attribute(*args, **kwargs)
                execute = pipe.execute

                def counted() -> Any:
                    self.round_trips += 1
                    return execute()

                pipe.execute = counted
                return pipe

            return pipeline
        if callable(attribute) and name not in ("register_script",):

            def call(*args: Any, **kwargs: Any) -> Any:
                self.round_trips += 1
                return attribute(*args, **kwargs)

            return call
        return attribute


@pytest.fixture
def store():
    return fake_store_client()


def row(value: bytes, offset: int, key: bytes = b"k") -> dict[str, Any]:
    return {"key": key, "value": value, "partition": 0, "offset": offset, "kafka_ts": 1_700_000_000_000 + offset}


def price_rows(*updates: tuple[int, int, tuple[str, ...]]) -> list[dict[str, Any]]:
    return [
        row(raw_price_update(market_id=m, seq=seq, prices=tuple((i + 1, p) for i, p in enumerate(ps))).encode(), offset)
        for offset, (m, seq, ps) in enumerate(updates)
    ]


def open_channel(store: Any, channel: str, spec: dict[str, Any], *, offset: int = 0) -> None:
    commands = CommandBatchProcessor(redis_client=store, dead_letters=FakeDeadLetters())
    rows = []
    for at, kind in enumerate(("subscribe", "begin")):
        command = StreamCommand(
            type=kind,
            channel_id=channel,
            user_id=7,
            spec=spec_from_json(spec) if kind == "subscribe" else None,
            ts=1_700_000_000_000,
        )
        rows.append(row(command.encode(), offset + at, command.key()))
    commands.process_rows(rows)


def logged(store: Any, channel: str) -> list[dict[str, Any]]:
    """The channel's frames in its resume log, oldest first."""
    return [orjson.loads(frame) for frame in reversed(store.lrange(keys.channel_log(channel), 0, -1))]


SLIP = {"view": "slip", "slip": [{"selection_id": 1, "market_id": 1}, {"selection_id": 2, "market_id": 2}]}
BETS = {
    "view": "bets",
    "bets": [{"bet_id": 5, "stake": "10.00", "legs": [{"selection_id": 1, "market_id": 1, "price": "2.00"}]}],
}


def test_a_price_batch_failing_between_its_state_write_and_its_fan_out_reaches_the_channels_on_replay(store):
    market_ids_define(store, 1, 2)
    prices = PriceBatchProcessor(redis_client=store, dead_letters=FakeDeadLetters())
    prices.process_rows(price_rows((1, 1, ("2.00", "3.00")), (2, 1, ("1.50", "2.50"))))
    open_channel(store, "s" * 24, SLIP)
    open_channel(store, "b" * 24, BETS, offset=2)
    failing = PriceBatchProcessor(
        redis_client=store, dead_letters=FakeDeadLetters(), channels=FailingFanOut(store, fails=1)
    )
    failing.process_rows(price_rows())  # a processor's first batch: nothing journaled yet
    batch = price_rows((1, 2, ("4.00", "3.00")))

    with pytest.raises(InjectedFailure):
        failing.process_rows(batch)
    assert int(store.hget(keys.market_state(1), "seq")) == 2  # written, never fanned out
    assert [f["type"] for f in logged(store, "s" * 24)] == ["view.image"]

    failing.process_rows(batch)  # Spark replays the failed batch: its price is "not newer"

    slip_delta = logged(store, "s" * 24)[-1]
    assert (slip_delta["type"], [(m["market_id"], m["seq"]) for m in slip_delta["markets"]]) == ("view.delta", [(1, 2)])
    assert slip_delta["slip"]["combined_odds"] == "10.00"  # 4.00 x 2.50
    bets_delta = logged(store, "b" * 24)[-1]
    assert bets_delta["bets"] == [{"bet_id": 5, "cash_out": "4.75"}]
    assert not store.exists(keys.fanout_journal("prices"))


def test_a_fanned_out_batch_leaves_no_journal_and_its_replay_sends_nothing_again(store):
    market_ids_define(store, 1, 2)
    prices = PriceBatchProcessor(redis_client=store, dead_letters=FakeDeadLetters())
    open_channel(store, "s" * 24, SLIP)
    batch = price_rows((1, 1, ("2.00", "3.00")))
    prices.process_rows(batch)
    sent = len(logged(store, "s" * 24))

    prices.process_rows(batch)

    assert not store.exists(keys.fanout_journal("prices"))
    assert len(logged(store, "s" * 24)) == sent


def match_rows(event_id: int, seq: int, home: int) -> list[dict[str, Any]]:
    update = MatchStateUpdate(
        event_id=event_id,
        seq=seq,
        sport="football",
        status="in_play",
        period=1,
        score={"home": home, "away": 0},
        clock=MatchClock(running=True, elapsed_s=600, at=1_700_000_000_000),
        event_ts=1_700_000_000_000,
        produce_ts=1_700_000_000_001,
    )
    return [row(update.encode(), seq)]


def test_a_match_state_batch_failing_before_its_fan_out_reaches_the_channels_on_replay(store):
    market_ids_define(store, 1)  # event 1, its one market 1
    open_channel(store, "s" * 24, SLIP)
    matches = MatchBatchProcessor(
        redis_client=store, dead_letters=FakeDeadLetters(), channels=FailingFanOut(store, fails=1)
    )
    matches.process_rows([])
    batch = match_rows(1, 3, home=1)

    with pytest.raises(InjectedFailure):
        matches.process_rows(batch)
    matches.process_rows(batch)

    frame = logged(store, "s" * 24)[-1]
    assert frame["type"] == "view.match"
    assert [(m["event_id"], m["seq"], m["score"]) for m in frame["matches"]] == [(1, 3, {"home": 1, "away": 0})]


def test_a_batch_reaches_every_channel_in_a_fixed_number_of_round_trips(store):
    market_ids_define(store, *range(1, 11))
    for at in range(300):
        legs = [{"selection_id": 1, "market_id": 1 + (at + leg) % 10} for leg in range(3)]
        open_channel(store, f"{at:024d}", {"view": "slip", "slip": legs}, offset=2 * at)
    client = CountingClient(store)
    channels = ChannelStore(client)  # type: ignore[arg-type]  # the counting proxy has redis-py's interface
    channels.fan_out({1: market_state(1, seq=8)})  # Redis loads the scripts on their first use
    client.round_trips = 0

    sent = channels.fan_out({m: market_state(m, seq=9) for m in range(1, 11)})

    assert sent == 300
    assert client.round_trips == 2  # the channels' routes, then every frame
    assert all(logged(store, f"{at:024d}")[-1]["type"] == "view.delta" for at in range(300))


def market_state(market_id: int, *, seq: int) -> MarketFrame:
    return {
        "type": "market",
        "v": 1,
        "market_id": market_id,
        "seq": seq,
        "status": "open",
        "tradable": True,
        "selections": [{"id": 1, "price": "2.00", "status": "active"}],
    }


def test_the_stored_match_state_is_what_a_journal_sends_again(store):
    market_ids_define(store, 1)
    open_channel(store, "s" * 24, SLIP)
    update = MatchStateUpdate(
        event_id=1,
        seq=4,
        sport="football",
        status="in_play",
        period=2,
        score={"home": 2, "away": 1},
        event_ts=1_700_000_000_000,
        produce_ts=1_700_000_000_001,
    )
    message = match_message(item=ConflatedMatch(update, 1, 1_700_000_000_002), reducer_ts=1_700_000_000_003)
    store.hset(keys.match_state(1), mapping={"seq": 4, "state": orjson.dumps(message)})
    store.sadd(keys.fanout_journal("matches"), 1)

    assert ChannelStore(store).fan_out_journaled(keys.fanout_journal("matches"), of="matches") == 1
    assert logged(store, "s" * 24)[-1]["matches"][0]["score"] == {"home": 2, "away": 1}
    assert not store.exists(keys.fanout_journal("matches"))


def test_a_slip_sums_each_held_market_at_its_newest_state_from_batch_to_batch(store):
    market_ids_define(store, 1, 2)
    prices = PriceBatchProcessor(redis_client=store, dead_letters=FakeDeadLetters())
    prices.process_rows(price_rows((1, 1, ("2.00", "3.00")), (2, 1, ("1.50", "2.50"))))
    open_channel(store, "s" * 24, SLIP)
    prices.process_rows(price_rows((1, 2, ("3.00", "3.00"))))  # market 2's state read and kept
    assert logged(store, "s" * 24)[-1]["slip"]["combined_odds"] == "7.50"  # 3.00 x 2.50

    prices.process_rows(price_rows((2, 2, ("1.50", "4.00"))))
    prices.process_rows(price_rows((1, 3, ("2.00", "3.00"))))  # market 2 held at its new state

    assert logged(store, "s" * 24)[-1]["slip"]["combined_odds"] == "8.00"  # 2.00 x 4.00


def test_a_channel_holding_markets_of_several_script_calls_gets_one_frame_and_no_routing_set_is_left(store):
    far = 1 + ROUTE_MARKETS  # in the batch's second script call
    market_ids_define(store, 1, far)
    legs = [{"selection_id": 1, "market_id": 1}, {"selection_id": 1, "market_id": far}]
    open_channel(store, "s" * 24, {"view": "slip", "slip": legs})
    images = len(logged(store, "s" * 24))

    sent = ChannelStore(store).fan_out({1: market_state(1, seq=3), far: market_state(far, seq=3)})

    frames = logged(store, "s" * 24)[images:]
    assert sent == 1
    assert [[m["market_id"] for m in f["markets"]] for f in frames] == [[1, far]]
    assert not store.keys(keys.fanout_routed("*"))
