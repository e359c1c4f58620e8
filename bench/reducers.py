"""`make bench`'s reducers stage: updates/s from Kafka to Redis state and pub-sub, in micro-batch
and real-time mode, against the bare Spark query (the ceiling, bench/spark_ceiling.py) and one
plain consumer of the same reducer (bench/plain_consumer.py), each working off the same backlog.

A full run measures the micro-batch reducers and their two baselines in rounds, turn about
(``reducer_rounds``); the reducer processes it starts (``reducers_running``) are the end-to-end
stage's too.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson
from django.conf import settings

from bench.common import (
    ROOT,
    cpu_probe_ms,
    log,
    markets_define,
    markets_table_write,
    median_run,
    namespace,
)
from bench.feed import make_updates, produce_encoded
from bench.harness import Process, python, wait_until
from odds.core.kafka import producer_create
from store import keys
from store.clients import redis_client

TARGETS = [
    ("reducer_microbatch_updates_per_s", "Reducers, micro-batch", "updates/s", ">= 100,000"),
    (
        "reducer_spark_ceiling_updates_per_s",
        "Bare Spark query (decode, newest per market): the ceiling",
        "updates/s",
        None,
    ),
    ("reducer_plain_consumer_updates_per_s", "One plain Kafka consumer, same reducer, no Spark", "updates/s", None),
    ("reducer_microbatch_vs_ceiling", "Micro-batch ÷ the Spark ceiling, same run", "ratio", ">= 0.7"),
    ("reducer_microbatch_vs_plain", "Micro-batch ÷ the plain consumer, same run", "ratio", "> 1"),
    ("reducer_realtime_updates_per_s", "Reducers, real-time mode", "updates/s", ">= 20,000"),
    ("reducer_microbatch_cpu_s_per_1000", "Reducers' CPU per 1,000 updates (micro-batch)", "CPU s", None),
    ("reducer_spark_ceiling_cpu_s_per_1000", "Bare Spark query's CPU per 1,000 updates", "CPU s", None),
    ("reducer_cpu_vs_ceiling", "Reducers' CPU per update ÷ the bare query's, same run", "ratio", None),
]


def reducer_env(namespace: str, mode: str, *, realtime_batch: str | None = "30 seconds") -> dict[str, str]:
    """The environment of a reducer process under benchmark. ``realtime_batch``: the length of a
    real-time batch (its checkpoint interval); ``None`` leaves the product's (``SPARK_REALTIME_BATCH``)."""
    env = {
        "SPORTSBOOK_NAMESPACE": namespace,
        "SPARK_TRIGGER_MODE": mode,
        # Real-time mode needs a task slot per partition of the price topic plus the other queries.
        "SPARK_MASTER": "local[16]" if mode == "realtime" else "local[4]",
        "SPARK_CHECKPOINT_DIR": str(ROOT / "var" / "bench-checkpoints" / namespace),
    }
    if realtime_batch is not None:
        env["SPARK_REALTIME_BATCH"] = realtime_batch
    return env


@dataclass
class Reducers:
    """A reducer process under benchmark, in a namespace of its own."""

    namespace: str
    env: dict[str, str]
    process: Process
    client: Any
    producer: Any


@contextlib.contextmanager
def reducers_running(
    mode: str, *, log_name: str, define: bool = True, realtime_batch: str | None = "30 seconds"
) -> Iterator[Reducers]:
    """Start the reducers in a fresh namespace and wait for them; with ``define``, define markets
    1 to 1000 (the end-to-end run's). They are stopped on the way out."""
    with namespace() as ns:
        client = redis_client(settings.REDIS_URL)
        env = reducer_env(ns, mode, realtime_batch=realtime_batch)
        reducer = Process(
            "reducers",
            python("-m", "spark.jobs.reducers"),
            env={**os.environ, **env},
            log=ROOT / "var" / "log" / log_name,
        ).start()
        try:
            wait_until(lambda: client.get(keys.heartbeat("reducers")), timeout=180, what="reducers to start")
            producer = producer_create()
            if define:
                markets_define(producer, client, 1000)
            yield Reducers(ns, env, reducer, client, producer)
        finally:
            reducer.stop()


