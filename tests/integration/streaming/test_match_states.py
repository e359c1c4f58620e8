"""Match states through the real match-state topic, the Spark matches query, Redis and channels."""

from __future__ import annotations

import orjson
import pytest

from odds.feed.matchstate import match_state_build
from reducers import topics
from reducers.schemas import Incident
from store import keys
from tests.conftest import wait_for
from tests.integration.streaming.dead_letters import dead_letter_of
from tests.integration.streaming.test_subscriptions import Frames, command, definition, new_channel, now_ms, send

pytestmark = pytest.mark.integration


def match(producer, event_id: int, seq: int, *, home: int, away: int) -> None:
    goals = [Incident(kind="goal", side="home", period=1, at=now_ms())] * home
    state = match_state_build(
        event_id=event_id,
        seq=seq,
        sport="football",
        status="in_play",
        elapsed_s=600 + seq,
        home=home,
        away=away,
        incidents=goals,
        now_ms=now_ms(),
        rate=1,
    )
    send(producer, topics.match_states(), state.key(), state.encode())


def stored(redis_client, event_id: int) -> dict | None:
    raw = redis_client.hget(keys.match_state(event_id), "state")
    return orjson.loads(raw) if raw is not None else None


def test_match_states_reach_the_channels_of_the_events_markets(reducers_running, producer, redis_client):
    event = 710_001
    definition(producer, event, sport="football", event_status="in_play")
    wait_for(lambda: redis_client.sismember(keys.event_markets(event), event), what="market defined")
    channel = new_channel()
    frames = Frames(redis_client, channel)
    command(producer, "subscribe", channel, {"view": "markets", "markets": [event]})
    command(producer, "begin", channel)
    frames.wait(lambda f: any(fr["type"] == "view.image" for fr in f), "the image")

    match(producer, event, 5, home=0, away=0)
    match(producer, event, 9, home=1, away=0)
    match(producer, event, 7, home=0, away=3)  # stale: an older sequence
    got = frames.wait(
        lambda f: any(m["seq"] == 9 for fr in f if fr["type"] == "view.match" for m in fr["matches"]), "the goal"
    )
    sent = [m for fr in got if fr["type"] == "view.match" for m in fr["matches"]]
    assert all(m["seq"] != 7 for m in sent), "a stale state is never sent"
    assert sent[-1]["type"] == "match"
    assert sent[-1]["score"] == {"home": 1, "away": 0}
    assert sent[-1]["clock"]["running"] is True
    state = stored(redis_client, event)
    assert state is not None
    assert (state["seq"], state["score"]) == (9, {"home": 1, "away": 0})
    seqs = [f["seq"] for f in got]
    assert seqs == list(range(1, len(seqs) + 1)), "match frames keep the channel's sequence"


def test_a_resubscribed_channel_gets_the_match_state_in_its_image(reducers_running, producer, redis_client):
    event = 710_002
    definition(producer, event, sport="football", event_status="in_play")
    wait_for(lambda: redis_client.sismember(keys.event_markets(event), event), what="market defined")
    match(producer, event, 3, home=2, away=1)
    wait_for(lambda: stored(redis_client, event) is not None, what="match state stored")
    match(producer, event, 3, home=2, away=1)  # replayed: changes nothing
    channel = new_channel()
    frames = Frames(redis_client, channel)
    command(producer, "subscribe", channel, {"view": "markets", "markets": [event]})
    command(producer, "begin", channel)
    image = frames.wait(lambda f: any(fr["type"] == "view.image" for fr in f), "the image")[0]
    assert [(m["event_id"], m["seq"], m["score"]) for m in image["matches"]] == [(event, 3, {"home": 2, "away": 1})]


def test_a_bad_match_state_goes_to_its_dead_letter_topic_with_the_reason(reducers_running, producer, redis_client):
    bad = orjson.dumps({"v": 1, "event_id": 710_003, "seq": 1, "sport": "curling"})
    send(producer, topics.match_states(), b"710003", bad)
    headers = dict(dead_letter_of(bad, source=topics.match_states()).headers())
    assert headers["reason"] == b"bad_field"
    assert stored(redis_client, 710_003) is None
