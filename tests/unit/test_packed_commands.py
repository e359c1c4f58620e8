"""Commands packed by ``store.packed`` are byte for byte what redis-py packs for the same
arguments (no Redis needed)."""

from __future__ import annotations

import pytest
from redis.connection import Connection

from store import packed

# Values as the game writes them, and ones a naive packer would get wrong: the protocol's own
# line end inside a value, bytes that are not text, an empty value, a long one.
AWKWARD = [b"plain", b"with\r\nline end", "caf\u00e9".encode(), b"\x00\xff", b"", b"x" * 70_000]


def redis_py(*args: bytes | str | int) -> bytes:
    return b"".join(Connection().pack_command(*args))


def test_a_command_packs_as_redis_py_packs_it():
    assert packed.command(b"CLIENT", b"ID") == redis_py("CLIENT", "ID")
    assert packed.command(b"SET", b"k", AWKWARD[1]) == redis_py("SET", "k", AWKWARD[1])


def test_mset_packs_every_pair_in_order():
    pairs = [(b"k%d" % i, value) for i, value in enumerate(AWKWARD)]
    args = [arg for pair in pairs for arg in pair]
    assert packed.mset(pairs) == redis_py("MSET", *args)


@pytest.mark.parametrize("score", [0, 7, 1_234_567, -3])
def test_zadd_packs_whole_scores_before_their_members(score):
    scored = [(b"880001", score), (b"2", 10)]
    assert packed.zadd(b"board", scored) == redis_py("ZADD", "board", score, b"880001", 10, b"2")


def test_hmget_packs_its_key_then_the_fields():
    fields = [b"1", b"22", AWKWARD[1]]
    assert packed.hmget(b"channels", fields) == redis_py("HMGET", "channels", *fields)
