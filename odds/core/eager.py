"""Run a coroutine at once, as far as it goes without waiting, and only then make it a task (or,
for a coroutine that never waits, to its end with no event loop at all: ``run_to_end``).

A websocket write through an ASGI server is a coroutine that nearly always completes without
suspending (the bytes go to the transport; it waits only when the client's buffer is full). Run
that way, a tick's frame reaches each idle socket with no task, no wake-up and no switch, the
cost the edge otherwise pays per socket per tick. A write that does suspend finishes in a task,
exactly as it would have.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar, cast

T = TypeVar("T")


async def _finish(coro: Coroutine[Any, Any, Any], waiting: Any) -> None:
    """Drive ``coro`` on from the point where it yielded ``waiting`` (what asyncio's own task
    step does: await what the coroutine waits for, hand it the outcome, repeat)."""
    while True:
        try:
            if waiting is None:
                await asyncio.sleep(0)  # a bare yield: give the loop one turn
            else:
                await waiting
        except BaseException as exc:  # the coroutine decides what a failure of its wait means
            try:
                waiting = coro.throw(exc)
            except StopIteration:
                return
            continue
        try:
            waiting = coro.send(None)
        except StopIteration:
            return


def run_eagerly(coro: Coroutine[Any, Any, Any]) -> asyncio.Task[None] | None:
    """Step ``coro`` now. None when it completed (an exception it raised is raised here);
    otherwise the task that finishes it."""
    try:
        waiting = coro.send(None)
    except StopIteration:
        return None
    return asyncio.get_running_loop().create_task(_finish(coro, waiting))


def run_to_end(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to its end now, in the calling thread and with no event loop: for a
    coroutine whose every wait completes at once because its I/O is synchronous underneath (one
    asynchronous service run from synchronous code). Raises ``RuntimeError`` if it suspends."""
    try:
        coro.send(None)
    except StopIteration as done:
        return cast(T, done.value)
    coro.close()
    raise RuntimeError(f"{coro!r} waited on the event loop; it cannot run synchronously")
