"""Run a coroutine at once, as far as it goes without waiting, and only then make it a task.

A websocket write through an ASGI server is a coroutine that nearly always completes without
suspending (the bytes go to the transport; it waits only when the client's buffer is full). Run
that way, a tick's frame reaches each idle socket with no task, no wake-up and no switch, the
cost the edge otherwise pays per socket per tick. A write that does suspend finishes in a task,
exactly as it would have.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any


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
