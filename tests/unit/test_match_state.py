import orjson
import pytest

from odds.feed.matchstate import (
    breaks_passed,
    in_break,
    match_clock,
    match_state_build,
    tennis_from_score,
    tennis_score,
)
from odds.feed.pricing.tennis import TennisLive, point_played
from reducers.matchstate import ConflatedMatch, conflate_matches, match_apply
from reducers.schemas import InvalidRecord, MatchStateUpdate, MatchSuspension, decode_match_state

NOW = 1_700_000_000_000


def football(*, event_id: int = 7, seq: int = 1, elapsed_s: float = 600, home: int = 0, away: int = 0):
    return match_state_build(
        event_id=event_id,
        seq=seq,
        sport="football",
        status="in_play",
        elapsed_s=elapsed_s,
        home=home,
        away=away,
        incidents=[],
        now_ms=NOW,
        rate=1,
    )


def test_football_clock_counts_up_in_the_first_half():
    state = football(elapsed_s=12 * 60 + 5)
    assert state.status == "in_play"
    assert state.period == 1
    assert state.clock is not None
    assert (state.clock.running, state.clock.elapsed_s, state.clock.direction) == (True, 725, "up")


def test_football_first_half_runs_into_added_time():
    clock = match_clock(sport="football", elapsed_s=45 * 60 + 30, at_ms=NOW, rate=1)
    assert clock is not None
    assert clock.running
    assert clock.elapsed_s == 45 * 60 + 30


def test_football_half_time_stops_the_clock_at_45_minutes():
    state = football(elapsed_s=47 * 60)
    assert state.status == "break"
    assert state.clock is not None
    assert (state.clock.running, state.clock.elapsed_s) == (False, 45 * 60)
    assert in_break(sport="football", elapsed_s=47 * 60)


def test_football_second_half_starts_from_45_minutes():
    state = football(elapsed_s=49 * 60 + 10)
    assert state.period == 2
    assert state.clock is not None
    assert state.clock.running
    assert state.clock.elapsed_s == 45 * 60 + 10


def test_basketball_quarters_count_down_from_twelve_minutes():
    clock = match_clock(sport="basketball", elapsed_s=14 * 60 + 30, at_ms=NOW, rate=1)
    assert clock is not None
    assert (clock.direction, clock.limit_s, clock.elapsed_s, clock.running) == ("down", 720, 30, True)
    between = match_clock(sport="basketball", elapsed_s=12 * 60 + 30, at_ms=NOW, rate=1)
    assert between is not None
    assert not between.running
    assert between.elapsed_s == 720


def tennis_after(winners: list[str]) -> TennisLive:
    live = TennisLive()
    for winner in winners:
        live = point_played(live, "home" if winner == "home" else "away").live
    return live


def test_tennis_has_sets_games_points_and_the_server_and_no_clock():
    # Home takes the first set 6-0, each breaks the other in the second, and the home player,
    # serving the third game, trails 15-30.
    live = tennis_after(["home"] * 24 + ["away"] * 4 + ["home"] * 4 + ["away", "away", "home"])
    state = match_state_build(
        event_id=3,
        seq=1,
        sport="tennis",
        status="in_play",
        elapsed_s=1800,
        home=1,
        away=0,
        tennis=live,
        incidents=[],
        now_ms=NOW,
        rate=1,
    )
    assert state.clock is None
    assert state.score == {
        "sets": [1, 0],
        "games": [1, 1],
        "points": ["15", "30"],
        "set_games": [[6, 0]],
        "server": "home",
    }
    assert state.period == 2


def test_tennis_set_at_six_all_goes_to_a_tiebreak_counted_in_points_then_to_seven():
    games = (["home"] * 4 + ["away"] * 4) * 6  # each holds serve to six-all
    live = tennis_after([*games, "home", "home", "away"])
    assert live.games == (6, 6)
    assert tennis_score(live)["points"] == ["2", "1"]
    done = tennis_after(games + ["away"] * 7)
    assert tennis_score(done)["set_games"] == [[6, 7]]
    assert tennis_score(done)["sets"] == [0, 1]


def test_deuce_and_advantage_are_named_as_the_umpire_calls_them():
    deuce = ["home", "away"] * 3
    assert tennis_score(tennis_after(deuce))["points"] == ["40", "40"]
    assert tennis_score(tennis_after([*deuce, "away"]))["points"] == ["40", "AD"]


def test_a_tennis_score_read_back_from_its_match_state_is_the_same_match():
    live = tennis_after(["home"] * 24 + ["away"] * 4 + ["home", "away", "home", "away", "home", "away", "away"])
    assert tennis_from_score(tennis_score(live)) == live


