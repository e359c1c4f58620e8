"""Stream commands carry why a channel ends; commands written before that field still decode."""

from __future__ import annotations

import orjson

from reducers.subscriptions import StreamCommand, decode_command, ended_frame

CHANNEL = "a" * 32


def test_an_unsubscribe_carries_its_reason_through_the_topic():
    command = StreamCommand(type="unsubscribe", channel_id=CHANNEL, user_id=3, spec=None, ts=1, reason="expired")
    assert decode_command(command.encode()) == command


def test_an_unsubscribe_written_without_a_reason_still_decodes():
    old = {"v": 1, "type": "unsubscribe", "channel_id": CHANNEL, "user_id": 3, "spec": None, "resync": False, "ts": 1}
    assert decode_command(orjson.dumps(old)).reason is None


def test_an_unknown_reason_is_dropped_not_relayed_to_clients():
    raw = {"v": 1, "type": "unsubscribe", "channel_id": CHANNEL, "user_id": 3, "spec": None, "ts": 1, "reason": "<b>"}
    assert decode_command(orjson.dumps(raw)).reason is None


def test_a_command_without_a_reason_is_encoded_as_before():
    command = StreamCommand(type="begin", channel_id=CHANNEL, user_id=3, spec=None, ts=1)
    assert "reason" not in orjson.loads(command.encode())


def test_the_ended_frame_names_the_channel_and_the_reason():
    assert orjson.loads(ended_frame(channel_id=CHANNEL, reason="unsubscribed")) == {
        "type": "ended",
        "channel": CHANNEL,
        "reason": "unsubscribed",
    }


def test_a_begin_carries_what_the_client_holds_through_the_topic():
    command = StreamCommand(
        type="begin", channel_id=CHANNEL, user_id=3, spec=None, ts=1, since={42: (17, "open"), 7: (0, "suspended")}
    )
    assert orjson.loads(command.encode())["since"] == {"7": [0, "suspended"], "42": [17, "open"]}
    assert decode_command(command.encode()) == command


def test_a_begin_without_since_is_encoded_as_before_and_decodes_without_one():
    command = StreamCommand(type="begin", channel_id=CHANNEL, user_id=3, spec=None, ts=1, since={})
    assert "since" not in orjson.loads(command.encode())
    assert decode_command(command.encode()).since is None


def test_a_command_with_a_malformed_since_is_an_invalid_record():
    import pytest

    from reducers.schemas import InvalidRecord

    raw = {"v": 1, "type": "begin", "channel_id": CHANNEL, "user_id": 3, "spec": None, "ts": 1, "since": {"x": [1]}}
    with pytest.raises(InvalidRecord) as caught:
        decode_command(orjson.dumps(raw))
    assert caught.value.field == "since"
