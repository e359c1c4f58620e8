"""One reducer query failing is restarted alone, from its checkpoint, with a backoff; the
others run on. Real Spark queries on a real Kafka topic, supervision state in the real Redis."""

from __future__ import annotations

import os
import threading
import time
from types import SimpleNamespace

import orjson
import pytest

from reducers.supervision import Backoff
from reducers.topics import TopicSpec
from spark.jobs.reducers import QuerySupervisor
from spark.sources import kafka_stream
from store import keys
from tests.conftest import wait_for

pytestmark = pytest.mark.integration


class InjectedFailure(RuntimeError):
    pass


def test_a_failing_query_is_restarted_alone_with_a_backoff_and_replays_its_batch(
    spark, kafka_topics, producer, redis_client, tmp_path
):
    from odds.core.kafka import topics_ensure

    namespace = os.environ["SPORTSBOOK_NAMESPACE"]
    topic = f"{namespace}.supervision-test.v1"
    topics_ensure(specs=[TopicSpec(topic, 1)])
    budget = f"{namespace}:test:failures-left"
    processed = f"{namespace}:test:boom-processed"
    ticks = f"{namespace}:test:ticks"
    redis_client.set(budget, 2)

    def flaky(batch, batch_id: int) -> None:
        values = [row["value"] for row in batch.collect()]
        if b"boom" in values:
            if redis_client.decr(budget) >= 0:
                raise InjectedFailure("injected failure")
            redis_client.incr(processed)

    def steady(batch, batch_id: int) -> None:
        redis_client.incrby(ticks, batch.count())

    def starter(name: str, handler):
        def start():
            return (
                kafka_stream(spark, topic=topic, bootstrap=producer_bootstrap(), starting_offsets="earliest")
                .writeStream.queryName(f"{namespace}-{name}")
                .option("checkpointLocation", str(tmp_path / name))
                .foreachBatch(handler)
                .trigger(processingTime="200 milliseconds")
                .start()
            )

        return start

    supervisor = QuerySupervisor(
        starters={"flaky": starter("flaky", flaky), "steady": starter("steady", steady)},
        redis_client=redis_client,
        backoff=Backoff(base_s=1, cap_s=4, stable_s=600),
    )
    supervisor.start()
    steady_query = supervisor.queries["steady"]
    stop = threading.Event()

    def supervise() -> None:
        while not stop.wait(0.2):
            supervisor.poll()

    thread = threading.Thread(target=supervise, daemon=True)
    thread.start()
    try:
        producer.produce(topic, value=b"boom")
        producer.flush(10)
        wait_for(lambda: redis_client.get(processed) == b"1", timeout=120, what="the batch to succeed on its replay")
        flaky_run = supervisor.runs["flaky"]
        assert flaky_run.restarts == 2
        assert flaky_run.state == "running"
        assert (
            flaky_run.last_error
            == "tests.integration.reliability.test_query_supervisor.InjectedFailure: injected failure"
        )
        # Each restart waited its backoff: 1 s after the first failure, 2 s after the second.
        assert flaky_run.failures == 2

        # The other query never stopped and kept reading while its neighbour was down.
        assert steady_query is not None
        assert supervisor.queries["steady"] is steady_query
        assert steady_query.isActive
        assert supervisor.runs["steady"].restarts == 0
        for _ in range(3):
            producer.produce(topic, value=b"tick")
        producer.flush(10)
        wait_for(lambda: int(redis_client.get(ticks) or 0) >= 4, timeout=60, what="the steady query to read on")

        shown = {k.decode(): orjson.loads(v) for k, v in redis_client.hgetall(keys.reducer_queries()).items()}
        assert shown["flaky"]["restarts"] == 2
        assert shown["flaky"]["state"] == "running"
        assert shown["steady"]["restarts"] == 0
    finally:
        stop.set()
        thread.join(5)
        supervisor.stop()
        redis_client.delete(keys.reducer_queries(), budget, processed, ticks)


def producer_bootstrap() -> str:
    from django.conf import settings

    return settings.KAFKA_BOOTSTRAP_SERVERS


def test_a_restart_that_itself_fails_is_retried_later(spark, redis_client):
    attempts: list[float] = []

    # A query that died at once: StreamingQuery's isActive and exception(), nothing else.
    stopped = SimpleNamespace(isActive=False, exception=lambda: InjectedFailure("first run died"))

    def start():
        attempts.append(time.monotonic())
        if len(attempts) == 1:
            return stopped
        raise InjectedFailure("cannot start")

    supervisor = QuerySupervisor(
        starters={"broken": start}, redis_client=redis_client, backoff=Backoff(base_s=1, cap_s=2, stable_s=600)
    )
    try:
        supervisor.start()
        now = int(time.time() * 1000)
        supervisor.poll(now_ms=now)
        assert supervisor.runs["broken"].state == "restarting"
        supervisor.poll(now_ms=now + 1_000)
        run = supervisor.runs["broken"]
        assert (run.state, run.failures, run.restarts) == ("restarting", 2, 0)
        assert "cannot start" in (run.last_error or "")
        assert run.next_start_ms == now + 1_000 + 2_000
        assert len(attempts) == 2
    finally:
        supervisor.stop()
        redis_client.delete(keys.reducer_queries())
