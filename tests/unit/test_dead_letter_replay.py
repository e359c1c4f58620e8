"""Dead-letter replay decisions (reducers/dead_letters.py) and what a reducer does with a replayed
record that fails again (spark/sinks/dead_letter.py ``Rejects``): it keeps its first failure,
its replay count goes up, it is counted again, and after ``MAX_REPLAYS`` it may not be replayed."""

from __future__ import annotations

from pathlib import Path

from reducers import topics
from reducers.dead_letters import (
    COUNTER_AGAIN,
    HEADER_FIRST_ORIGIN,
    HEADER_FIRST_REASON,
    HEADER_REPLAY,
    HEADER_REPLAYS,
    MAX_REPLAYS,
    SOURCES,
    FirstFailure,
    first_failure,
    record_digest,
    replay_headers,
    replay_refusal,
    source_of_reason,
)
from spark.sinks.dead_letter import Rejects
from store import keys
from store.dead_letters import ReplayLedger
from tests.fakes import FakeDeadLetters, fake_store_client

ROOT = Path(__file__).resolve().parent.parent.parent


def test_a_first_dead_letter_is_its_own_first_failure():
    failure = first_failure(headers={}, reason="undecodable", detail="bad json", origin="t/0/7", at_ms=1000)
    assert failure == FirstFailure(reason="undecodable", detail="bad json", origin="t/0/7", at_ms=1000, replays=0)


def test_a_replayed_record_that_failed_again_names_its_first_failure_and_replay_count():
    headers = dict(replay_headers(failure=FirstFailure("undecodable", "bad json", "t/0/7", 1000, 1), replay_id=42))
    again = first_failure(headers=headers, reason="apply_failed", detail="other", origin="t/3/99", at_ms=5000)
    assert again == FirstFailure(reason="undecodable", detail="bad json", origin="t/0/7", at_ms=1000, replays=2)
    assert headers[HEADER_REPLAY] == b"42"


def test_replays_stop_at_the_limit():
    assert replay_refusal(FirstFailure("r", "d", "o", 0, MAX_REPLAYS - 1)) is None
    assert "discard" in str(replay_refusal(FirstFailure("r", "d", "o", 0, MAX_REPLAYS)))


def test_the_digest_tells_records_apart_by_topic_key_and_value():
    one = record_digest(topic="a", key=b"1", value=b"x")
    assert one == record_digest(topic="a", key=b"1", value=b"x")
    assert (
        len({one, record_digest(topic="b", key=b"1", value=b"x"), record_digest(topic="a", key=b"1x", value=b"")}) == 3
    )
    assert record_digest(topic="a", key=None, value=None) == record_digest(topic="a", key=b"", value=b"")


def test_counted_reasons_are_told_apart_by_source():
    assert source_of_reason("command_undecodable") == ("commands", "command_undecodable")
    assert source_of_reason("bet_apply_failed") == ("bets", "bet_apply_failed")
    assert source_of_reason("invalid_price") == ("prices", "invalid_price")


def test_every_reducer_counts_its_dead_letters_under_its_sources_prefix():
    jobs = {"commands": "commands.py", "markets": "markets.py", "bets": "liability.py", "matches": "matches.py"}
    for name, job in jobs.items():
        text = (ROOT / "spark" / "jobs" / job).read_text()
        assert f'counter_prefix="{SOURCES[name].counter_prefix}"' in text, job


def row(offset: int, value: bytes) -> dict:
    return {"key": b"k1", "value": value, "partition": 0, "offset": offset}


def test_a_replayed_record_failing_again_is_dead_lettered_with_its_replay_headers_and_counted_again():
    client, sink = fake_store_client(), FakeDeadLetters()
    first = FirstFailure("command_undecodable", "bad json", f"{topics.commands()}/0/3", 1000, 0)
    headers = replay_headers(failure=first, replay_id=7)
    ReplayLedger(client).mark({record_digest(topic=topics.commands(), key=b"k1", value=b"{bad"): headers})
    rejects = Rejects(sink=sink, redis_client=client, source_topic=topics.commands(), counter_prefix="command_")
    rejects.add(row(10, b"{bad"), "undecodable", "still bad")
    rejects.add(row(11, b"{never replayed"), "undecodable", "bad")
    rejects.flush()
    replayed, fresh = sink.sent
    assert dict(replayed.headers)[HEADER_FIRST_ORIGIN] == f"{topics.commands()}/0/3".encode()
    assert dict(replayed.headers)[HEADER_FIRST_REASON] == b"command_undecodable"
    assert dict(replayed.headers)[HEADER_REPLAYS] == b"1"
    assert replayed.origin == f"{topics.commands()}/0/10"
    assert fresh.headers == ()
    assert client.hget(keys.counter("dead_letters"), "command_undecodable") == b"2"
    assert client.hget(keys.counter(COUNTER_AGAIN), "command_undecodable") == b"1"
