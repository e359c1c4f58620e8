"""All reducer queries in one Spark application: prices, commands, markets table, liability, movers,
match states.

``python -m spark.jobs.reducers`` is what `make up` runs. Each query has its own checkpoint
under ``SPARK_CHECKPOINT_DIR/<namespace>-<query>``; a restart resumes every query from its
checkpoint and every subscription from Redis.

A query that stops with an error is restarted alone, from its checkpoint, with a backoff
(``QuerySupervisor``); the other queries run on. Every query's state (running, restarting,
restarts, last error) is in Redis for /healthz and the lag dashboard.
"""

from __future__ import annotations

import gc
import importlib
import logging
import signal
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

import redis
from pyspark.sql import SparkSession

from reducers import topics
from reducers.queries import GAME, PRICES, QUERIES, ReducerQuery
from reducers.supervision import (
    Backoff,
    QueryRun,
    restart_due,
    run_failed,
    run_restarted,
    run_started,
    run_steady,
    run_stopped,
)
from spark.config import ConfigError, ReducerConfig, config
from spark.jobs.applier import QUERY_NAME as APPLIER_NAME
from spark.jobs.applier import PriceApplier
from spark.jobs.markets import QueryRefresher
from spark.metrics import driver_metrics_serve, driver_registry
from spark.progress import RedisProgressListener
from spark.rebuild import StoreWatch
from spark.session import build_session, jvm_pid, lower_priority, lower_session_priority
from store.clients import redis_client
from store.pipeline import reducer_queries_write

log = logging.getLogger("spark.jobs.reducers")
COMPONENT = "reducers"
POLL_S = 0.5


class Supervised(Protocol):
    """What the supervisor needs of what it runs: a streaming query, or the real-time price
    applier (``spark.jobs.applier.PriceApplier``)."""

    @property
    def isActive(self) -> bool: ...  # noqa: N802  # StreamingQuery's name

    def exception(self) -> Any: ...

    def stop(self) -> None: ...


Starter = Callable[[], Supervised]
POOL_PROPERTY = "spark.scheduler.pool"


# Each query's jobs run in a fair-scheduler pool of its own, named as the query. Under Spark's
# default (FIFO) a job waits until every task of the jobs submitted before it has a slot, so a
# price batch of a few records queued behind a movers or liability batch; with pools, a task
# slot that frees up goes to the pool furthest below its share. Per pool: (weight, min share),
# the min share being the slots a pool gets before weights count. The punter-facing paths
# (prices, and the commands that open channels) come first.
POOLS: dict[str, tuple[int, int]] = {query.name: query.pool for query in QUERIES}


def scheduler_conf(settings: ReducerConfig) -> dict[str, str]:
    """Session settings for ``SPARK_SCHEDULER_MODE``; FAIR writes the pools' allocation file
    beside the checkpoints (the driver, which schedules, reads it once at start)."""
    if settings.scheduler_mode != "FAIR":
        return {"spark.scheduler.mode": settings.scheduler_mode}
    pools = "".join(
        f'  <pool name="{name}"><schedulingMode>FIFO</schedulingMode>'
        f"<weight>{weight}</weight><minShare>{min_share}</minShare></pool>\n"
        for name, (weight, min_share) in POOLS.items()
    )
    settings.checkpoint_dir.mkdir(parents=True, exist_ok=True)
    allocation = settings.checkpoint_dir / f"fairscheduler-{topics.namespace()}.xml"
    allocation.write_text(f'<?xml version="1.0"?>\n<allocations>\n{pools}</allocations>\n')
    return {"spark.scheduler.mode": "FAIR", "spark.scheduler.allocation.file": str(allocation)}


def in_pool(spark: SparkSession, name: str, start: Starter) -> Starter:
    """``start`` with the query's jobs in the pool ``name``: a query's thread keeps the local
    properties of the thread that started it, and so does its ``foreachBatch`` function."""

    def started() -> Supervised:
        context = spark.sparkContext
        context.setLocalProperty(POOL_PROPERTY, name)
        try:
            return start()
        finally:
            context.setLocalProperty(POOL_PROPERTY, None)  # type: ignore[arg-type]  # None unsets it

    return started


def query_checkpoint(checkpoint_root: Path, query: ReducerQuery, *, mode: str) -> str:
    """Where a query's checkpoint is. The price query's is per trigger mode: the two plans share
    no offsets."""
    name = f"{query.checkpoint}-{mode}" if query is PRICES else query.checkpoint
    return str(checkpoint_root / f"{topics.namespace()}-{name}")


def check_checkpoints(settings: ReducerConfig) -> None:
    """What the settings must agree on with the checkpoints before any query starts: the game's
    bucket count (``spark.jobs.game.pin_buckets``). ``ConfigError`` when they do not."""
    from spark.jobs.game import pin_buckets

    checkpoint = query_checkpoint(settings.checkpoint_dir, GAME, mode=settings.trigger_mode)
    pin_buckets(checkpoint, settings.game_buckets, settings.shuffle_partitions)