@dataclass(frozen=True)
class Batch:
    """One progress report of a streaming query: rows in, milliseconds, when it started (epoch s)."""

    rows: int
    ms: int
    started: float


def busy_rate(batches: Iterable[Batch], *, since: float) -> int | None:
    """Rows over the time the batches with rows that started at ``since`` (epoch s) or later were
    busy, idle time between batches left out; over every batch with rows when none started then.
    The reducers stage takes its consumers' rates so, ``since`` the end of the backlog's
    production: the producer competes with the consumer for the same two cores until then."""
    with_rows = [b for b in batches if b.rows]
    counted = [b for b in with_rows if b.started >= since] or with_rows
    busy_ms = sum(b.ms for b in counted)
    return round(sum(b.rows for b in counted) / (busy_ms / 1000)) if busy_ms else None


def note_progress(client: Any, batches: dict[int, Batch], query: str = "prices") -> None:
    """Record a query's recent progress reports under their batch ids (the reducers keep the
    last ones in a list, so a batch is not missed between two polls)."""
    for raw in client.lrange(keys.reducer_progress_recent(query), 0, -1):
        progress = orjson.loads(raw)
        batches[progress["batchId"]] = Batch(
            progress["numInputRows"],
            (progress.get("durationMs") or {}).get("triggerExecution", 0),
            datetime.fromisoformat(progress["timestamp"].replace("Z", "+00:00")).timestamp(),
        )


# The backlog every consumer of the reducers stage works off: the same records for each.
REDUCER_FIRST_MARKET = 3001
REDUCER_MARKETS = 1000


def reducer_warmups(mode: str, records: int) -> list[int]:
    """Records worked off before measuring, the same for the reducers, the bare Spark query and
    the plain consumer. The first batches pay for planning, code generation and starting Python
    workers, and a fresh JVM goes on compiling the code it runs for minutes (the JIT compiler
    took a third of the reducers' CPU 40 s after start): micro-batch is measured after three
    warm-ups, a small batch (the driver path) and two backlogs of ``REDUCER_WARMUP_BACKLOG``
    records (the large-batch path), each worked off before the next."""
    if mode == "microbatch" and records > 3 * REDUCER_WARMUP_BACKLOG:
        return [2000, REDUCER_WARMUP_BACKLOG, REDUCER_WARMUP_BACKLOG]
    return [2000]


# A warm-up backlog of the micro-batch reducers: one batch at the cap (SPARK_MAX_OFFSETS_PER_TRIGGER).
REDUCER_WARMUP_BACKLOG = 200_000
# Seconds the micro-batch reducers are given, after the warm-up's prices are applied, for the
# movers query to finish a batch of the window partials the warm-up made (``movers_ran_since``).
# Its first batches in a JVM plan, generate code and open its state store: 3.1-4.0 s each
# against 1.3 s settled, beside price batches that took two to three times their settled time.
# Its trigger is SPARK_MOVERS_TRIGGER (10 s), so at most about 15 s.
SETTLE_MOST_S = 30
# Records of the reducers stage (warm-ups included), per trigger mode. Micro-batch measures thirteen
# batches at the cap, 10-15 s of work: longer than the movers query's trigger (SPARK_MOVERS_TRIGGER,
# 10 s), so each run counts the movers' batches beside the prices' in proportion, not by chance
# (with three, the rate depended on whether one of them fell among the three, bench/results/history.md).
# Real-time mode (about a tenth of the rate) works off a backlog in a minute.
REDUCER_RECORDS = {"microbatch": 3_000_000, "realtime": 400_000}


