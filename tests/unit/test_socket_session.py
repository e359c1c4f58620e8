"""One websocket's protocol state and decisions (odds/streaming/session.py), without Redis, a hub
or a socket: what is owed to the client and in which order, and what to do when the hub's
subscription comes back."""

from __future__ import annotations

import orjson

from odds.streaming.session import CHANNEL_QUEUE_LIMIT, Detach, Limits, Recover, Reimage, Resync, Session

LIMITS = Limits(frames_per_s=3, image_markets_per_min=10, markets=4, events=2)
PX1, PX2 = b"sb:px:1", b"sb:px:2"
CH = b"sb:ch:" + b"c" * 32


def market(market_id: int, seq: int) -> str:
    return orjson.dumps({"type": "market", "market_id": market_id, "seq": seq}).decode()


def status(market_id: int, seq: int) -> str:
    return orjson.dumps({"type": "market.status", "market_id": market_id, "seq": seq}).decode()


def channel_frame(seq: int) -> str:
    return orjson.dumps({"seq": seq, "type": "view.delta", "v": 1, "channel": "c" * 32, "markets": []}).decode()


def kinds(texts: list[str]) -> list[tuple[str, int | None]]:
    decoded = [orjson.loads(t) for t in texts]
    return [(d["type"], d.get("seq", d.get("merged"))) for d in decoded]


def attached() -> Session:
    session = Session(limits=LIMITS)
    session.attach(CH, "c" * 32)
    return session


def test_a_slow_client_gets_the_newest_state_of_each_market_and_how_many_were_replaced():
    session = Session(limits=LIMITS)
    for seq in (1, 2, 3):
        session.deliver(PX1, market(1, seq))
    session.deliver(PX2, market(2, 1))
    assert kinds(session.take(now_ms=1)) == [("market", 3), ("market", 1), ("conflated", 2)]
    assert not session.owes()


def test_a_status_change_is_never_conflated_and_goes_before_the_states():
    session = Session(limits=LIMITS)
    session.deliver(PX1, market(1, 1))
    session.deliver(PX1, status(1, 2))
    session.deliver(PX1, market(1, 2))
    assert kinds(session.take(now_ms=1)) == [("market.status", 2), ("market", 2), ("conflated", 1)]


def test_a_batched_socket_gets_its_markets_in_one_frame():
    session = Session(limits=LIMITS, batched=True)
    session.deliver(PX1, market(1, 1))
    session.deliver(PX2, market(2, 1))
    [batch] = session.take(now_ms=1)
    assert [item["market_id"] for item in orjson.loads(batch)["items"]] == [1, 2]


def test_channel_frames_keep_their_order_and_a_client_too_far_behind_gets_a_resync_not_a_gap():
    session = attached()
    for seq in range(1, CHANNEL_QUEUE_LIMIT + 1):
        assert session.deliver(CH, channel_frame(seq)) == []
    assert session.deliver(CH, channel_frame(CHANNEL_QUEUE_LIMIT + 1)) == [Resync("c" * 32)]
    assert session.take(now_ms=1) == []


def test_an_ended_channel_is_told_and_forgotten():
    session = attached()
    ended = orjson.dumps({"type": "ended", "channel": "c" * 32, "reason": "expired"}).decode()
    assert session.deliver(CH, ended) == [Detach(CH, "c" * 32)]
    assert session.attached == {}
    assert session.take(now_ms=1) == [ended]


def test_match_states_are_latest_wins_per_event():
    session = Session(limits=LIMITS)
    session.follow(["sb:mt:9"], [9])
    for seq in (1, 2):
        session.deliver(b"sb:mt:9", orjson.dumps({"type": "match", "event_id": 9, "seq": seq}).decode())
    assert kinds(session.take(now_ms=1)) == [("match", 2)]
    assert session.unfollow(["sb:mt:9", "sb:mt:10"]) == ["sb:mt:9"]


