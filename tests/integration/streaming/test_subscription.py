"""The hub's pub-sub connection against real Redis: subscribe, leave, a silent connection made
again, and a Redis that is not there."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import subprocess

import pytest
import redis
from django.conf import settings

from store import keys
from store.subscription import Subscription

pytestmark = pytest.mark.integration


class _Seen:
    def __init__(self) -> None:
        self.messages: asyncio.Queue[tuple[bytes, bytes]] = asyncio.Queue()
        self.reconnects = 0

    def message(self, channel: bytes, data: bytes) -> None:
        self.messages.put_nowait((channel, data))

    def reconnect(self) -> None:
        self.reconnects += 1


@contextlib.asynccontextmanager
async def running(subscription: Subscription):
    task = asyncio.create_task(subscription.run())
    try:
        yield task
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def _until(check, *, timeout: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not check():
        assert asyncio.get_running_loop().time() < deadline, "not within the time"
        await asyncio.sleep(0.02)


async def test_channels_subscribed_before_the_connection_is_up_are_delivered_and_a_channel_left_is_not(
    redis_client,
):
    seen = _Seen()
    first, second = keys.market_channel(800_601), keys.market_channel(800_602)
    subscription = Subscription(settings.REDIS_URL, on_message=seen.message, on_reconnect=seen.reconnect)
    subscription.subscribe([first.encode()])  # nothing connected yet
    async with running(subscription):
        await _until(lambda: redis_client.pubsub_numsub(first) == [(first.encode(), 1)])
        subscription.subscribe([second.encode()])
        await _until(lambda: redis_client.pubsub_numsub(second) == [(second.encode(), 1)])
        redis_client.publish(first, "one")
        redis_client.publish(second, "two")
        got = [await asyncio.wait_for(seen.messages.get(), timeout=5) for _ in range(2)]
        assert got == [(first.encode(), b"one"), (second.encode(), b"two")]
        subscription.unsubscribe([first.encode()])
        await _until(lambda: redis_client.pubsub_numsub(first) == [(first.encode(), 0)])
        assert redis_client.publish(first, "gone") == 0
        assert subscription.channels == {second.encode()}
        assert subscription.connections == 1
        assert seen.reconnects == 0


async def test_a_connection_silent_past_two_pings_is_made_again_and_its_channels_subscribed_again(
    redis_client,
):
    """Redis paused for every client answers no ping: the connection is closed after two
    pings without an answer, and the next one (made when the pause ends) subscribes again."""
    seen = _Seen()
    channel = keys.market_channel(800_603)
    subscription = Subscription(
        settings.REDIS_URL, on_message=seen.message, on_reconnect=seen.reconnect, ping_s=0.2, retry_s=0.1
    )
    subscription.subscribe([channel.encode()])
    async with running(subscription):
        await _until(lambda: redis_client.pubsub_numsub(channel) == [(channel.encode(), 1)])
        first = subscription.address
        redis_client.client_pause(2000, all=True)  # PING is not a write: pause them all
        await _until(lambda: subscription.connections == 2)
        assert seen.reconnects == 1
        await _until(lambda: redis_client.pubsub_numsub(channel) == [(channel.encode(), 1)])
        assert subscription.address != first
        redis_client.publish(channel, "after")
        assert await asyncio.wait_for(seen.messages.get(), timeout=5) == (channel.encode(), b"after")


async def test_a_redis_that_is_not_there_is_tried_again_until_it_is(unused_tcp_port, tmp_path):
    seen = _Seen()
    subscription = Subscription(
        f"redis://127.0.0.1:{unused_tcp_port}/0", on_message=seen.message, on_reconnect=seen.reconnect, retry_s=0.05
    )
    subscription.subscribe([b"odds:late"])
    async with running(subscription) as task:
        await asyncio.sleep(0.5)
        assert not task.done()  # still trying, not failed
        assert subscription.connections == 0
        assert subscription.address is None
        server = subprocess.Popen(
            [
                shutil.which("redis-server") or "redis-server",
                "--port",
                str(unused_tcp_port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(tmp_path),
            ],
            stdout=subprocess.DEVNULL,
        )
        try:
            late = redis.Redis(port=unused_tcp_port)
            await _until(lambda: subscription.connections == 1)
            await _until(lambda: late.pubsub_numsub("odds:late") == [(b"odds:late", 1)])
            late.publish("odds:late", "hello")
            assert await asyncio.wait_for(seen.messages.get(), timeout=5) == (b"odds:late", b"hello")
            assert seen.reconnects == 0  # the first connection made is not a reconnect
        finally:
            server.terminate()
            server.wait(timeout=10)


async def test_a_wrong_password_is_tried_again_and_does_not_end_the_subscription(redis_client):
    """Redis refusing the connection's AUTH is one more reason to try again, not a crash."""
    seen = _Seen()
    where = redis_client.connection_pool.connection_kwargs
    url = f"redis://nobody:wrong@{where['host']}:{where['port']}/0"
    subscription = Subscription(url, on_message=seen.message, on_reconnect=seen.reconnect, retry_s=0.05)
    async with running(subscription) as task:
        await asyncio.sleep(0.5)
        assert not task.done()
        assert subscription.connections == 0