def starters(
    spark: SparkSession, *, bootstrap: str, redis_url: str, checkpoint_root: Path, mode: str
) -> dict[str, Starter]:
    """Query name → a function that starts that query (again) from its checkpoint."""

    def starter(query: ReducerQuery) -> Starter:
        job = importlib.import_module(query.job)
        extra: dict[str, Any] = {"mode": mode} if query is PRICES else {}
        checkpoint = query_checkpoint(checkpoint_root, query, mode=mode)
        return lambda: job.start(spark, bootstrap=bootstrap, redis_url=redis_url, checkpoint_dir=checkpoint, **extra)

    found: dict[str, Starter] = {query.name: starter(query) for query in QUERIES}
    if mode == "realtime":
        # The real-time price query's effect, applied from the checked-price topic.
        found[APPLIER_NAME] = lambda: PriceApplier.start(bootstrap=bootstrap, redis_url=redis_url)
    return {name: in_pool(spark, name, start) for name, start in found.items()}


def start_all(
    spark: SparkSession, *, bootstrap: str, redis_url: str, checkpoint_root: Path, mode: str
) -> dict[str, Supervised]:
    """Start every query (and in real-time mode the price applier); name → what was started."""
    found = starters(spark, bootstrap=bootstrap, redis_url=redis_url, checkpoint_root=checkpoint_root, mode=mode)
    return {name: start() for name, start in found.items()}


def _now_ms() -> int:
    return int(time.time() * 1000)


def _error_text(query: Supervised) -> str:
    exc = query.exception()
    if exc is None:
        return "stopped without an error"
    return error_summary(str(exc)) or type(exc).__name__


def error_summary(text: str) -> str:
    """The line of a query's error that names the failure: for an error raised in Python (a
    ``foreachBatch`` function), the exception line that ends its traceback; otherwise the first
    line. The whole error, with the JVM stack, is in the process log."""
    lines = text.strip().splitlines()
    for at, line in enumerate(lines):
        if "Traceback (most recent call last)" in line:
            # The traceback's frames are indented; the first line after them that is not is the
            # exception itself.
            for after in lines[at + 1 :]:
                if after.strip() and not after.startswith((" ", "\t")):
                    return after.strip()
    return lines[0].strip() if lines else ""


class QuerySupervisor:
    """Runs a set of queries and restarts any one that stops, alone and with a backoff.

    ``poll`` is one step of supervision (the process calls it every ``POLL_S``); each query's
    ``QueryRun`` is written to the ``reducer_queries`` hash whenever it changes.
    """

    def __init__(
        self, *, starters: Mapping[str, Starter], redis_client: redis.Redis, backoff: Backoff | None = None
    ) -> None:
        self._starters = dict(starters)
        self._redis = redis_client
        self._backoff = backoff or Backoff()
        self.queries: dict[str, Supervised | None] = {}
        self.runs: dict[str, QueryRun] = {}
        self._stopping = threading.Event()

    def start(self) -> None:
        now = _now_ms()
        for name, start in self._starters.items():
            self.queries[name] = start()
            self.runs[name] = run_started(QueryRun(), now_ms=now)
        self._publish(self.runs)

    def poll(self, *, now_ms: int | None = None) -> None:
        """Look at every query once: restart the ones due. A query's change is written as soon
        as it is made, before the next query is looked at: a restart of another query can take
        seconds, and the restarted one is applying records meanwhile."""
        now = now_ms if now_ms is not None else _now_ms()
        for name in self._starters:
            if self._stopping.is_set():
                return
            run = self._polled(name, now)
            if run != self.runs[name]:
                self.runs[name] = run
                self._publish({name: run})

    def _polled(self, name: str, now: int) -> QueryRun:
        """The query's run after a look at it (restarted when due)."""
        run = self.runs[name]
        query = self.queries.get(name)
        if query is not None and query.isActive:
            return run_steady(run, now_ms=now, backoff=self._backoff)
        if query is not None:
            # It stopped: the other queries run on while this one waits out its backoff.
            error = _error_text(query)
            run = run_failed(run, error=error, now_ms=now, backoff=self._backoff)
            log.error(
                "query %s stopped (%d in a row): %s; restarting in %.1f s",
                name,
                run.failures,
                error,
                ((run.next_start_ms or now) - now) / 1000,
            )
            self.queries[name] = None
        if restart_due(run, now_ms=now):
            try:
                self.queries[name] = self._starters[name]()
            except Exception as exc:  # a restart that fails is one more failure, not the end
                log.exception("query %s could not be restarted", name)
                run = run_failed(run, error=f"restart failed: {exc}", now_ms=now, backoff=self._backoff)
            else:
                run = run_restarted(run, now_ms=now)
                log.info("query %s restarted (restart %d)", name, run.restarts)
        return run

    def stop(self) -> None:
        """Stop every query (no restarts from now on)."""
        self._stopping.set()
        for query in self.queries.values():
            if query is not None and query.isActive:
                query.stop()
        now = _now_ms()
        stopped = {name: run_stopped(run, now_ms=now) for name, run in self.runs.items()}
        self.runs.update(stopped)
        self._publish(stopped)

    def _publish(self, runs: Mapping[str, QueryRun]) -> None:
        try:
            reducer_queries_write(self._redis, {name: run.to_json() for name, run in runs.items()})
        except redis.RedisError as exc:
            # Redis down is shown by /healthz's own check; supervision carries on without it.
            log.warning("query states not written: %s", exc)