def test_a_tick_goes_out_at_once_to_an_idle_socket_and_folds_into_the_queue_of_a_busy_one():
    session = Session(limits=LIMITS, batched=True)
    assert session.deliver_tick("tick-1", (PX1,), {PX1: market(1, 1)}, 0, idle=True) is True
    assert session.deliver_tick("tick-2", (PX1,), {PX1: market(1, 2)}, 0, idle=False) is False
    assert session.deliver_tick("tick-3", (PX1, PX2), {PX1: market(1, 3), PX2: market(2, 1)}, 0, idle=False) is False
    [batch, conflated] = session.take(now_ms=1)
    assert [(i["market_id"], i["seq"]) for i in orjson.loads(batch)["items"]] == [(1, 3), (2, 1)]
    assert orjson.loads(conflated) == {"type": "conflated", "merged": 1}


def test_when_the_hub_reconnects_frames_are_held_while_the_log_is_read_back_then_queued_once_in_order():
    session = attached()
    session.watch([1])
    session.follow(["sb:mt:9"], [9])
    session.deliver(CH, channel_frame(1))
    session.take(now_ms=1)

    actions = session.hub_reconnected()
    assert actions == [Recover(CH, "c" * 32, 1), Reimage(markets=(1,), events=(9,))]
    session.deliver(CH, channel_frame(4))  # published on the new connection
    assert session.take(now_ms=1) == []
    assert session.recovered(CH, logged=[channel_frame(s) for s in (1, 2, 3, 4)], ended=None) == []
    assert kinds(session.take(now_ms=1)) == [("view.delta", 2), ("view.delta", 3), ("view.delta", 4)]


def test_a_log_that_no_longer_reaches_back_means_a_resync():
    session = attached()
    session.deliver(CH, channel_frame(1))
    session.take(now_ms=1)
    session.hub_reconnected()
    assert session.recovered(CH, logged=[channel_frame(5)], ended=None) == [Resync("c" * 32)]
    assert session.take(now_ms=1) == [], "no frame past a gap"
    session.hub_reconnected()
    assert session.recovered(CH, logged=None, ended=None) == [Resync("c" * 32)]  # Redis away again


def test_a_channel_that_ended_while_the_hub_was_away_is_told_why():
    session = attached()
    session.hub_reconnected()
    assert session.recovered(CH, logged=[], ended="lost") == [Detach(CH, "c" * 32)]
    assert orjson.loads(session.take(now_ms=1)[0]) == {"type": "ended", "channel": "c" * 32, "reason": "lost"}


def test_client_frames_images_and_watches_have_their_limits():
    session = Session(limits=LIMITS)
    assert [session.frame_allowed(second=7) for _ in range(4)] == [True, True, True, False]
    assert session.frame_allowed(second=8)
    assert session.image_allowed(markets=6, now=0.0)
    assert not session.image_allowed(markets=5, now=30.0)
    assert session.image_allowed(markets=5, now=61.0)  # the first image left the minute
    assert session.watch_refusal([1, 2, 3, 4], []) is None
    assert session.watch_refusal([1, 2, 3, 4, 5], []) == ("too_many_markets", "at most 4 markets")
    assert session.watch_refusal([], ["sb:mt:1", "sb:mt:2", "sb:mt:3"]) == ("too_many_events", "at most 2 events")


def test_a_heartbeat_is_owed_after_a_quiet_spell_and_sent_last():
    session = Session(limits=LIMITS)
    session.heartbeat_due = True
    session.deliver(PX1, market(1, 1))
    assert kinds(session.take(now_ms=5)) == [("market", 1), ("heartbeat", None)]
    assert not session.owes()


GM = b"sb:gm:9"


def game_frame(kind: str, batch: int) -> str:
    return orjson.dumps({"type": kind, "v": 1, "event_id": 9, "batch": batch}).decode()


def test_a_games_public_frames_are_never_conflated_and_keep_their_order():
    session = Session(limits=LIMITS)
    session.follow_games(["sb:gm:9"], [9])
    for batch, kind in ((1, "game.questions"), (1, "game.top"), (2, "game.questions"), (3, "game.top")):
        session.deliver(GM, game_frame(kind, batch))
    taken = [orjson.loads(t) for t in session.take(now_ms=1)]
    assert [(t["type"], t["batch"]) for t in taken] == [
        ("game.questions", 1),
        ("game.top", 1),
        ("game.questions", 2),
        ("game.top", 3),
    ]


