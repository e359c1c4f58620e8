"""run_eagerly: a coroutine that completes without waiting needs no task; one that waits
finishes in a task, with the outcome of what it waited for."""

from __future__ import annotations

import asyncio

import pytest

from odds.core.eager import run_eagerly


async def test_a_coroutine_that_never_waits_completes_at_once_without_a_task():
    done = []

    async def write() -> None:
        done.append("written")

    assert run_eagerly(write()) is None
    assert done == ["written"]


async def test_a_coroutine_that_waits_finishes_in_a_task_with_the_result_it_waited_for():
    gate: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    seen = []

    async def write() -> None:
        seen.append("before")
        seen.append(await gate)
        await asyncio.sleep(0)
        seen.append("after")

    task = run_eagerly(write())
    assert task is not None
    assert seen == ["before"], "ran at once up to its first wait"
    gate.set_result("drained")
    await task
    assert seen == ["before", "drained", "after"]


async def test_a_failure_while_waiting_reaches_the_coroutine():
    gate: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    caught = []

    async def write() -> None:
        try:
            await gate
        except ConnectionResetError as exc:
            caught.append(str(exc))

    task = run_eagerly(write())
    assert task is not None
    gate.set_exception(ConnectionResetError("client gone"))
    await task
    assert caught == ["client gone"]


async def test_an_error_raised_before_any_wait_is_raised_to_the_caller():
    async def write() -> None:
        raise RuntimeError("closed")

    with pytest.raises(RuntimeError, match="closed"):
        run_eagerly(write())
