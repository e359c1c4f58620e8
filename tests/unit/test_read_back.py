"""After the hub reconnected to Redis, a socket reads back what it missed: it keeps trying while
Redis refuses (a failover takes seconds), and a socket that could not read its markets back is
closed so its client starts again from a fresh image, rather than hold prices that stand still."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from odds.core import events
from odds.streaming import consumers
from odds.streaming.consumers import OddsConsumer, Wake
from odds.streaming.session import Limits, Reimage, Session


class FlakyRedis:
    """A command client that refuses every pipeline for ``down_s``, then answers ``answer``."""

    def __init__(self, *, down_s: float, answer: list) -> None:
        self.up_at = time.monotonic() + down_s
        self.answer = answer
        self.refused = 0

    def pipeline(self, transaction: bool = False) -> FlakyRedis:
        return self

    def hget(self, *args) -> None:
        pass

    async def execute(self) -> list:
        if time.monotonic() < self.up_at:
            self.refused += 1
            raise RedisConnectionError("Connection refused")
        return self.answer


@pytest.fixture
def redis_away(monkeypatch):
    def away(*, down_s: float, answer: list) -> FlakyRedis:
        client = FlakyRedis(down_s=down_s, answer=answer)
        monkeypatch.setattr(consumers, "get_hub", lambda: SimpleNamespace(client=lambda: client))
        return client

    return away


async def test_a_read_back_outlasts_redis_away_for_seconds(redis_away, monkeypatch):
    monkeypatch.setattr(consumers, "RECOVER_DELAY_S", 0.05)
    monkeypatch.setattr(consumers, "READ_BACK_MAX_WAIT_S", 0.1)
    client = redis_away(down_s=1.5, answer=[b"state"])
    started = time.monotonic()
    assert await consumers._read_back(lambda pipe: pipe.hget("k", "f"), patience_s=5) == [b"state"]
    assert 1.5 <= time.monotonic() - started < 2.5
    assert client.refused >= 10, "attempts a short wait apart, not one long sleep"


async def test_a_read_back_gives_up_after_its_patience(redis_away, monkeypatch):
    monkeypatch.setattr(consumers, "RECOVER_DELAY_S", 0.05)
    redis_away(down_s=60, answer=[])
    started = time.monotonic()
    with pytest.raises(RedisConnectionError):
        await consumers._read_back(lambda pipe: pipe.hget("k", "f"), patience_s=0.5)
    assert time.monotonic() - started < 1.5


async def test_markets_not_read_back_close_the_socket_to_start_again(redis_away, monkeypatch):
    monkeypatch.setattr(consumers, "RECOVER_DELAY_S", 0.01)
    monkeypatch.setattr(consumers, "READ_BACK_PATIENCE_S", 0.3)
    redis_away(down_s=60, answer=[])
    closed: list[int] = []

    async def close(code: int) -> None:
        closed.append(code)

    socket = OddsConsumer()
    socket.session = Session(limits=Limits(frames_per_s=20, image_markets_per_min=2000, markets=500, events=500))
    socket.session.watch([7, 9])
    socket.wake = Wake()
    monkeypatch.setattr(socket, "close", close)
    await socket._reimage(Reimage(markets=(7, 9), events=()))
    assert closed == [events.CLOSE_TRY_AGAIN]
    assert list(socket.session.ordered) == [], "no image of states it could not read"