def test_followed_games_are_read_again_when_the_hub_reconnects_and_count_against_the_event_limit():
    session = Session(limits=LIMITS)
    session.follow_games(["sb:gm:9"], [9])
    assert session.hub_reconnected() == [Reimage((), (), (9,))]
    assert session.watch_refusal([], [], ["sb:gm:10", "sb:gm:11"]) == ("too_many_events", "at most 2 games")
    assert session.unfollow_games(["sb:gm:9", "sb:gm:12"]) == ["sb:gm:9"]
    assert session.hub_reconnected() == []


def test_a_channel_numbered_back_after_a_failover_gets_an_image_numbered_past_the_client():
    """A Redis failover can lose frames the client has seen (published by the old master, never
    replicated): the new master numbers the next frames again from below. The client would drop
    them as repeats and stand still; the socket asks once for an image numbered past them."""
    session = attached()
    for seq in (1, 2, 3, 4):
        session.deliver(CH, channel_frame(seq))
    session.take(now_ms=1)
    assert session.deliver(CH, channel_frame(3)) == [Resync("c" * 32, floor=5)]
    assert session.deliver(CH, channel_frame(4)) == [], "one image asked for, not one per frame"
    assert session.take(now_ms=1) == [], "nothing the client would drop"
    assert session.deliver(CH, channel_frame(6)) == []  # the image, numbered past the floor
    assert session.deliver(CH, channel_frame(7)) == []
    assert kinds(session.take(now_ms=1)) == [("view.delta", 6), ("view.delta", 7)]


def test_a_log_read_back_that_ends_below_the_client_means_an_image_numbered_past_it():
    session = attached()
    for seq in (1, 2, 3, 4, 5):
        session.deliver(CH, channel_frame(seq))
    session.take(now_ms=1)
    session.hub_reconnected()
    session.deliver(CH, channel_frame(4))  # held: the new master's numbering, behind the client
    logged = [channel_frame(s) for s in (1, 2, 3)]
    assert session.recovered(CH, logged=logged, ended=None) == [Resync("c" * 32, floor=6)]
    assert session.take(now_ms=1) == []
    assert session.deliver(CH, channel_frame(5)) == [], "dropped while the image is on its way"
    session.deliver(CH, channel_frame(7))
    assert kinds(session.take(now_ms=1)) == [("view.delta", 7)]


def test_a_log_read_back_that_reaches_the_client_asks_for_nothing():
    session = attached()
    for seq in (1, 2):
        session.deliver(CH, channel_frame(seq))
    session.take(now_ms=1)
    session.hub_reconnected()
    assert session.recovered(CH, logged=[channel_frame(s) for s in (1, 2)], ended=None) == []
    assert session.deliver(CH, channel_frame(3)) == []
    assert kinds(session.take(now_ms=1)) == [("view.delta", 3)]


def test_a_frame_read_back_from_the_log_and_then_brought_live_is_not_taken_for_a_numbering_gone_back():
    """A frame published just before the log was read is in the log and may still be on its way
    on the new connection: its live copy is dropped, with no image asked for."""
    session = attached()
    session.deliver(CH, channel_frame(1))
    session.take(now_ms=1)
    session.hub_reconnected()
    assert session.recovered(CH, logged=[channel_frame(s) for s in (1, 2, 3)], ended=None) == []
    assert session.deliver(CH, channel_frame(3)) == [], "the live copy of a frame read back"
    assert session.deliver(CH, channel_frame(4)) == []
    assert kinds(session.take(now_ms=1)) == [("view.delta", 2), ("view.delta", 3), ("view.delta", 4)]
    changed = orjson.dumps({"seq": 4, "type": "view.delta", "v": 1, "channel": "c" * 32, "markets": [1]}).decode()
    assert session.deliver(CH, changed) == [Resync("c" * 32, floor=5)], "another frame numbered 4: gone back"


def test_frames_of_the_log_a_resume_read_that_the_hub_brings_live_after_it_are_dropped_quietly():
    session = attached()
    logged = [channel_frame(s) for s in (3, 4, 5)]
    session.resumed(CH, missed=logged[1:], logged=logged)  # the client had 3; 4 and 5 sent straight
    assert session.deliver(CH, channel_frame(3)) == []
    assert session.deliver(CH, channel_frame(5)) == []
    assert session.take(now_ms=1) == []
    session.deliver(CH, channel_frame(6))
    assert kinds(session.take(now_ms=1)) == [("view.delta", 6)]