@dataclass
class Drain:
    """How a consumer worked off a backlog after its warm-up.

    The backlog is produced while the consumer runs, and the producer competes with it for the
    same two cores; the rates that count (``busy_rate``, ``after_rate``) are taken over the part
    worked off once every record was produced.
    """

    records: int
    warmup: int
    drain_s: float
    ninety_s: float
    # Progress reports of the batches after the warm-up (Spark consumers).
    batches: dict[int, Batch]
    # When the last record was produced (epoch s), how many were worked off by then, and the
    # seconds from then to the last one worked off.
    produced_at: float
    done_when_produced: int
    after_s: float
    # CPU seconds the consumer used from the measured backlog's first record to its last
    # worked off (``cpu``, when given).
    cpu_s: float | None = None

    def busy_rate(self) -> int | None:
        """Rows over the time the batches started after the backlog was produced were busy
        (``busy_rate``)."""
        return busy_rate(self.batches.values(), since=self.produced_at)

    def cpu_s_per_1000(self) -> float | None:
        """The consumer's CPU seconds per 1,000 records of the measured backlog."""
        measured = self.records - self.warmup
        return round(self.cpu_s * 1000 / measured, 4) if self.cpu_s is not None and measured > 0 else None

    def after_rate(self) -> int | None:
        """Records worked off after the backlog was produced, over the seconds that took."""
        left = self.records - self.done_when_produced
        return round(left / self.after_s) if left > 0 and self.after_s > 0 else None

    def drain_rate(self) -> int:
        return round((self.records - self.warmup) / self.drain_s)

    def ninety_rate(self) -> int:
        return round(0.9 * (self.records - self.warmup) / self.ninety_s)

    def rate(self, *, wall_clock: bool = False) -> tuple[int, str]:
        """The rate that stands for the drain, and what it was taken from: rows over the time
        batches were busy, or (asked for, or when no progress report of the measured batches
        reached Redis in time) the first 90% of the backlog over the wall clock."""
        busy = None if wall_clock else self.busy_rate()
        return (busy, "busy batches") if busy is not None else (self.ninety_rate(), "wall clock")


def drain_backlog(
    *,
    client: Any,
    producer: Any,
    records: int,
    warmups: list[int],
    done: Callable[[], int],
    query: str | None,
    whole_reports: bool = True,
    settled: Callable[[float], bool] | None = None,
    markets: int = REDUCER_MARKETS,
    first: int = REDUCER_FIRST_MARKET,
    cpu: Callable[[], float] | None = None,
) -> Drain:
    """Produce the reducers stage's backlog (warm-up first) and time how ``done`` (records worked
    off so far) reaches it; ``query``: the Spark query whose progress reports to collect, waiting
    for the reports of every measured row when ``whole_reports`` (a real-time batch can start
    before the backlog, so its rows are not all in reports of batches after it); ``settled``:
    given when the warm-up was worked off (epoch s), whether the consumer's own work on it is
    done too, waited for (``SETTLE_MOST_S`` at most) before the measured backlog; ``markets``
    from ``first`` on: the markets the records move, in turn; ``cpu``: the consumer's CPU
    seconds so far, read as the measured backlog starts and once it is worked off. The records
    are encoded before the clock starts, so producing them costs as little as it can."""
    encoded = [(u.key(), u.encode()) for u in make_updates(records, markets, first=first)]

    def reached(count: int) -> Callable[[], bool]:
        return lambda: done() >= count

    produced = 0
    for size in warmups:
        produce_encoded(producer, encoded[produced : produced + size])
        produced += size
        wait_until(reached(produced), timeout=300, what="the warm-up records")
    # The batch that worked off the last warm-up records reports its progress after they are
    # applied: batches are counted from the first one that started after that.
    warm_done_at = time.time()
    if settled is not None:
        try:
            wait_until(lambda: settled(warm_done_at), timeout=SETTLE_MOST_S, what="the warm-up's own work")
        except TimeoutError as exc:
            log(f"measured without it: {exc}")
        warm_done_at = time.time()
    cpu_started = cpu() if cpu is not None else None
    started = time.perf_counter()
    produce_encoded(producer, encoded[produced:])
    produced_at, produced_perf, done_when_produced = time.time(), time.perf_counter(), done()
    batches: dict[int, Batch] = {}
    deadline = time.monotonic() + 600
    # The rate is also taken at 90 % of the records: the tail of a drain is one batch's
    # fixed cost over a few records.
    ninety = produced + 0.9 * (records - produced)
    ninety_s: float | None = None
    while (done_now := done()) < records:
        if ninety_s is None and done_now >= ninety:
            ninety_s = time.perf_counter() - started
        if time.monotonic() > deadline:
            raise TimeoutError(f"{records - done_now} of {records} records not worked off within 600 s")
        # Reading the reducers' state of 1,000 markets costs Redis and this process CPU the
        # consumer under test would otherwise have: ten times a second is enough for batches
        # of seconds.
        time.sleep(0.1)
    finished = time.perf_counter()
    cpu_s = None if cpu is None or cpu_started is None else cpu() - cpu_started
    if query is not None:
        # Progress reports reach Redis through Spark's listener bus, after the batch's effects:
        # wait (a while at most) until the reports of the measured rows are in.
        measured = records - produced
        wait_deadline = time.monotonic() + 60
        while True:
            note_progress(client, batches, query)
            counted = sum(b.rows for b in batches.values() if b.started >= warm_done_at)
            if not whole_reports or counted >= measured or time.monotonic() > wait_deadline:
                break
            time.sleep(0.2)
    return Drain(
        records=records,
        warmup=produced,
        drain_s=finished - started,
        ninety_s=ninety_s or finished - started,
        batches={b: v for b, v in batches.items() if v.started >= warm_done_at},
        produced_at=produced_at,
        done_when_produced=done_when_produced,
        after_s=finished - produced_perf,
        cpu_s=cpu_s,
    )


