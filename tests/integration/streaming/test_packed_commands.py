"""Packed commands (``store.packed``) on the real Redis: replies in order, an error reply raised
once every reply is read, and a lost connection retried."""

from __future__ import annotations

import os

import pytest
import redis
from django.conf import settings

from store import packed


def _key(name: str) -> bytes:
    return f"{os.environ['SPORTSBOOK_NAMESPACE']}:packed:{name}".encode()


@pytest.fixture
def client(redis_client):
    """A client of its own (its pool's one connection is the one the tests kill)."""
    own = redis.Redis.from_url(settings.REDIS_URL)
    yield own
    own.close()


def test_the_replies_come_back_in_the_commands_order(client, redis_client):
    value = b"with\r\nline end \x00\xff"
    replies = packed.execute(
        client,
        [
            packed.mset([(_key("a"), value), (_key("b"), b"")]),
            packed.zadd(_key("board"), [(b"880001", 10), (b"880002", 0)]),
            packed.hmget(_key("missing"), [b"1", b"2"]),
            packed.command(b"GET", _key("a")),
        ],
    )

    assert replies == [b"OK", 2, [None, None], value]  # raw replies, as Redis sends them
    assert redis_client.get(_key("b")) == b""
    assert redis_client.zrange(_key("board"), 0, -1, withscores=True) == [(b"880002", 0.0), (b"880001", 10.0)]
    assert packed.execute(client, []) == []


def test_an_error_reply_is_raised_after_the_commands_after_it_ran(client, redis_client):
    redis_client.set(_key("text"), b"not a sorted set")

    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        packed.execute(
            client,
            [packed.zadd(_key("text"), [(b"1", 1)]), packed.mset([(_key("after"), b"written")])],
        )

    assert redis_client.get(_key("after")) == b"written"
    # The connection's replies were all read: the next commands get their own.
    assert packed.execute(client, [packed.command(b"GET", _key("after"))]) == [b"written"]


def test_a_connection_lost_between_writes_is_made_again_and_the_commands_sent(client, redis_client):
    (connection_id,) = packed.execute(client, [packed.command(b"CLIENT", b"ID")])
    assert redis_client.client_kill_filter(_id=connection_id) == 1

    replies = packed.execute(client, [packed.mset([(_key("again"), b"1")]), packed.command(b"CLIENT", b"ID")])

    assert replies[0] == b"OK"
    assert replies[1] != connection_id  # a new connection
    assert redis_client.get(_key("again")) == b"1"