def backoff_from_config(settings: ReducerConfig) -> Backoff:
    return Backoff(base_s=settings.restart_base_s, cap_s=settings.restart_max_s, stable_s=settings.stable_s)


def freeze_startup_heap() -> int:
    """Collect, then hide every object alive now from the cyclic collector (``gc.freeze``) and
    return how many that is. The modules, classes and clients of a started process live as long
    as it does; a full collection walked all of them again: 35-73 ms each in the reducers'
    driver working off a backlog, five in 35 s, each a pause of the batch or the applier it
    fell in. Objects made after this are collected as before."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    try:
        settings = config()
        check_checkpoints(settings)
    except ConfigError as exc:
        log.error("%s", exc)
        raise SystemExit(2) from exc
    bootstrap, redis_url, mode = settings.kafka_bootstrap, settings.redis_url, settings.trigger_mode
    checkpoint_root = settings.checkpoint_dir
    extra = scheduler_conf(settings)
    spark = build_session("sportsbook-reducers", extra=extra)
    jvm = jvm_pid(spark)
    pid = jvm if mode == "realtime" and settings.realtime_jvm_niceness else None
    if pid is not None:
        # In real-time mode the JVM's twelve tasks poll Kafka record by record and, with its
        # compilers, took a core at 1,000 prices a second; the applier, which makes the price
        # visible, waited for a core: price topic -> applied 0.12-4.0 s at p50, against
        # 0.04-0.17 s with the JVM at niceness 10 (bench/results/history.md, "Where real-time mode's
        # cores go"). Under a saturated machine the stage nearest the punter goes first.
        changed = lower_priority(pid, settings.realtime_jvm_niceness)
        log.info("the JVM's %d threads at niceness %d", changed, settings.realtime_jvm_niceness)
    # Started in a session of its own, the reducers share the CPU with the web workers' session
    # session by session (autogroup scheduling) before any thread's niceness counts: the whole
    # session goes below. At the end-to-end load on two cores the web workers were then capped at
    # their session's share: applied -> client at p50 2.1 s (real time) and 0.41 s (micro-batch)
    # without it, 0.10 and 0.11 s with it (bench/results/history.md, "The generator's own queue, and the
    # reducers' session below the edge").
    if lower_session_priority(settings.session_niceness):
        log.info("the reducers' session at niceness %d", settings.session_niceness)
    client = redis_client(redis_url)
    # In real-time mode the price query reports progress only when a real-time batch ends
    # (SPARK_REALTIME_BATCH); the applier commits the price topic's offsets it has applied to the
    # price query's group as it goes, so the lag shown is the whole path's, and current.
    committed_elsewhere = frozenset({PRICES.name}) if mode == "realtime" else frozenset()
    spark.streams.addListener(
        RedisProgressListener(client, COMPONENT, bootstrap=bootstrap, committed_elsewhere=committed_elsewhere)
    )
    supervisor = QuerySupervisor(
        starters=starters(spark, bootstrap=bootstrap, redis_url=redis_url, checkpoint_root=checkpoint_root, mode=mode),
        redis_client=client,
        backoff=backoff_from_config(settings),
    )
    supervisor.start()
    driver_metrics_serve(
        listen=settings.driver_metrics, registry=driver_registry(runs=lambda: dict(supervisor.runs), jvm_pid=jvm)
    )
    refresher = QueryRefresher(redis_client=client, interval_s=settings.query_refresh_s)
    refresher.start()
    store_watch = StoreWatch(redis_url=redis_url, bootstrap=bootstrap)
    store_watch.start()
    log.info("%d objects of the started process left out of garbage collection", freeze_startup_heap())
    log.info("reducers running: %s (price path in %s mode)", ", ".join(supervisor.queries), mode)
    stop_requested = threading.Event()

    def stop(signum: int, frame: Any) -> None:
        log.info("signal %s: stopping", signum)
        stop_requested.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    while not stop_requested.wait(POLL_S):
        supervisor.poll()
    refresher.stopped.set()
    store_watch.stopped.set()
    supervisor.stop()
    spark.stop()


if __name__ == "__main__":
    main()