# The sum of the ``seq`` member of the hashes KEYS names, added up in Redis. The benchmark asks
# for it ten times a second while the consumer under test works: as a pipeline of a thousand
# HGETs it cost this process 15 ms of CPU each time, the cores' 7 % that the bare query (probed
# with one GET) did not lose; as this script, under a millisecond here and about 1.5 ms in Redis.
SEQ_SUM_LUA = """
local total = 0
for _, key in ipairs(KEYS) do
  total = total + (tonumber(redis.call('HGET', key, 'seq')) or 0)
end
return total
"""


def applied_updates_probe(
    client: Any, *, markets: int = REDUCER_MARKETS, first: int = REDUCER_FIRST_MARKET
) -> Callable[[], int]:
    """How many price updates the reducers' state holds for ``markets`` markets from ``first``
    on (the stage's), in this namespace, each time it is called: the last sequences add up to
    the records applied, as every market's sequences run from 1. The keys and the script are
    made once, for every call of the benchmark's loop."""
    names = [keys.market_state(m) for m in range(first, first + markets)]
    seq_sum = client.register_script(SEQ_SUM_LUA)
    return lambda: int(seq_sum(keys=names))


def movers_ran_since(client: Any) -> Callable[[float], bool]:
    """Whether the reducers' movers query has finished a batch of window partials that started
    at or after a time (epoch s): the warm-up's partials are then through its first batches."""

    def ran(since: float) -> bool:
        batches: dict[int, Batch] = {}
        note_progress(client, batches, "movers")
        return any(b.rows and b.started >= since for b in batches.values())

    return ran


def bench_reducers(*, mode: str, records: int, running: Reducers | None = None) -> dict[str, Any]:
    """Updates/s the reducers apply from a backlog on the price topic. ``running``: reducers
    already started (--quick shares one process per mode with the end-to-end stage); its
    markets from 3001 on are used, so the end-to-end run's markets 1 to 1000 stay untouched."""
    with contextlib.ExitStack() as stack:
        if running is None:
            running = stack.enter_context(reducers_running(mode, log_name=f"bench-reducers-{mode}.log", define=False))
        return _measure_reducers(running, mode=mode, records=records)