def test_basketball_carries_its_quarters_scores():
    state = match_state_build(
        event_id=4,
        seq=1,
        sport="basketball",
        status="in_play",
        elapsed_s=20 * 60,
        home=40,
        away=38,
        periods=[[25, 20], [15, 18]],
        incidents=[],
        now_ms=NOW,
        rate=1,
    )
    assert state.score == {"home": 40, "away": 38, "periods": [[25, 20], [15, 18]]}
    assert decode_match_state(state.encode()) == state


def test_a_suspension_travels_with_the_match_state_while_in_play():
    suspension = MatchSuspension(reason="goal", since=NOW - 5_000)
    state = football(home=1).__class__(**{**football(home=1).__dict__, "suspension": suspension})
    assert decode_match_state(state.encode()).suspension == suspension
    message = match_apply(stored_seq=None, item=ConflatedMatch(state, 1, NOW), reducer_ts=NOW)
    assert message is not None
    assert message["suspension"] == {"reason": "goal", "since": NOW - 5_000}


def test_match_state_round_trips_through_its_record():
    state = football(home=2, away=1)
    assert decode_match_state(state.encode()) == state


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"v": 2}, "bad_version"),
        ({"sport": "curling"}, "bad_field"),
        ({"score": {"home": -1, "away": 0}}, "bad_field"),
        ({"clock": {"running": "yes", "elapsed_s": 1, "at": 1}}, "bad_field"),
        ({"incidents": [{"kind": "own_goal", "side": "home", "period": 1, "at": 1}]}, "bad_field"),
        ({"seq": 0}, "bad_field"),
    ],
)
def test_bad_match_state_is_rejected_with_its_reason(change, reason):
    record = {**football().to_json(), **change}
    with pytest.raises(InvalidRecord) as caught:
        decode_match_state(orjson.dumps(record))
    assert caught.value.reason == reason


def test_tennis_with_a_clock_is_rejected():
    record = football().to_json() | {
        "sport": "tennis",
        "score": {"sets": [0, 0], "games": [0, 0], "points": ["0", "0"]},
    }
    with pytest.raises(InvalidRecord, match="tennis has no match clock"):
        decode_match_state(orjson.dumps(record))


def test_empty_match_state_record_is_rejected():
    with pytest.raises(InvalidRecord) as caught:
        decode_match_state(None)
    assert caught.value.reason == "empty"


def test_conflation_keeps_each_events_newest_state():
    result = conflate_matches([(football(seq=2, home=1), 10), (football(seq=1), 11), (football(event_id=8, seq=5), 12)])
    assert [(c.update.event_id, c.update.seq, c.merged, c.kafka_ts) for c in result] == [(7, 2, 2, 10), (8, 5, 1, 12)]


def test_stale_sequence_is_not_applied():
    item = ConflatedMatch(football(seq=3), 1, NOW)
    assert match_apply(stored_seq=4, item=item, reducer_ts=NOW) is None


def test_replayed_sequence_changes_nothing():
    item = ConflatedMatch(football(seq=4, home=1), 1, NOW)
    assert match_apply(stored_seq=None, item=item, reducer_ts=NOW) is not None
    assert match_apply(stored_seq=4, item=item, reducer_ts=NOW) is None


def test_applied_state_is_the_match_message():
    item = ConflatedMatch(football(seq=5, home=2, away=1), 1, NOW + 1)
    message = match_apply(stored_seq=4, item=item, reducer_ts=NOW + 2)
    assert message is not None
    assert message["type"] == "match"
    assert message["v"] == 1
    assert message["score"] == {"home": 2, "away": 1}
    clock = message["clock"]  # a football state carries its clock
    assert clock is not None
    assert clock["running"] is True
    assert message["ts"]["reducer"] == NOW + 2


def test_match_state_key_is_the_event_id():
    assert isinstance(football(), MatchStateUpdate)
    assert football(event_id=42).key() == b"42"


def test_a_break_begun_and_over_between_two_looks_is_named():
    half_time = breaks_passed(sport="football", from_s=2_000, to_s=3_000)  # half time from 46:00 to 49:00
    assert [(p.period, p.playing, p.start_s) for p in half_time] == [(1, False, 46 * 60)]
    assert breaks_passed(sport="football", from_s=2_000, to_s=2_800) == []  # still under way: shown as it is
    assert breaks_passed(sport="football", from_s=2_800, to_s=3_000) == []  # begun before the first look
    assert [p.period for p in breaks_passed(sport="basketball", from_s=0, to_s=54 * 60)] == [1, 2, 3]
    assert breaks_passed(sport="tennis", from_s=0, to_s=10_000) == []
