"""`make bench`: the whole pipe measured on this machine, each figure against its baseline.

Stages (each a median of several runs where it is cheap enough to repeat):
  feed      records/s the idempotent producer (acks=all) sustains
  reducers  updates/s from Kafka to Redis state + pub-sub, micro-batch and real-time mode
  edge      deliveries/s and p99 of the hub edge, plain Channels and a bare server (k6 clients), same run
  e2e       source event → websocket frame, p50/p99/max, split by stage, both trigger modes and
            the floor (one plain consumer), measured turn about in rounds
  footprint resident memory of every component during the end-to-end run
  suspend   a trader's suspension from the price topic to a punter's websocket (bench/suspend.py)
  bets      bet placement latency at a steady rate under stream load (bench/bets.py)
  channels  subscriber channels and shared query channels at scale: the fan-out per batch at 1k,
            5k and 10k channels, the query stage, and 10,000 channels held by k6 clients against
            a plain watch in the same run (bench/channels.py)
  game      the predictor game: answers into the Spark game query's state, a goal settling every
            punter at once, the reducers' memory with the state held (bench/game.py)
  up        `make up` to a healthy /healthz

Writes bench/results/<date>.json, bench/results/latest.json, PNG plots under docs/img/ and the
table in docs/performance.md. `--quick` (used by `make test` as a smoke test) runs every stage
small and fast, asserts nothing about speed, and writes only under bench/results/quick/.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import django

django.setup()

import orjson
from django.conf import settings

from bench import channels, edge, game
from bench.common import (
    RESULTS,
    ROOT,
    in_namespace,
    machine,
    markets_define,
    markets_table_write,
    median,
    namespace,
)
from bench.harness import CompilerLoad, Process, python, wait_until
from bench.suspend import time_suspensions
from odds.core.kafka import producer_create
from reducers import keys, topics
from reducers.schemas import PriceUpdate, SelectionPrice
from store.clients import redis_client


def log(message: str) -> None:
    print(f"[{datetime.now().strftime('%H:%M:%S')}] {message}", flush=True)


def make_updates(count: int, markets: int, *, first: int = 1) -> list[PriceUpdate]:
    """``count`` price updates over ``markets`` markets from ``first`` on, sequences from 1."""
    now = int(time.time() * 1000)
    seqs = [0] * (first + markets)
    out = []
    for i in range(count):
        m = first + i % markets
        seqs[m] += 1
        price = Decimal(101 + (i * 7919) % 800) / 100
        out.append(
            PriceUpdate(m, seqs[m], "open", (SelectionPrice(1, price), SelectionPrice(2, Decimal("1.90"))), now, now)
        )
    return out


# --- 1. feed → Kafka -------------------------------------------------------------------------


def bench_feed(*, records: int, runs: int) -> dict[str, Any]:
    values = [(u.key(), u.encode()) for u in make_updates(records, 1000)]
    rates = []
    for _ in range(runs):
        with namespace():
            producer = producer_create()
            started = time.perf_counter()
            if produce_encoded(producer, values, timeout=60, poll_each=True):
                raise RuntimeError("feed benchmark: records not acknowledged")
            rates.append(records / (time.perf_counter() - started))
    return {"feed_records_per_s": round(median(rates)), "feed_runs": [round(r) for r in rates], "feed_records": records}


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


# --- 2. reducers -----------------------------------------------------------------------------


def produce_all(producer: Any, updates: list[PriceUpdate]) -> None:
    produce_encoded(producer, [(update.key(), update.encode()) for update in updates])


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
# Seconds of the end-to-end rate fed to fresh reducers before the end-to-end load is measured,
# at least; then on, up to E2E_WARMUP_MOST_S, until their JVM's compilers take less than
# E2E_JIT_SETTLED_CORES over a window of WARMUP_WINDOW_S (micro-batch at 1,000 prices a second:
# 0.21 of a core 170-200 s after the start, 0.06 at 385-415 s).
E2E_WARMUP_S = 180
E2E_WARMUP_MOST_S = 540
E2E_JIT_SETTLED_CORES = 0.1
WARMUP_WINDOW_S = 15


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

    def busy_rate(self) -> int | None:
        """Rows over the time the batches started after the backlog was produced were busy
        (idle time between batches left out); all batches when none started after it."""
        after = [b for b in self.batches.values() if b.started >= self.produced_at and b.rows]
        counted = after or [b for b in self.batches.values() if b.rows]
        busy_ms = sum(b.ms for b in counted)
        return round(sum(b.rows for b in counted) / (busy_ms / 1000)) if busy_ms else None

    def after_rate(self) -> int | None:
        """Records worked off after the backlog was produced, over the seconds that took."""
        left = self.records - self.done_when_produced
        return round(left / self.after_s) if left > 0 and self.after_s > 0 else None

    def drain_rate(self) -> int:
        return round((self.records - self.warmup) / self.drain_s)

    def ninety_rate(self) -> int:
        return round(0.9 * (self.records - self.warmup) / self.ninety_s)


def produce_encoded(
    producer: Any, records: list[tuple[bytes, bytes]], *, timeout: float = 120, poll_each: bool = False
) -> int:
    """Produce (key, value) pairs to the price topic and wait for them; returns how many were not
    acknowledged within ``timeout``. ``poll_each``: serve delivery reports after every record,
    as a feed does."""
    for key, value in records:
        while True:
            try:
                producer.produce(topics.prices(), key=key, value=value)
                break
            except BufferError:
                producer.poll(0.01)
        if poll_each:
            producer.poll(0)
    return int(producer.flush(timeout))


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
) -> Drain:
    """Produce the reducers stage's backlog (warm-up first) and time how ``done`` (records worked
    off so far) reaches it; ``query``: the Spark query whose progress reports to collect, waiting
    for the reports of every measured row when ``whole_reports`` (a real-time batch can start
    before the backlog, so its rows are not all in reports of batches after it); ``settled``:
    given when the warm-up was worked off (epoch s), whether the consumer's own work on it is
    done too, waited for (``SETTLE_MOST_S`` at most) before the measured backlog. The
    records are encoded before the clock starts, so producing them costs as little as it can."""
    encoded = [(u.key(), u.encode()) for u in make_updates(records, REDUCER_MARKETS, first=REDUCER_FIRST_MARKET)]

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


def applied_updates_probe(client: Any) -> Callable[[], int]:
    """How many price updates the reducers' state holds for the stage's markets, in this
    namespace, each time it is called: the last sequences add up to the records applied, as
    every market's sequences run from 1. The keys and the script are made once, for every call
    of the benchmark's loop."""
    names = [keys.market_state(m) for m in range(REDUCER_FIRST_MARKET, REDUCER_FIRST_MARKET + REDUCER_MARKETS)]
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
    )
    # Micro-batch: rows over the time batches were busy. Real-time mode has no idle time
    # between batches to leave out (a batch lasts its whole checkpoint interval), so its
    # rate is the backlog over the wall-clock time to apply all of it. When no progress report
    # of the measured batches reached Redis in time (Spark's listener bus runs behind under
    # load), the micro-batch rate is the wall-clock one too, and the results say so.
    busy = drain.busy_rate()
    rate = drain.ninety_rate() if mode == "realtime" or busy is None else busy
    if mode != "realtime" and busy is None:
        log(f"reducers ({mode}): no progress report of the measured batches arrived; rate from the wall clock")
    return {
        f"reducer_{mode}_updates_per_s": rate,
        f"reducer_{mode}_rate_from": "wall clock" if mode == "realtime" or busy is None else "busy batches",
        f"reducer_{mode}_first_90pct_updates_per_s": drain.ninety_rate(),
        f"reducer_{mode}_drain_updates_per_s": drain.drain_rate(),
        f"reducer_{mode}_records": records,
        f"reducer_{mode}_after_produced_updates_per_s": drain.after_rate(),
        f"reducer_{mode}_batches": len([b for b in drain.batches.values() if b.rows]),
        f"reducer_{mode}_measured_rows": sum(b.rows for b in drain.batches.values()),
        f"reducer_{mode}_rss_mib": round(reducer.rss_mib()),
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
    reducers stage's backlog, stop it; the drain and the CPU seconds it used."""
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


def game_ratio(results: dict[str, Any]) -> None:
    """The game's answers into state against the micro-batch reducers' price updates, same run."""
    answers = results.get("game_answers_per_s")
    updates = results.get("reducer_microbatch_updates_per_s")
    results["game_answers_vs_reducers"] = round(answers / updates, 2) if answers and updates else None


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


def median_run(runs: list[dict[str, Any]], key: str) -> dict[str, Any]:
    """The run whose ``key`` is the median of ``runs`` (the lower one of an even count), so the
    figures reported beside it come from the same run; runs without ``key`` are left out."""
    measured = sorted((r for r in runs if r.get(key) is not None), key=lambda r: r[key])
    if not measured:
        return runs[0] if runs else {}
    return measured[(len(measured) - 1) // 2]


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


# --- 3. edge ---------------------------------------------------------------------------------


EDGE_P99_MS = 100
EDGE_KINDS = (
    ("ceiling", "bare websocket server (no Django, no Redis)"),
    ("hub", "the edge (hub, batched)"),
    ("channel_layer", "plain Channels group_send"),
)


# The share of the offered deliveries a row must deliver to count (conflation merges a few).
EDGE_DELIVERED_SHARE = 0.9


def edge_best(rows: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    """The row of the highest delivery rate with p99 within EDGE_P99_MS that delivered what was
    offered (a row whose clients lost their sockets, or got a fraction of the frames, measured
    nothing); when none is, the row of the lowest offered rate (flagged ``within_p99: False``)."""
    mine = [r for r in rows if r["edge"] == kind]
    within = [
        r
        for r in mine
        if r["p99_ms"] <= EDGE_P99_MS
        and not r.get("client_errors")
        and r["deliveries_per_s"] >= EDGE_DELIVERED_SHARE * r["expected_per_s"]
    ]
    if within:
        return {**max(within, key=lambda r: r["deliveries_per_s"]), "within_p99": True}
    return {**min(mine, key=lambda r: r["rate"]), "within_p99": False}


def bench_edge(
    *,
    clients: int,
    rates: list[int],
    duration: float,
    warmup: float,
    workers: int,
    server_choices: list[str],
    server_rate: int,
) -> dict[str, Any]:
    """Deliveries/s and latency of the three edges at rising update rates, driven by k6 with the
    same clients (each watching 20 of 1,000 markets, batching on) and the same updates; then the
    hub on each of ``server_choices`` at ``server_rate`` updates/s."""

    def measure(*, kind: str, server: str, rate: int) -> dict[str, Any]:
        args = edge.parse(
            [
                "--edge",
                kind,
                "--server",
                server,
                "--clients",
                str(clients),
                "--markets",
                "20",
                "--rate",
                str(rate),
                "--workers",
                "1" if kind == "channel_layer" else str(workers),
                "--duration",
                str(duration),
                "--warmup",
                str(warmup),
                "--connect-s",
                str(max(5, clients // 100)),
                "--batch",
            ]
        )
        with namespace():
            row = edge.run(args)
        log(
            f"edge {kind} on {server} at {rate} updates/s: {row['deliveries_per_s']}/s of {row['expected_per_s']}/s "
            f"offered, p99 {row['p99_ms']} ms, server {row['server_cpu_s_per_1000']} CPU s per 1,000"
        )
        return row

    rows = []
    for kind, _ in EDGE_KINDS:
        for rate in rates:
            rows.append(measure(kind=kind, server="uvicorn", rate=rate))
            if rows[-1]["p99_ms"] > 4 * EDGE_P99_MS:
                break  # past this edge's limit: higher rates only queue more
    hub, plain, ceiling = (edge_best(rows, k) for k in ("hub", "channel_layer", "ceiling"))
    # The hub on each ASGI server that serves Channels' websockets, at one rate, side by side.
    servers = [measure(kind="hub", server=server, rate=server_rate) for server in server_choices]
    return {
        "edge_deliveries_per_s": hub["deliveries_per_s"],
        "edge_p99_ms": hub["p99_ms"],
        "edge_p99_within_target": hub["within_p99"],
        "edge_server_cpu_s_per_1000": hub["server_cpu_s_per_1000"],
        "edge_generator_cpu_share": hub["generator_cpu_share"],
        "edge_baseline_deliveries_per_s": plain["deliveries_per_s"],
        "edge_baseline_p99_ms": plain["p99_ms"],
        "edge_ceiling_deliveries_per_s": ceiling["deliveries_per_s"],
        "edge_ceiling_p99_ms": ceiling["p99_ms"],
        "edge_ceiling_server_cpu_s_per_1000": ceiling["server_cpu_s_per_1000"],
        "edge_ratio": round(hub["deliveries_per_s"] / max(1, plain["deliveries_per_s"]), 1),
        "edge_vs_ceiling": round(hub["deliveries_per_s"] / max(1, ceiling["deliveries_per_s"]), 2),
        "edge_clients": clients,
        "edge_clients_logged_in": hub["logged_in"],
        "edge_generator": "k6",
        "edge_rows": rows,
        "edge_server_rows": servers,
    }


TARGETS = [
    ("feed_records_per_s", "Feed → Kafka (acks=all, idempotent)", "records/s", None),
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
    ("edge_deliveries_per_s", "Edge (hub): highest rate with p99 <= 100 ms", "deliveries/s", None),
    ("edge_p99_ms", "Edge (hub) p99 at that rate", "ms", "<= 100"),
    ("edge_baseline_deliveries_per_s", "Plain Channels path (group_send), same test", "deliveries/s", None),
    ("edge_ceiling_deliveries_per_s", "Bare websocket server, same test: the ceiling", "deliveries/s", None),
    ("edge_ratio", "Hub ÷ plain path, same run", "times", ">= 15"),
    ("edge_vs_ceiling", "Hub ÷ the ceiling, same run", "ratio", ">= 0.6"),
    ("edge_server_cpu_s_per_1000", "Edge (hub) server CPU per 1,000 deliveries", "s", None),
    ("edge_generator_cpu_share", "Load generator (k6) share of the machine's CPU", "ratio", None),
    ("e2e_floor_p50_ms", "End to end through one plain consumer (the floor), p50", "ms", None),
    ("e2e_floor_p99_ms", "End to end through one plain consumer (the floor), p99", "ms", None),
    ("e2e_realtime_p99_vs_floor", "Real-time p99 ÷ the floor's p99, same run", "times", "<= 1.5"),
    ("e2e_microbatch_p50_ms", "End to end, micro-batch, p50", "ms", None),
    ("e2e_microbatch_p99_ms", "End to end, micro-batch, p99", "ms", "<= 500"),
    ("e2e_realtime_p50_ms", "End to end, real-time mode, p50", "ms", "<= 20"),
    ("e2e_realtime_p99_ms", "End to end, real-time mode, p99", "ms", "<= 100"),
    ("suspend_p50_ms", "Trader suspension → punter's websocket, p50", "ms", None),
    ("suspend_p99_ms", "Trader suspension → punter's websocket, p99", "ms", "<= 250"),
    ("suspend_max_ms", "Trader suspension → punter's websocket, slowest", "ms", "<= 1,000"),
    ("bets_db_ceiling_per_s", "Bet placement statement alone (pgbench): the database's ceiling", "bets/s", None),
    ("bets_db_minimal_per_s", "Bare debit-and-insert statement (pgbench), for comparison", "bets/s", None),
    ("bets_per_s", "Bets served with p99 <= 50 ms under stream load", "bets/s", None),
    ("bets_ratio", "Bets served ÷ the database's ceiling, same run", "ratio", ">= 0.25"),
    ("bet_p50_ms", "Bet placement p50 at 200 bets/s under stream load", "ms", None),
    ("bet_p99_ms", "Bet placement p99 at 200 bets/s under stream load", "ms", "<= 50"),
    (
        "origin_requests_per_1000_loads",
        "Page loads (not logged in) reaching Django, per 1,000 in a burst through the cache",
        "requests",
        "<= 10",
    ),
    (
        "views_snapshot_origin_requests_per_1000_loads",
        "View snapshot loads reaching Django, per 1,000 in a burst through the cache",
        "requests",
        "<= 10",
    ),
    ("first_price_ms_cached", "A page live: the page through the cache, then watch since it, p50", "ms", None),
    ("first_price_ms_uncached", "A page live: the page from Django, then a full image, p50", "ms", None),
    ("views_bytes_cached", "Bytes to a live page, through the cache and since", "bytes", None),
    ("views_bytes_uncached", "Bytes to a live page, from Django with a full image", "bytes", None),
    ("views_image_since_share", "Image after a fresh page (watched since it) ÷ a full image, bytes", "ratio", "<= 0.1"),
    ("stack_rss_gib", "Whole stack resident memory", "GiB", "<= 6"),
    ("up_to_healthy_s", "`make up` to healthy", "s", None),
]
TARGETS += channels.TARGETS
TARGETS += game.TARGETS


def versus(value: Any, target: str | None) -> str:
    """Whether a figure meets its target, and by how much it misses."""
    if target is None or not isinstance(value, (int, float)) or value != value:  # NaN: not measured
        return ""
    op, _, raw = target.partition(" ")
    bound = float(raw.replace(",", ""))
    if op == ">=":
        return "met" if value >= bound else f"missed: {value / bound:.0%} of target"
    if op == ">":
        return "met" if value > bound else f"missed: {value / bound:.0%} of target"
    if op == "<":
        return "met" if value < bound else f"missed: {value / bound:.1f} times the bound"
    if op != "<=":
        raise ValueError(f"a target is >=, >, < or <= a bound, got {target!r}")
    return "met" if value <= bound else f"missed: {value / bound:.1f} times the bound"


def plot_edge(rows: list[dict[str, Any]], path: Path) -> None:
    """Deliveries/s against p99 for each edge, one point per offered rate."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axis = plt.subplots(figsize=(7, 4.5))
    for kind, label in EDGE_KINDS:
        mine = sorted((r for r in rows if r["edge"] == kind), key=lambda r: r["rate"])
        axis.plot([r["deliveries_per_s"] for r in mine], [r["p99_ms"] for r in mine], marker="o", label=label)
    axis.axhline(EDGE_P99_MS, color="grey", linestyle="--", linewidth=1, label=f"p99 target {EDGE_P99_MS} ms")
    axis.set(xlabel="deliveries/s (k6 clients, 20 markets each)", ylabel="p99 latency (ms)", yscale="log")
    axis.set_title("Websocket edge: throughput against p99")
    axis.grid(alpha=0.3)
    axis.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def cpu_probe_ms() -> float:
    """Milliseconds this machine takes for a fixed piece of pure-Python work (three million loop
    steps, the fastest of three), taken between stages: on a shared host the speed of the cores
    changes from minute to minute, and a ratio of two figures measured minutes apart is only as
    good as the speed being the same for both."""
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        total = 0
        for i in range(3_000_000):
            total += i
        best = min(best, time.perf_counter() - started)
    return round(best * 1000, 1)


def cpu_probe_line(results: dict[str, Any]) -> list[str]:
    probes = results.get("cpu_probe_ms") or {}
    if not probes:
        return []
    return [
        "- Machine speed between stages (ms for the same fixed Python work, lower is faster; the "
        "figure after a stage's name is taken when it ended): " + ", ".join(f"{k} {v}" for k, v in probes.items())
    ]


def stage_dates_line(results: dict[str, Any]) -> list[str]:
    """Which run each stage's figures come from, when a run merged some stages into an earlier one."""
    dates = results.get("stage_dates") or {}
    if len(set(dates.values())) <= 1:
        return []
    by_date: dict[str, list[str]] = {}
    for stage, date in sorted(dates.items()):
        by_date.setdefault(date, []).append(stage)
    return ["- Figures by run: " + "; ".join(f"{', '.join(s)} from {d}" for d, s in sorted(by_date.items()))]


def write_markdown(results: dict[str, Any]) -> Path:
    """docs/performance.md from a full run: machine, date, table against the targets, plots."""
    lines = [
        "# Performance",
        "",
        "Written by `make bench` (`bench/run.py`) from its last run; stages run: "
        f"{', '.join(results.get('stages', [])) or 'all'} (the others are marked not measured).",
        "Everything runs co-located on one machine: Kafka, Redis, PostgreSQL, Spark, the ASGI workers",
        "and the load clients, which compete for the same cores.",
        "",
        f"- Date: {results['date']}",
        *stage_dates_line(results),
        *cpu_probe_line(results),
        *reducer_rounds_line(results),
        *e2e_rounds_line(results),
        f"- Machine: {results['machine']['cpus']} cores ({results['machine']['cpu_model']}), "
        f"{results['machine']['memory_gib']} GiB, kernel {results['machine']['kernel']}, "
        f"Python {results['machine']['python']}",
        "",
        "| measure | result | unit | target | against the target |",
        "|---|---|---|---|---|",
    ]
    for key, label, unit, target in TARGETS:
        value = results.get(key)
        shown = "not measured in this run" if value is None else f"{value:,}" if isinstance(value, int) else value
        lines.append(f"| {label} | {shown} | {unit} | {target or '—'} | {versus(value, target)} |")
    for mode in ("microbatch", "realtime"):
        stages = results.get(f"e2e_{mode}_stages")
        if stages:
            split = ", ".join(f"{k.removesuffix('_p50_ms').replace('_', ' ')} {v} ms" for k, v in stages.items())
            lines.append("")
            lines.append(f"End to end, {mode}, p50 of each stage: {split}.")
        footprint = results.get(f"footprint_{mode}_mib")
        if footprint:
            lines.append(
                f"Resident memory during the {mode} end-to-end run (MiB): "
                + ", ".join(f"{k} {v:,}" for k, v in footprint.items())
                + "."
            )
    if results.get("edge_rows"):
        lines += [
            "",
            "## Edge runs",
            "",
            "| path | clients | updates/s | offered/s | delivered/s | p50 ms | p99 ms | server CPU s / 1,000 "
            "| k6 CPU share |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for r in results["edge_rows"]:
            lines.append(
                f"| {r['edge']} | {r['clients']} | {r['rate']:,.0f} | {r['expected_per_s']:,} | "
                f"{r['deliveries_per_s']:,} | {r['p50_ms']} | {r['p99_ms']} | {r['server_cpu_s_per_1000']} | "
                f"{r['generator_cpu_share']} |"
            )
        if results.get("edge_server_rows"):
            lines += [
                "",
                "The hub on each ASGI server, same clients and rate:",
                "",
                "| server | workers | offered/s | delivered/s | p50 ms | p99 ms | server CPU s / 1,000 |",
                "|---|---|---|---|---|---|---|",
            ]
            for r in results["edge_server_rows"]:
                lines.append(
                    f"| {r['server']} | {1 if r['server'] == 'daphne' else r['workers']} | {r['expected_per_s']:,} | "
                    f"{r['deliveries_per_s']:,} | {r['p50_ms']} | {r['p99_ms']} | {r['server_cpu_s_per_1000']} |"
                )
        plot_edge(results["edge_rows"], ROOT / "docs" / "img" / "edge.png")
        lines += ["", "![Edge throughput and latency](img/edge.png)"]
    lines += channels.markdown_lines(results)
    lines += game.markdown_lines(results)
    # The current profile of each stage; the history of runs stays in bench/results/history.md.
    profiles = ROOT / "bench" / "PROFILES.md"
    if profiles.exists():
        lines += ["", profiles.read_text().strip()]
    path = ROOT / "docs" / "performance.md"
    path.write_text("\n".join(lines) + "\n")
    return path


# --- 4. end to end + 5. footprint ----------------------------------------------------------


def service_rss_mib() -> dict[str, float]:
    """Resident memory of the shared services, found by their process names."""
    import psutil

    totals: dict[str, float] = {"kafka": 0.0, "redis": 0.0, "postgres": 0.0}
    for proc in psutil.process_iter(["name", "cmdline", "memory_info"]):
        cmd = " ".join(proc.info["cmdline"] or [])
        rss = proc.info["memory_info"].rss if proc.info["memory_info"] else 0
        if "kafka.Kafka" in cmd:
            totals["kafka"] += rss
        elif (proc.info["name"] or "").startswith("redis-server"):
            totals["redis"] += rss
        elif (proc.info["name"] or "") == "postgres":
            totals["postgres"] += rss
    return {k: round(v / 2**20) for k, v in totals.items()}


def warm_up_prices(
    producer: Any,
    client: Any,
    *,
    rate: float,
    seconds: float,
    settled: Callable[[], bool] | None = None,
    most_seconds: float = 0,
    first: int = 5001,
    count: int = 60,
) -> float:
    """Feed the reducers ``rate`` prices a second for ``seconds`` before measuring, on markets of
    their own (from ``first`` on), and wait until the last are applied: a reducer process that
    has just started spends a core on its JVM's compilers for its first minute and a half and
    a third of one for about a minute after, which a running stack does not.

    With ``settled`` (asked after every ``WARMUP_WINDOW_S`` of feed, about that window), the feed
    goes on after ``seconds`` until the last answer was yes, for at most ``most_seconds`` in all.
    Returns the seconds of prices fed."""
    markets_define(producer, client, count, first=first)
    total = max(count, int(rate * seconds))
    window, most = max(1, int(rate * WARMUP_WINDOW_S)), int(rate * most_seconds)
    quiet = settled is None
    started = time.perf_counter()
    n = 0
    while n < total or not (quiet or n >= most):
        market, seq = first + n % count, 1 + n // count
        now = int(time.time() * 1000)
        price = Decimal(150 + n % 300) / 100
        update = PriceUpdate(
            market, seq, "open", (SelectionPrice(1, price), SelectionPrice(2, Decimal("1.90"))), now, now
        )
        producer.produce(topics.prices(), key=update.key(), value=update.encode())
        producer.poll(0)
        n += 1
        if settled is not None and n % window == 0:
            quiet = settled()
        ahead = started + n / rate - time.perf_counter()
        if ahead > 0:
            time.sleep(ahead)
    producer.flush(30)
    last = {first + i % count: 1 + i // count for i in range(n - count, n)}

    def warm() -> bool:
        pipe = client.pipeline(transaction=False)
        for m in last:
            pipe.hget(keys.market_state(m), "seq")
        return all(s is not None and int(s) >= last[m] for m, s in zip(last, pipe.execute(), strict=True))

    wait_until(warm, timeout=180, what="the reducers' warm-up prices")
    return n / rate


def e2e_edge_args(*, clients: int, rate: float, duration: float, warmup: float) -> Any:
    """The end-to-end load: prices produced to Kafka at ``rate``, ``clients`` websockets watching
    20 of 1,000 markets each with batching on, latency from each update's source event."""
    return edge.parse(
        [
            "--source",
            "kafka",
            "--generator",
            "python",
            *("--clients", str(clients), "--markets", "20", "--universe", "1000", "--rate", str(rate)),
            *("--workers", "2", "--duration", str(duration), "--warmup", str(warmup), "--batch"),
        ]
    )


# The paths the end-to-end stage measures: the floor of the pipe (one plain consumer instead of
# the reducers) and the reducers in each trigger mode.
E2E_FLOOR = "floor"
E2E_MODES = ("microbatch", "realtime")
# Rounds of the end-to-end stage in a full run: each round measures one window of every path, in
# the same order (``E2E_PATHS``), while the others are paused. On this shared machine a path's p99
# moved by a factor of two between windows a minute apart (the floor: 93-191 ms over six warm
# windows in a row), so the figures are the medians of the windows, every window's are kept, and
# the real-time ratio is taken between the medians of windows measured turn about with the floor's.
E2E_ROUNDS = 3
E2E_PATHS = (E2E_FLOOR, *E2E_MODES)


def e2e_order(modes: Iterable[str]) -> list[str]:
    """The paths of every round, in the order measured: the floor, then the modes asked for. The
    order stays the same from round to round, so each path is paused for the same two windows
    between its own (a minute and a half at most; a JVM frozen far longer than Spark's network
    timeout of 120 s may find its heartbeats overdue)."""
    return [path for path in E2E_PATHS if path == E2E_FLOOR or path in modes]


@contextlib.contextmanager
def floor_running() -> Iterator[Reducers]:
    """The floor of the pipe: one plain Kafka consumer running the same reducer into the same
    Redis (bench/plain_consumer.py, polling every 5 ms) in a fresh namespace, markets 1 to 1000 in
    its markets table. Stopped on the way out."""
    with namespace() as ns:
        client = redis_client(settings.REDIS_URL)
        markets_table_write(client, 1000)
        env = {**reducer_env(ns, "microbatch"), "PLAIN_CONSUMER_POLL_S": "0.005"}
        process = Process(
            "plain_consumer",
            python("-m", "bench.plain_consumer"),
            env={**os.environ, **env},
            log=ROOT / "var" / "log" / "bench-floor.log",
        ).start()
        try:
            wait_until(lambda: client.get(keys.heartbeat("plain")), timeout=60, what="the plain consumer to start")
            yield Reducers(ns, env, process, client, producer_create())
        finally:
            process.stop()


def warm_up_e2e(running: Reducers, *, rate: float) -> dict[str, Any]:
    """Feed the reducers the end-to-end rate before they are measured: for three minutes and on
    until their JIT compilers have settled (quick: a few seconds; E2E_WARMUP_S says why), so the
    latency is a running stack's, not a fresh JVM's. At 1,000 prices a second the reducers' JVM
    still compiled about 100 methods a second after 90 s and took 1.0 core, against 20-40 a
    second and 0.7 of a core from about 170 s on (jstat -compiler every 20 s, micro-batch):
    cores the edge and its clients need. Returns the seconds fed and the compilers' cores over
    each window of the feed."""
    compilers = CompilerLoad(running.process.pids)
    readings: list[float] = []

    def settled() -> bool:
        readings.append(round(compilers.cores(), 3))
        return readings[-1] < E2E_JIT_SETTLED_CORES

    full = rate >= 1000
    with in_namespace(running.namespace):
        fed_s = warm_up_prices(
            running.producer,
            running.client,
            rate=rate,
            seconds=E2E_WARMUP_S if full else 3,
            settled=settled if full else None,
            most_seconds=E2E_WARMUP_MOST_S,
        )
    return {"seconds": round(fed_s), "compiler_cores": readings}


def e2e_window(path: str, index: int, result: dict[str, Any]) -> dict[str, Any]:
    """What the results keep of one window of the end-to-end stage."""
    return {
        "round": index + 1,
        "path": path,
        "p50_ms": result["p50_ms"],
        "p99_ms": result["p99_ms"],
        "max_ms": result["max_ms"],
        "deliveries_per_s": result["deliveries_per_s"],
        "stages": {k: v for k, v in result.items() if k.endswith("_p50_ms") and "_to_" in k},
        "server_rss_mib": result.get("server_rss_mib"),
    }


def e2e_figures(path: str, windows: list[dict[str, Any]]) -> dict[str, Any]:
    """A path's figures from its windows: p50, p99 and deliveries the medians of its windows',
    the max their max, the stages' p50s those of the window of the median p99."""
    mine = [w for w in windows if w["path"] == path]
    if not mine:
        return {}
    middle = median_run(mine, "p99_ms")
    return {
        f"e2e_{path}_p50_ms": round(median([w["p50_ms"] for w in mine]), 1),
        f"e2e_{path}_p99_ms": round(median([w["p99_ms"] for w in mine]), 1),
        f"e2e_{path}_max_ms": max(w["max_ms"] for w in mine),
        f"e2e_{path}_deliveries_per_s": round(median([w["deliveries_per_s"] for w in mine])),
        f"e2e_{path}_stages": middle["stages"],
    }


def e2e_ratios(windows: list[dict[str, Any]]) -> dict[str, Any]:
    """Real time's p99 against the floor's: between their medians, and round by round."""
    p99 = {(w["path"], w["round"]): w["p99_ms"] for w in windows}
    rounds = sorted({w["round"] for w in windows})
    by_round = [
        round(p99[("realtime", r)] / p99[(E2E_FLOOR, r)], 2)
        for r in rounds
        if p99.get(("realtime", r)) and p99.get((E2E_FLOOR, r))
    ]
    floor = [w["p99_ms"] for w in windows if w["path"] == E2E_FLOOR]
    realtime = [w["p99_ms"] for w in windows if w["path"] == "realtime"]
    ratio = round(median(realtime) / median(floor), 2) if floor and realtime and median(floor) else None
    return {"e2e_realtime_p99_vs_floor": ratio, "e2e_realtime_p99_vs_floor_by_round": by_round}


def bench_e2e(
    *,
    modes: Iterable[str] = E2E_MODES,
    clients: int,
    rate: float,
    duration: float,
    warmup: float = 8,
    rounds: int = E2E_ROUNDS,
    suspensions: int = 0,
    running: dict[str, Reducers] | None = None,
) -> dict[str, Any]:
    """Source event → websocket frame through Kafka, the reducers, Redis and the edge, for each
    trigger mode in ``modes`` and for the floor of the pipe, ``rounds`` windows each, turn about
    (``e2e_order``). The paths all run from the start, each in a namespace of its own, and all but
    the one measured are paused (``Process.pause``): measured turn about, the paths meet the same
    machine, and none shares the cores with another's idle polling. ``running``: reducers already
    started with markets 1 to 1000 defined (--quick); the others are started here.

    Real-time batches are as long as the product's (``SPARK_REALTIME_BATCH``, unless the
    environment sets it), not the reducers stage's 30 s: the end of a batch holds the prices read
    meanwhile (price topic → applied up to about 400 ms at each 30 s boundary, against at most
    about 130 ms in the seconds between), which a running stack does once a batch.

    A trader's suspensions are timed last, through the micro-batch reducers, on markets of
    their own (1001 on), with the other paths paused."""
    order = e2e_order(modes)
    out: dict[str, Any] = {}
    with contextlib.ExitStack() as stack:
        paths: dict[str, Reducers] = {}
        for mode in order[1:]:
            reducers = (running or {}).get(mode) or stack.enter_context(
                reducers_running(
                    mode, log_name=f"bench-e2e-{mode}.log", realtime_batch=os.environ.get("SPARK_REALTIME_BATCH")
                )
            )
            reducers.process.resume()
            log(f"end to end ({mode}): warming up")
            warm = warm_up_e2e(reducers, rate=rate)
            out[f"e2e_{mode}_warmup_s"] = warm["seconds"]
            out[f"e2e_{mode}_warmup_compiler_cores"] = warm["compiler_cores"]
            paths[mode] = reducers
        paths[E2E_FLOOR] = stack.enter_context(floor_running())
        # Paused once all are warm, not each after its own warm-up: a JVM frozen through another's
        # (three to nine minutes) would be past Spark's network timeout.
        for started in paths.values():
            started.process.pause()
        windows: list[dict[str, Any]] = []
        for index in range(rounds):
            for path in order:
                log(f"end to end, round {index + 1} of {rounds}: {path}")
                measured = paths[path]
                measured.process.resume()
                try:
                    with in_namespace(measured.namespace):
                        result = edge.run(e2e_edge_args(clients=clients, rate=rate, duration=duration, warmup=warmup))
                finally:
                    measured.process.pause()
                if not result["deliveries_per_s"]:
                    raise RuntimeError(f"end to end, round {index + 1}, {path}: no price reached a client")
                windows.append(e2e_window(path, index, result))
        for path in order:
            out.update(e2e_figures(path, windows))
        if "realtime" in order:
            out.update(e2e_ratios(windows))
        out["e2e_windows"] = windows
        services = service_rss_mib()
        for mode in order[1:]:
            last = [w for w in windows if w["path"] == mode][-1]
            footprint = {"reducers": round(paths[mode].process.rss_mib()), "web": last["server_rss_mib"], **services}
            out[f"footprint_{mode}_mib"] = footprint
            out[f"stack_rss_gib_{mode}"] = round(sum(footprint.values()) / 1024, 2)
        if suspensions and "microbatch" in paths:
            reducers = paths["microbatch"]
            reducers.process.resume()
            with in_namespace(reducers.namespace):
                out.update(time_suspensions(reducers.namespace, count=suspensions, feed_rate=50, first=1001))
        # Reducers started by the caller are theirs to stop: they go back as they came, running.
        for reducers in (running or {}).values():
            reducers.process.resume()
    return out


def e2e_rounds_line(results: dict[str, Any]) -> list[str]:
    """The end-to-end stage's windows, in the order measured."""
    windows = results.get("e2e_windows") or []
    if not windows:
        return []
    return [
        f"- End-to-end stage, {max(w['round'] for w in windows)} rounds (p50 / p99 ms of each window in the "
        "order measured; each figure in the table is its path's median, and the real-time ratio is that of "
        "the medians): " + ", ".join(f"{w['path']} {w['p50_ms']:g} / {w['p99_ms']:g}" for w in windows)
    ]


def bench_up() -> dict[str, Any]:
    """Seconds from `make up` to a healthy /healthz, when the stack's processes are not running
    yet (they are stopped again afterwards); the services the benchmark started stay up."""
    import subprocess

    status = subprocess.run([str(ROOT / "infra" / "bin" / "app.sh"), "status"], capture_output=True, text=True)
    if ": running" in status.stdout:
        log("the stack's processes already run: `make up` not timed")
        return {"up_to_healthy_s": None, "up_note": "not measured: the stack was already running"}
    started = time.perf_counter()
    try:
        subprocess.run(["make", "up"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        return {"up_to_healthy_s": round(time.perf_counter() - started, 1)}
    finally:
        subprocess.run([str(ROOT / "infra" / "bin" / "app.sh"), "stop"], cwd=ROOT, stdout=subprocess.DEVNULL)


def write(results: dict[str, Any], *, quick: bool) -> Path:
    folder = RESULTS / "quick" if quick else RESULTS
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{results['date'].replace(':', '-')}.json"
    body = json.dumps(results, indent=2, default=str)
    path.write_text(body)
    (folder / "latest.json").write_text(body)
    return path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small and fast: a smoke test of every stage")
    parser.add_argument(
        "--merge", action="store_true", help="keep the last full run's figures for the stages not run (with --only)"
    )
    parser.add_argument(
        "--only",
        nargs="*",
        default=None,
        help="stages to run (feed reducers e2e edge views suspend bets channels game up)",
    )
    args = parser.parse_args(argv)
    quick = args.quick
    stages = set(args.only or ["feed", "reducers", "edge", "views", "e2e", "suspend", "bets", "channels", "game", "up"])
    results: dict[str, Any] = {
        "machine": machine(),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "quick": quick,
    }
    started = mark = time.perf_counter()
    stage_seconds: dict[str, float] = {}
    results["stage_seconds"] = stage_seconds
    probes: dict[str, float] = {"start": cpu_probe_ms()}
    results["cpu_probe_ms"] = probes

    def lap(stage: str) -> None:
        nonlocal mark
        now = time.perf_counter()
        stage_seconds[stage] = round(now - mark, 1)
        probes[stage] = cpu_probe_ms()
        mark = time.perf_counter()

    if "feed" in stages:
        log("feed → Kafka")
        results.update(bench_feed(records=20_000 if quick else 300_000, runs=1 if quick else 3))
        lap("feed")
    # --quick runs the reducer and end-to-end stages of a mode in one reducer process: starting
    # Spark is most of a quick run's time. A full run starts one per stage (their settings differ).
    shared = quick and {"reducers", "e2e"} <= stages
    e2e_args: dict[str, Any] = {
        "clients": 50 if quick else 1000,
        "rate": 200 if quick else 1000,
        "duration": 4 if quick else 15,
        "warmup": 4 if quick else 8,
        "rounds": 1 if quick else E2E_ROUNDS,
        "suspensions": (4 if quick else 20) if "suspend" in stages else 0,
    }
    with contextlib.ExitStack() as shared_reducers:
        running: dict[str, Reducers] = {}
        for mode in E2E_MODES:
            records = 3_000 if quick else REDUCER_RECORDS[mode]
            if shared:
                # Short real-time batches: a quick backlog's last records wait for the end of one.
                running[mode] = shared_reducers.enter_context(
                    reducers_running(mode, log_name=f"bench-quick-{mode}.log", realtime_batch="5 seconds")
                )
                log(f"reducers ({mode})")
                results.update(bench_reducers(mode=mode, records=records, running=running[mode]))
                lap(f"reducers_{mode}")
                # Paused while the next stages run; the end-to-end stage lets it go on.
                running[mode].process.pause()
                if mode == "microbatch":
                    reducer_baselines(results, records=records)
                    lap("reducers_baselines")
            elif "reducers" in stages and mode == "microbatch":
                reducer_rounds(results, records=records)
                lap("reducers_microbatch_rounds")
            elif "reducers" in stages:
                log(f"reducers ({mode})")
                results.update(bench_reducers(mode=mode, records=records))
                lap(f"reducers_{mode}")
        if "e2e" in stages:
            log("end to end: the floor (one plain consumer) and the reducers in each mode, turn about")
            results.update(bench_e2e(**e2e_args, running=running))
            lap("e2e")
            results["stack_rss_gib"] = max(
                results.get("stack_rss_gib_microbatch", 0), results.get("stack_rss_gib_realtime", 0)
            )
    if "edge" in stages:
        log("edge: the hub, plain Channels and a bare server, driven by k6")
        results.update(
            bench_edge(
                clients=50 if quick else 1000,
                rates=[200] if quick else [50, 100, 250, 500, 750, 1000, 1500, 2000, 3000],
                duration=3 if quick else 10,
                warmup=2 if quick else 4,
                workers=2,
                server_choices=["uvicorn"] if quick else sorted(edge.SERVERS),
                server_rate=200 if quick else 750,
            )
        )
        lap("edge")
    if "views" in stages:
        from bench.views import bench_views

        log("time to first odds: view snapshots through the cache")
        results.update(bench_views(burst=200 if quick else 1000, loads=5 if quick else 20))
        lap("views")
    if "suspend" in stages and "e2e" not in stages:
        from bench.suspend import bench_suspend

        log("trader suspension → websocket")
        results.update(bench_suspend(count=6 if quick else 20))
        lap("suspend")
    if "bets" in stages:
        from bench.bets import bench_bets

        log("bets under stream load")
        results.update(
            bench_bets(
                rate=20,
                duration=3,
                warmup=1,
                punters=30,
                stream_rate=200,
                stream_clients=20,
                ceiling_s=2,
                search=(20, 40),
                search_duration=3,
                search_warmup=1,
            )
            if quick
            else bench_bets()
        )
        lap("bets")
    if "channels" in stages:
        log("channels: the fan-out at 1k, 5k and 10k channels, the query stage, and channels held by k6 clients")
        results.update(channels.bench_channels(quick=quick))
        lap("channels")
    if "game" in stages:
        log("game: punters answer the open questions of live matches, a goal in each settles them all")
        results.update(game.bench_game(quick=quick))
        game_ratio(results)
        lap("game")
    if "up" in stages and not quick:
        log("make up → healthy")
        results.update(bench_up())
        lap("up")
    elif quick:
        results.update({"up_to_healthy_s": None, "up_note": "not measured in --quick"})
    results["stages"] = sorted(stages)
    results["stage_dates"] = dict.fromkeys(sorted(stages), results["date"])
    if args.merge and not quick and (RESULTS / "latest.json").exists():
        earlier = json.loads((RESULTS / "latest.json").read_text())
        dates = earlier.get("stage_dates") or dict.fromkeys(earlier.get("stages", []), earlier["date"])
        results = {**earlier, **results, "stages": sorted(set(earlier.get("stages", [])) | stages)}
        results["stage_dates"] = {**dates, **results["stage_dates"]}
        results.pop("merged_from", None)
    results["bench_seconds"] = round(time.perf_counter() - started)
    path = write(results, quick=quick)
    log(f"results: {path}")
    if not quick:
        log(f"table: {write_markdown(results)}")
    print(json.dumps({k: v for k, v in results.items() if not isinstance(v, (list, dict))}, indent=2))


if __name__ == "__main__":
    main()