def _measure_reducers(running: Reducers, *, mode: str, records: int) -> dict[str, Any]:
    client, producer, reducer = running.client, running.producer, running.process
    markets_define(producer, client, REDUCER_MARKETS, first=REDUCER_FIRST_MARKET)
    warmups = reducer_warmups(mode, records)
    drain = drain_backlog(
        client=client,
        producer=producer,
        records=records,
        warmups=warmups,
        done=applied_updates_probe(client),
        query="prices",
        whole_reports=mode != "realtime",
        # A warm-up backlog makes the movers' first window partials: their batches settle too.
        settled=movers_ran_since(client) if REDUCER_WARMUP_BACKLOG in warmups else None,
        cpu=reducer.cpu_s,
    )
    # Micro-batch: rows over the time batches were busy. Real-time mode has no idle time
    # between batches to leave out (a batch lasts its whole checkpoint interval), so its
    # rate is the backlog over the wall-clock time to apply all of it. When no progress report
    # of the measured batches reached Redis in time (Spark's listener bus runs behind under
    # load), the micro-batch rate is the wall-clock one too, and the results say so.
    rate, rate_from = drain.rate(wall_clock=mode == "realtime")
    if mode != "realtime" and rate_from == "wall clock":
        log(f"reducers ({mode}): no progress report of the measured batches arrived; rate from the wall clock")
    return {
        f"reducer_{mode}_updates_per_s": rate,
        f"reducer_{mode}_rate_from": rate_from,
        f"reducer_{mode}_first_90pct_updates_per_s": drain.ninety_rate(),
        f"reducer_{mode}_drain_updates_per_s": drain.drain_rate(),
        f"reducer_{mode}_records": records,
        f"reducer_{mode}_after_produced_updates_per_s": drain.after_rate(),
        f"reducer_{mode}_batches": len([b for b in drain.batches.values() if b.rows]),
        f"reducer_{mode}_measured_rows": sum(b.rows for b in drain.batches.values()),
        f"reducer_{mode}_rss_mib": round(reducer.rss_mib()),
        f"reducer_{mode}_cpu_s_per_1000": drain.cpu_s_per_1000(),
    }


def drain_in_process(
    module: str,
    *,
    env: dict[str, str],
    component: str,
    client: Any,
    records: int,
    done: Callable[[], int],
    query: str | None,
) -> tuple[Drain, float]:
    """Start ``python -m module``, wait for its heartbeat (``component``), let it work off the
    reducers stage's backlog, stop it; the drain (with the CPU of its measured backlog) and the
    CPU seconds the process used in all."""
    process = Process(
        component, python("-m", module), env={**os.environ, **env}, log=ROOT / "var" / "log" / f"bench-{component}.log"
    ).start()
    try:
        wait_until(lambda: client.get(keys.heartbeat(component)), timeout=180, what=f"{module} to start")
        drain = drain_backlog(
            client=client,
            producer=producer_create(),
            records=records,
            warmups=reducer_warmups("microbatch", records),
            done=done,
            query=query,
            cpu=process.cpu_s,
        )
        return drain, process.cpu_s()
    finally:
        process.stop()


def bench_reducer_ceiling(*, records: int) -> dict[str, Any]:
    """The bare Spark query (bench/spark_ceiling.py) on the micro-batch reducers' backlog, with
    their session and source: its busy rate is what Spark does here at most."""
    with namespace() as ns:
        client = redis_client(settings.REDIS_URL)
        drain, _ = drain_in_process(
            "bench.spark_ceiling",
            env=reducer_env(ns, "microbatch"),
            component="ceiling",
            client=client,
            records=records,
            done=lambda: int(client.get(keys.bench_rows("ceiling")) or 0),
            query="ceiling",
        )
    return {
        "reducer_spark_ceiling_updates_per_s": drain.busy_rate(),
        "reducer_spark_ceiling_drain_updates_per_s": drain.drain_rate(),
        "reducer_spark_ceiling_after_produced_updates_per_s": drain.after_rate(),
        "reducer_spark_ceiling_batches": len([b for b in drain.batches.values() if b.rows]),
        "reducer_spark_ceiling_cpu_s_per_1000": drain.cpu_s_per_1000(),
    }


def bench_plain_consumer(*, records: int) -> dict[str, Any]:
    """The same reducer functions in one confluent-kafka consumer process (bench/plain_consumer.py),
    no Spark, on the same backlog into the same Redis. Its rate is what it applied after the
    backlog was produced over the wall-clock time that took: it polls without pause, so it has
    no idle time to leave out."""
    with namespace() as ns:
        client = redis_client(settings.REDIS_URL)
        markets_table_write(client, REDUCER_MARKETS, first=REDUCER_FIRST_MARKET)
        drain, cpu_s = drain_in_process(
            "bench.plain_consumer",
            env={"SPORTSBOOK_NAMESPACE": ns},
            component="plain",
            client=client,
            records=records,
            done=applied_updates_probe(client),
            query=None,
        )
    return {
        "reducer_plain_consumer_updates_per_s": drain.after_rate() or drain.drain_rate(),
        "reducer_plain_consumer_drain_updates_per_s": drain.drain_rate(),
        "reducer_plain_consumer_cpu_s": round(cpu_s, 1),
        "reducer_plain_consumer_cpu_s_per_1000": drain.cpu_s_per_1000(),
    }


