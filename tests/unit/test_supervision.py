"""Restart policy of the reducer queries, and which failures are a record's."""

from __future__ import annotations

import pytest
import redis

from reducers.supervision import (
    RESTARTING,
    RUNNING,
    Backoff,
    QueryRun,
    restart_due,
    run_failed,
    run_restarted,
    run_started,
    run_steady,
)
from spark.faults import failure_of, is_transient

BACKOFF = Backoff(base_s=1, cap_s=8, stable_s=60)


def test_restart_delay_doubles_with_each_failure_in_a_row_up_to_the_cap():
    assert [BACKOFF.delay_s(n) for n in range(1, 7)] == [1, 2, 4, 8, 8, 8]


def test_a_failed_query_is_restarted_only_after_its_delay():
    run = run_failed(run_started(QueryRun(), now_ms=0), error="boom", now_ms=10_000, backoff=BACKOFF)
    assert (run.state, run.failures, run.last_error) == (RESTARTING, 1, "boom")
    assert not restart_due(run, now_ms=10_999)
    assert restart_due(run, now_ms=11_000)


def test_consecutive_failures_wait_longer_and_restarts_are_counted():
    run = run_started(QueryRun(), now_ms=0)
    for now in (1_000, 3_000):
        run = run_failed(run, error="boom", now_ms=now, backoff=BACKOFF)
        run = run_restarted(run, now_ms=run.next_start_ms or now)
    run = run_failed(run, error="boom", now_ms=10_000, backoff=BACKOFF)
    assert run.next_start_ms == 10_000 + 4_000
    assert run.restarts == 2


def test_a_query_that_runs_steadily_has_its_failures_forgotten_but_keeps_its_history():
    run = run_restarted(run_failed(QueryRun(), error="boom", now_ms=0, backoff=BACKOFF), now_ms=1_000)
    assert run_steady(run, now_ms=30_000, backoff=BACKOFF).failures == 1
    steady = run_steady(run, now_ms=61_000, backoff=BACKOFF)
    assert (steady.state, steady.failures, steady.restarts, steady.last_error) == (RUNNING, 0, 1, "boom")


@pytest.mark.parametrize(
    "exc",
    [
        redis.ConnectionError("Connection refused"),
        redis.TimeoutError("Timeout reading from socket"),
        redis.ResponseError("OOM command not allowed when used memory > 'maxmemory'."),
        redis.ResponseError("LOADING Redis is loading the dataset in memory"),
        redis.exceptions.ReadOnlyError("READONLY You can't write against a read only replica."),
        ConnectionResetError(104, "Connection reset by peer"),
    ],
)
def test_an_unavailable_dependency_is_not_the_records_fault(exc):
    assert is_transient(exc)
    with pytest.raises(type(exc)):
        failure_of(exc, stage="apply")


@pytest.mark.parametrize(
    "exc",
    [
        KeyError("spec"),
        AttributeError("'list' object has no attribute 'get'"),
        redis.ResponseError("ERR value is not an integer or out of range"),
        ArithmeticError("overflow"),
    ],
)
def test_an_error_raised_by_what_a_record_holds_makes_it_a_dead_letter(exc):
    assert not is_transient(exc)
    reason, detail = failure_of(exc, stage="apply")
    assert reason == "apply_failed"
    assert type(exc).__name__ in detail
    assert failure_of(exc, stage="decode")[0] == "undecodable"


def test_a_query_error_raised_in_python_is_summed_up_by_its_exception_line():
    from spark.jobs.reducers import error_summary

    text = (
        "An exception was raised by the Python Proxy. Return Message: Traceback (most recent call last):\n"
        '  File "/app/spark/jobs/commands.py", line 40, in __call__\n'
        "    outcome = self._channels.apply_command(command)\n"
        "KeyError: 'spec'\n"
        "\n"
        "\tat org.apache.spark.sql.execution.streaming.sources.PythonForeachBatchHelper$.callForeachBatch\n"
    )
    assert error_summary(text) == "KeyError: 'spec'"
    assert error_summary("[STREAM_FAILED] Query terminated\n\tat org.apache") == "[STREAM_FAILED] Query terminated"


def test_a_restart_is_shown_before_the_next_query_is_looked_at():
    """The restarted query applies records while the next restart (seconds, for a stateful
    query) is under way: its restart is in the hash by then."""
    from types import SimpleNamespace

    import orjson

    from spark.jobs.reducers import QuerySupervisor
    from store import keys
    from tests.fakes import fake_store_client

    client = fake_store_client()
    dead = SimpleNamespace(isActive=False, exception=lambda: RuntimeError("Redis away"))
    alive = SimpleNamespace(isActive=True, exception=lambda: None)
    seen: dict[str, dict] = {}
    started: dict[str, int] = {"prices": 0, "game": 0}

    def starter(name: str):
        def start():
            started[name] += 1
            if started[name] == 1:
                return dead
            if name == "game":  # while the game restarts, what does an operator see of prices?
                seen["prices"] = orjson.loads(client.hget(keys.reducer_queries(), "prices") or b"{}")
            return alive

        return start

    supervisor = QuerySupervisor(
        starters={"prices": starter("prices"), "game": starter("game")},
        redis_client=client,
        backoff=Backoff(base_s=0, cap_s=0, stable_s=60),
    )
    supervisor.start()
    supervisor.poll(now_ms=supervisor.runs["prices"].since_ms + 1)

    assert seen["prices"]["state"] == RUNNING
    assert seen["prices"]["restarts"] == 1
    assert supervisor.runs["game"].restarts == 1