def reducer_baselines(results: dict[str, Any], *, records: int) -> None:
    """The micro-batch reducers against the bare Spark query and the plain consumer, on the same
    backlog in the same run (``results`` holds the reducers' figure already)."""
    log("reducers: the bare Spark query (ceiling)")
    results.update(bench_reducer_ceiling(records=records))
    log("reducers: one plain consumer, no Spark")
    results.update(bench_plain_consumer(records=records))
    reducer_ratios(results)


def reducer_ratios(results: dict[str, Any]) -> None:
    ours = results.get("reducer_microbatch_updates_per_s")
    ceiling = results.get("reducer_spark_ceiling_updates_per_s")
    plain = results.get("reducer_plain_consumer_updates_per_s")
    results["reducer_microbatch_vs_ceiling"] = round(ours / ceiling, 2) if ours and ceiling else None
    results["reducer_microbatch_vs_plain"] = round(ours / plain, 2) if ours and plain else None
    cost = results.get("reducer_microbatch_cpu_s_per_1000")
    bare_cost = results.get("reducer_spark_ceiling_cpu_s_per_1000")
    results["reducer_cpu_vs_ceiling"] = round(cost / bare_cost, 2) if cost and bare_cost else None


# The consumers of the micro-batch reducers stage and the key of each one's figure.
REDUCER_CONSUMERS = {
    "reducers": "reducer_microbatch_updates_per_s",
    "ceiling": "reducer_spark_ceiling_updates_per_s",
    "plain": "reducer_plain_consumer_updates_per_s",
}
# Rounds of the micro-batch reducers stage in a full run: each round works the same backlog off
# with each consumer in turn. On this shared machine the speed of the cores changes from minute
# to minute (the ratio of the reducers to the ceiling moved from 0.52 to 0.66 on the same code
# within an hour), so the figures are the medians of the rounds, and every round's are kept.
REDUCER_ROUNDS = 3


def round_order(index: int) -> list[str]:
    """The consumers of round ``index`` (from 0) in the order they run: reversed every other
    round, so that no consumer is always the one run first or last."""
    names = list(REDUCER_CONSUMERS)
    return names if index % 2 == 0 else names[::-1]


def reducer_rounds(results: dict[str, Any], *, records: int, rounds: int = REDUCER_ROUNDS) -> None:
    """The micro-batch reducers, the bare Spark query and the plain consumer, ``rounds`` times
    each, alternating (``round_order``): each consumer's figures are those of its median run,
    and the ratios are those of the medians. ``reducer_rounds`` keeps every run's figure and the
    machine's speed after it (``cpu_probe_ms``)."""
    measure: dict[str, Callable[[], dict[str, Any]]] = {
        "reducers": lambda: bench_reducers(mode="microbatch", records=records),
        "ceiling": lambda: bench_reducer_ceiling(records=records),
        "plain": lambda: bench_plain_consumer(records=records),
    }
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in REDUCER_CONSUMERS}
    kept: list[dict[str, Any]] = []
    for index in range(rounds):
        for name in round_order(index):
            log(f"reducers, round {index + 1} of {rounds}: {name}")
            run = measure[name]()
            runs[name].append(run)
            kept.append(
                {
                    "round": index + 1,
                    "consumer": name,
                    "updates_per_s": run.get(REDUCER_CONSUMERS[name]),
                    "cpu_probe_ms": cpu_probe_ms(),
                }
            )
    for name, key in REDUCER_CONSUMERS.items():
        results.update(median_run(runs[name], key))
    reducer_ratios(results)
    results["reducer_rounds"] = kept


def reducer_rounds_line(results: dict[str, Any]) -> list[str]:
    """The micro-batch reducers stage's runs, in the order they ran."""
    kept = results.get("reducer_rounds") or []
    if not kept:
        return []
    return [
        f"- Micro-batch reducers stage, {max(r['round'] for r in kept)} rounds (updates/s in the order run; "
        "each figure in the table is its consumer's median, and the ratios are those of the medians): "
        + ", ".join(f"{r['consumer']} {r['updates_per_s']:,}" if r["updates_per_s"] else r["consumer"] for r in kept)
    ]
