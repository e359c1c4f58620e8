"""Bet placement under load: ``POST /api/bets`` latency at a steady bet rate while the price stream runs.

The real app is served by uvicorn (two workers) in a fresh namespace. ``punters`` benchmark
punters (wallets funded through the ledger, logged in by server-side sessions, so no password
hashing in the loop) place single bets of 1.00 on "Benchmark" markets with the ``any`` price
policy. Two client processes send the bets open-loop: bet ``i`` leaves at ``start + i / rate``
whatever happened to the bets before it, on keep-alive connections, and its latency runs from
the send to the last byte of the response. Bets in the first ``warmup`` seconds are not counted.

Meanwhile the stream runs at full load through the same server: ``bench.edge``'s websocket
clients (``stream_clients``, each watching 20 of ``universe`` markets, one frame per tick) and a publisher
applying ``stream_rate`` price updates a second through the reducers' Redis sink. The benchmark
markets are part of that universe: their prices move with their own selections, which the
``any`` policy accepts.

Everything the run creates in PostgreSQL (punters, wallets, ledger, bets, sessions, outbox rows,
events) is deleted at the end, and left-overs of an interrupted run at the start; one run at a
time holds an advisory lock. Run:

    .venv/bin/python -m bench.bets --rate 200 --duration 20
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import glob
import http.client
import json
import math
import multiprocessing as mp
import os
import queue
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from bench.common import (
    ROOT,
    database_url,
    django_ready,
    migrate_if_needed,
    percentile,
    session_create,
    sessions_remove,
)
from bench.edge import PRODUCT_APP, client_process, paced_updates, server_command
from bench.harness import free_port, wait_until
from reducers.market_kinds import MATCH_RESULT
from reducers.rules import MAX_RETURN, MAX_STAKE
from reducers.trading import REFERRAL_WINDOW_S
from store.clients import redis_client

PUNTER_PREFIX = "bench-punter-"
COMPETITION = "Benchmark Bets"
EVENTS = 10
PRICES = ("2.10", "3.40", "3.50")
FUNDS = Decimal("1000.00")
STAKE = "1.00"
P99_TARGET_MS = 50.0
CLIENT_PROCS = 2
WORKERS = 2
# Fixed: the id of the advisory lock that lets one bets benchmark run at a time per database.
LOCK_ID = 0xBE7_5BE7
# Leave room under the per-punter limit: bets of one punter are evenly spaced, but fixed windows
# can still catch one more than the average.
LIMIT_SHARE = 0.75
# Bets in flight per client process before sends wait, and how long after its last send a
# client waits for the answers still due.
MAX_THREADS = 256
DRAIN_S = 30.0
# pgbench connections for the database's ceiling: enough that commits are grouped.
CEILING_CLIENTS = 16
# Price updates a second of the benchmark markets alone during the cost runs (bench_bet_costs).
QUIET_STREAM_RATE = 20.0
# Rates tried for bets_per_s, in order, until one misses the p99 target or loses a bet.
SEARCH_RATES = (25.0, 50.0, 100.0, 150.0, 200.0, 300.0, 400.0, 600.0, 800.0, 1000.0, 1200.0)

TARGETS = [
    ("bets_db_ceiling_per_s", "Bet placement statement alone (pgbench): the database's ceiling", "bets/s", None),
    ("bets_db_minimal_per_s", "Bare debit-and-insert statement (pgbench), for comparison", "bets/s", None),
    ("bets_per_s", "Bets served with p99 <= 50 ms under stream load", "bets/s", None),
    ("bets_ratio", "Bets served ÷ the database's ceiling, same run", "ratio", ">= 0.25"),
    ("bet_p50_ms", "Bet placement p50 at 200 bets/s under stream load", "ms", None),
    ("bet_p99_ms", "Bet placement p99 at 200 bets/s under stream load", "ms", "<= 50"),
    ("bet_web_cpu_ms", "Web-process CPU per bet (200 bets/s, no stream)", "ms", None),
    ("bet_bare_web_cpu_ms", "Web-process CPU per bet of the bare twin: the one database round trip", "ms", None),
    ("bet_web_cpu_vs_bare", "A bet's web CPU ÷ the bare twin's, same run", "ratio", "<= 3"),
    ("bet_db_cpu_ms", "PostgreSQL CPU per bet through the web tier", "ms", None),
    ("bet_pgbench_cpu_ms", "PostgreSQL CPU per placement statement run by pgbench", "ms", None),
    ("bet_db_cpu_vs_pgbench", "A bet's database CPU ÷ pgbench's, same run", "ratio", None),
]


def log(message: str) -> None:
    print(f"[bench.bets {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Fixture:
    """What a run bets with: one (session, CSRF token) per punter, the selections with their
    starting prices, and each benchmark market's selection ids (for the stream)."""

    credentials: list[tuple[str, str]]
    legs: list[tuple[int, str]]
    books: dict[int, list[int]]
    session_keys: list[str]
    user_ids: list[int]


# --- the clients ---------------------------------------------------------------------------


def _bet_body(*, run_id: str, index: int, leg: tuple[int, str]) -> bytes:
    return json.dumps(
        {
            "v": 1,
            "idempotency_key": f"{run_id}-{index}",
            "stake": STAKE,
            "price_policy": "any",
            "selections": [{"selection_id": leg[0], "price": leg[1]}],
        }
    ).encode()


def _error_code(payload: bytes) -> str:
    try:
        return str(json.loads(payload)["error"]["code"])
    except (ValueError, KeyError, TypeError):
        return "unreadable"


def bet_client_process(
    *,
    port: int,
    cookies: tuple[str, str, str],
    credentials: list[tuple[str, str]],
    legs: list[tuple[int, str]],
    run_id: str,
    start_at: float,
    rate: float,
    total: int,
    first: int,
    step: int,
    max_threads: int,
    drain_s: float,
    out: Any,
) -> None:
    """Send bets ``first``, ``first + step``, … below ``total``, bet ``i`` at ``start_at + i / rate``
    (epoch seconds), each on a keep-alive connection of a thread that is idle then.

    The pool grows whenever every thread is waiting for a response (up to ``max_threads``), so a
    slow server delays no send until that many bets are in flight. Bets still unanswered
    ``drain_s`` after the last send are left out. Puts ``{"bets": [(i, send lag ms, latency ms,
    status, error code)], "cpu_s", "threads"}`` on ``out``; status 0 is no response (the code
    names the exception).
    """
    session_cookie, csrf_cookie, csrf_header = cookies
    jobs: queue.Queue[tuple[int, float] | None] = queue.Queue()
    results: list[tuple[int, float, float, int, str]] = []
    idle = threading.Semaphore(0)

    def work() -> None:
        connection: http.client.HTTPConnection | None = None
        idle.release()
        while (job := jobs.get()) is not None:
            index, due = job
            session, token = credentials[index % len(credentials)]
            # Each punter moves through the selections, not always the same one.
            leg = legs[(index // len(credentials) + index) % len(legs)]
            body = _bet_body(run_id=run_id, index=index, leg=leg)
            headers = {
                "Content-Type": "application/json",
                "Cookie": f"{session_cookie}={session}; {csrf_cookie}={token}",
                csrf_header: token,
            }
            sent = time.perf_counter()
            try:
                if connection is None:
                    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                connection.request("POST", "/api/bets", body=body, headers=headers)
                response = connection.getresponse()
                payload = response.read()
                status, code = response.status, "" if response.status < 300 else _error_code(payload)
                if response.will_close:
                    connection.close()
                    connection = None
            except (OSError, http.client.HTTPException) as exc:
                if connection is not None:
                    connection.close()
                connection = None
                status, code = 0, type(exc).__name__
            done = time.perf_counter()
            results.append((index, (sent - due) * 1000, (done - sent) * 1000, status, code))
            idle.release()
        if connection is not None:
            connection.close()

    pool: list[threading.Thread] = []

    def hand_over(job: tuple[int, float]) -> None:
        """Give the job to an idle thread: a new one while the pool may grow, else the next free."""
        if not idle.acquire(blocking=False):
            if len(pool) < max_threads:
                pool.append(threading.Thread(target=work, daemon=True))
                pool[-1].start()
            idle.acquire()
        jobs.put(job)

    # The schedule in this process's monotonic clock, from the shared wall-clock start.
    origin = time.perf_counter() + (start_at - time.time())
    before = resource.getrusage(resource.RUSAGE_SELF)
    for index in range(first, total, step):
        due = origin + index / rate
        delay = due - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        hand_over((index, due))
    for _ in pool:
        jobs.put(None)
    deadline = time.monotonic() + drain_s
    for thread in pool:
        thread.join(max(0.0, deadline - time.monotonic()))
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    out.put({"bets": list(results), "cpu_s": cpu_s, "threads": len(pool)})


def stream_process(
    namespace: str, slots: list[int], books: dict[int, list[int]], rate: float, seconds: float, out: Any
) -> None:
    """``bench.edge``'s paced updates over ``slots`` (market ids), applied through the reducers'
    Redis sink; an update that falls on a benchmark market carries that market's selections."""
    os.environ["SPORTSBOOK_NAMESPACE"] = namespace

    from reducers.prices import conflate
    from reducers.schemas import SelectionPrice
    from store import keys
    from store.markets import MarketStore

    client = redis_client(os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
    sink = MarketStore(client)
    # Sequences go on from the newest any of the markets holds (the benchmark markets' first
    # states, an earlier run's in the same namespace): an update that is not newer would be
    # dropped by the sink, and its market would go stale under the bets.
    with client.pipeline(transaction=False) as pipe:
        for market_id in slots:
            pipe.hget(keys.market_state(market_id), "seq")
        held = [int(seq) for seq in pipe.execute() if seq is not None]
    published = 0
    started = time.monotonic()
    for batch in paced_updates(len(slots), rate, seconds, first_seq=max(held, default=0) + 1):
        placed = []
        for update in batch:
            market_id = slots[update.market_id - 1]
            selections = books.get(market_id)
            if selections is None:
                placed.append(dataclasses.replace(update, market_id=market_id))
                continue
            base = update.selections[0].price
            book = tuple(SelectionPrice(s, base + Decimal("0.25") * n) for n, s in enumerate(selections))
            placed.append(dataclasses.replace(update, market_id=market_id, selections=book))
        sink.apply(conflate([(update, update.produce_ts) for update in placed]))
        published += len(placed)
    out.put({"published": published, "published_s": time.monotonic() - started})


# --- the fixture ---------------------------------------------------------------------------


@contextlib.contextmanager
def _exclusive() -> Iterator[None]:
    """Hold the advisory lock of the bets benchmark on its own connection (closing it releases
    the lock), so that the left-overs removed at the start are never another run's live rows."""
    import psycopg
    from django.db import connection

    db = connection.settings_dict
    with psycopg.connect(
        dbname=db["NAME"], user=db["USER"], password=db["PASSWORD"], host=db["HOST"], port=db["PORT"], autocommit=True
    ) as lock:
        row = lock.execute("SELECT pg_try_advisory_lock(%s)", [LOCK_ID]).fetchone()
        if not (row and row[0]):
            log("waiting for another bets benchmark to finish")
            lock.execute("SET lock_timeout = '600s'")
            lock.execute("SELECT pg_advisory_lock(%s)", [LOCK_ID])
        yield


def fixture_remove(*, namespace: str | None = None) -> None:
    """Delete the benchmark punters with their wallets, ledger and bets, the benchmark events,
    and the outbox rows of the bets (this run's namespace, or any bets benchmark's left-overs)."""
    from django.contrib.auth.models import User
    from django.db.models import ProtectedError

    from odds.betting.models import Bet, LedgerEntry, Wallet
    from odds.catalogue.models import Event, Market, Selection
    from odds.models import OutboxMessage

    users = User.objects.filter(username__startswith=PUNTER_PREFIX)
    LedgerEntry.objects.filter(wallet__user__in=users).delete()
    Bet.objects.filter(user__in=users).delete()
    Wallet.objects.filter(user__in=users).delete()
    users.delete()
    if namespace is not None:
        OutboxMessage.objects.filter(topic__startswith=f"{namespace}.").delete()
    else:
        # bench.common.namespace() names are bench + 6 hex digits; only this benchmark writes bets there.
        OutboxMessage.objects.filter(topic__regex=r"^bench[0-9a-f]{6}\.bets\.").delete()
    for event in Event.objects.filter(competition__name=COMPETITION):
        try:
            Selection.objects.filter(market__event=event).delete()
            Market.objects.filter(event=event).delete()
            event.delete()
        except ProtectedError:
            log(f"kept {event}: someone else's bet is on it")


def fixture_create(*, punters: int) -> Fixture:
    """Benchmark events (one 1X2 market each), funded punters and their sessions."""
    from django.contrib.auth.hashers import make_password
    from django.contrib.auth.models import User
    from django.middleware.csrf import CSRF_ALLOWED_CHARS, CSRF_SECRET_LENGTH
    from django.utils import timezone
    from django.utils.crypto import get_random_string

    from odds.betting.services.wallet import wallet_deposit
    from odds.catalogue.models import Competition, Event, Market, Selection, Sport

    sport, _ = Sport.objects.get_or_create(slug="football", defaults={"name": "Football"})
    competition, _ = Competition.objects.get_or_create(sport=sport, name=COMPETITION)
    # Far from kick-off, so that no lifecycle job suspends the markets during the run.
    starts_at = timezone.now() + timedelta(days=30)
    legs: list[tuple[int, str]] = []
    books: dict[int, list[int]] = {}
    for n in range(1, EVENTS + 1):
        event = Event.objects.create(
            competition=competition, home=f"Benchmark Home {n}", away=f"Benchmark Away {n}", starts_at=starts_at
        )
        market = Market.objects.create(event=event, kind=MATCH_RESULT.key, name="Match result")
        selections = Selection.objects.bulk_create(
            Selection(market=market, name=name, price=Decimal(price), display_order=i)
            for i, (name, price) in enumerate(zip(("Home", "Draw", "Away"), PRICES, strict=True))
        )
        books[market.id] = [s.id for s in selections]
        legs += [(s.id, str(s.price)) for s in selections]

    # An unusable password costs no hashing; the punters log in by session only.
    users = User.objects.bulk_create(
        User(username=f"{PUNTER_PREFIX}{n:05d}", password=make_password(None)) for n in range(punters)
    )
    credentials, session_keys = [], []
    for user in users:
        wallet_deposit(user=user, amount=FUNDS, reference=f"bench-bets-{user.username}")
        session_key = session_create(user=user)  # a session left by an interrupted run lapses within the hour
        session_keys.append(session_key)
        credentials.append((session_key, get_random_string(CSRF_SECRET_LENGTH, CSRF_ALLOWED_CHARS)))
    return Fixture(
        credentials=credentials, legs=legs, books=books, session_keys=session_keys, user_ids=[u.pk for u in users]
    )


def markets_publish(books: dict[int, list[int]]) -> None:
    """Put the benchmark markets in the markets table and their first prices in the live state,
    as the markets query and the price reducer would."""
    from django.conf import settings

    from odds.catalogue.models import Market
    from odds.catalogue.services.markets import market_definition
    from reducers import topics
    from reducers.prices import conflate
    from reducers.schemas import PriceUpdate, SelectionPrice
    from spark.jobs.markets import MarketTableProcessor
    from spark.sinks.dead_letter import dead_letter_sink
    from store.markets import MarketStore

    client = redis_client(settings.REDIS_URL)
    markets = Market.objects.select_related("event__competition__sport").filter(id__in=list(books))
    definitions = [market_definition(market=market) for market in markets]
    rows = [{"key": d.key(), "value": d.encode(), "partition": 0, "offset": n} for n, d in enumerate(definitions)]
    sink = dead_letter_sink(bootstrap=settings.KAFKA_BOOTSTRAP_SERVERS, source_topic=topics.markets())
    MarketTableProcessor(redis_client=client, dead_letters=sink).apply_rows(rows)
    now = int(time.time() * 1000)
    updates = [
        PriceUpdate(
            market_id,
            1,
            "open",
            tuple(SelectionPrice(s, Decimal(p)) for s, p in zip(selections, PRICES, strict=True)),
            now,
            now,
        )
        for market_id, selections in books.items()
    ]
    MarketStore(client).apply(conflate([(update, now) for update in updates]))


def books_touch(books: dict[int, list[int]]) -> None:
    """Give every benchmark market a new state now (its next sequence, its first prices), so that
    none has gone stale (``LIVE_PRICE_MAX_AGE_S``) between runs before the stream moves it."""
    from django.conf import settings

    from reducers.prices import conflate
    from reducers.schemas import PriceUpdate, SelectionPrice
    from store import keys
    from store.markets import MarketStore

    client = redis_client(settings.REDIS_URL)
    ids = list(books)
    seqs = [int(client.hget(keys.market_state(market_id), "seq") or 0) for market_id in ids]
    now = int(time.time() * 1000)
    updates = [
        PriceUpdate(
            market_id,
            seq + 1,
            "open",
            tuple(SelectionPrice(s, Decimal(p)) for s, p in zip(books[market_id], PRICES, strict=True)),
            now,
            now,
        )
        for market_id, seq in zip(ids, seqs, strict=True)
    ]
    MarketStore(client).apply(conflate([(update, now) for update in updates]))


# --- the database's ceiling ---------------------------------------------------------------


def _pgbench() -> str:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pgbench")) or [shutil.which("pgbench") or ""]
    if not found[-1]:
        raise RuntimeError("pgbench not found: it comes with the PostgreSQL server packages")
    return found[-1]


def _span(ids: list[int], what: str) -> tuple[int, int]:
    """First and last of ``ids``, which must be every number between them (pgbench draws from a range)."""
    low, high = min(ids), max(ids)
    if high - low + 1 != len(set(ids)):
        raise RuntimeError(f"the benchmark's {what} ids are not contiguous; pgbench draws them from a range")
    return low, high


# The placement statement as the API runs it (odds/betting/services/placement.py: PLACE_SQL), for a
# random punter and selection, at any price ("any" policy), stake 1.00.
CEILING_SCRIPT = """\\set uid random({users[0]}, {users[1]})
\\set sel random({selections[0]}, {selections[1]})
SELECT sb_bet_place(:uid, gen_random_uuid()::text, 'pgbench', 'any', '{{-1,0,1}}'::integer[], 1.00,
    ('[{{"selection_id": ' || :sel || ', "price_seen": "2.00", "price": null, "unavailable": ""}}]')::jsonb,
    {max_return}, '{topic}', {max_stake}, {referral_s});
"""
# The least a placement can be: debit the wallet if it covers the stake and insert the bet, in one
# statement (no legs, ledger, outbox or checks). For the profile of what the full statement adds.
MINIMAL_SCRIPT = """\\set uid random({users[0]}, {users[1]})
WITH debited AS (
    UPDATE odds_wallet SET balance = balance - 1.00, updated_at = now()
    WHERE user_id = :uid AND balance >= 1.00 RETURNING user_id
)
INSERT INTO odds_bet (user_id, idempotency_key, request_fingerprint, kind, status, price_policy, stake, odds,
    potential_return, payout, reject_code, reject_message, placed_at)
SELECT user_id, gen_random_uuid()::text, 'pgbench', 'single', 'accepted', 'any', 1.00, 2.00, 2.00, 0, '', '', now()
FROM debited;
"""


def pgbench_rate(script: str, *, clients: int, seconds: float) -> float:
    """Transactions per second of ``script`` run by pgbench with ``clients`` connections."""
    return pgbench_run(script, clients=clients, seconds=seconds)[0]


def pgbench_run(script: str, *, clients: int, seconds: float) -> tuple[float, int]:
    """``script`` run by pgbench with ``clients`` connections: (transactions per second,
    transactions processed)."""
    from django.db import connection

    db = connection.settings_dict
    with tempfile.NamedTemporaryFile("w", suffix=".sql") as file:
        file.write(script)
        file.flush()
        done = subprocess.run(
            [
                _pgbench(),
                "--no-vacuum",
                f"--client={clients}",
                "--jobs=2",
                f"--time={max(1, round(seconds))}",
                f"--file={file.name}",
                f"--host={db['HOST'] or '127.0.0.1'}",
                f"--port={db['PORT'] or 5432}",
                f"--username={db['USER']}",
                db["NAME"],
            ],
            env={**os.environ, "PGPASSWORD": str(db["PASSWORD"] or "")},
            capture_output=True,
            text=True,
            timeout=seconds + 60,
        )
    found = re.search(r"tps = ([0-9.]+)", done.stdout)
    processed = re.search(r"number of transactions actually processed: ([0-9]+)", done.stdout)
    if done.returncode != 0 or found is None or processed is None:
        raise RuntimeError(f"pgbench failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    return float(found.group(1)), int(processed.group(1))


def bench_db_ceiling(fixture: Fixture, *, seconds: float, clients: int = CEILING_CLIENTS) -> dict[str, Any]:
    """``bets_db_ceiling_per_s``: the placement statement without the web tier (pgbench), and the
    minimal debit-and-insert statement beside it, on the same database with the same punters.
    Runs in the benchmark's namespace (its outbox rows go to the run's bets topic)."""
    from reducers import topics

    users = _span(fixture.user_ids, "punter")
    selections = _span([leg[0] for leg in fixture.legs], "selection")
    topic = topics.bets()
    with _postgres_cpu_watch() as spent_s:
        ceiling, placed = pgbench_run(
            CEILING_SCRIPT.format(
                users=users,
                selections=selections,
                topic=topic,
                max_return=MAX_RETURN,
                max_stake=MAX_STAKE,
                referral_s=REFERRAL_WINDOW_S,
            ),
            clients=clients,
            seconds=seconds,
        )
    spent = spent_s()
    minimal = pgbench_rate(MINIMAL_SCRIPT.format(users=users), clients=clients, seconds=seconds)
    return {
        "bets_db_ceiling_per_s": round(ceiling),
        "bets_db_minimal_per_s": round(minimal),
        "bets_db_clients": clients,
        # PostgreSQL's CPU per placement statement run by pgbench: the database's bare twin of
        # bet_db_cpu_ms (bench_bet_costs).
        "bet_pgbench_cpu_ms": round(spent * 1000 / placed, 3) if placed else math.nan,
    }


# --- measuring -----------------------------------------------------------------------------


CpuSample = dict[str, Any]


def _cpu_by_role(*, server: int, clients: list[int]) -> CpuSample:
    """CPU seconds so far: the whole machine (``busy``), and per process of each role — the server
    (with its workers), the run's client processes, PostgreSQL and Redis — so that a window's
    figure counts each process's own growth (``_spent``): a process that ends (a PostgreSQL
    backend, a worker a server replaced) takes its time with it and would otherwise make the sum
    of what is left smaller than at the start."""
    import psutil

    def used(proc: psutil.Process) -> float:
        try:
            times = proc.cpu_times()
            return times.user + times.system
        except psutil.Error:
            return 0.0

    def group(pid: int) -> dict[int, float]:
        try:
            root = psutil.Process(pid)
            return {p.pid: used(p) for p in [root, *root.children(recursive=True)]}
        except psutil.Error:
            return {}

    postgres: dict[int, float] = {}
    redis: dict[int, float] = {}
    for proc in psutil.process_iter(["name"]):
        name = proc.info["name"] or ""
        if name == "postgres":
            postgres[proc.pid] = used(proc)
        elif name.startswith("redis-server"):
            redis[proc.pid] = used(proc)
    machine = psutil.cpu_times()
    return {
        "busy": sum(machine) - machine.idle - getattr(machine, "iowait", 0.0),
        "server": group(server),
        "clients": {pid: cpu for client in clients for pid, cpu in group(client).items()},
        "postgres": postgres,
        "redis": redis,
    }


@contextlib.contextmanager
def _postgres_cpu_watch(interval: float = 0.1) -> Iterator[Any]:
    """PostgreSQL's CPU seconds over the block, pgbench's short-lived backends included: the
    processes are sampled every ``interval`` s and each counts from its first sample (or from
    nothing, when it started since the block began) to its last. Yields a function giving the
    total once the block has ended."""
    first = _cpu_by_role(server=os.getpid(), clients=[])
    last: dict[int, float] = dict(first["postgres"])
    stop = threading.Event()

    def watch() -> None:
        while not stop.wait(interval):
            for pid, cpu in _cpu_by_role(server=os.getpid(), clients=[])["postgres"].items():
                last[pid] = max(cpu, last.get(pid, 0.0))

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    try:
        yield lambda: sum(max(0.0, cpu - first["postgres"].get(pid, 0.0)) for pid, cpu in last.items())
    finally:
        stop.set()
        thread.join(5)
        for pid, cpu in _cpu_by_role(server=os.getpid(), clients=[])["postgres"].items():
            last[pid] = max(cpu, last.get(pid, 0.0))


def _spent(before: CpuSample, after: CpuSample, role: str) -> float:
    """CPU seconds the role's processes used between the samples: each process alive at the end,
    from its time at the start (or from nothing, when it started since)."""
    return sum(max(0.0, cpu - before[role].get(pid, 0.0)) for pid, cpu in after[role].items())


def _machine_load(before: CpuSample, after: CpuSample, seconds: float) -> dict[str, Any]:
    roles = ("server", "clients", "postgres", "redis")
    spent = {role: round(_spent(before, after, role), 1) for role in roles}
    busy = after["busy"] - before["busy"]
    cpus = os.cpu_count() or 1
    return {
        "cpus": cpus,
        "load_avg_1m": round(os.getloadavg()[0], 2),
        "busy_pct": round(100 * busy / (cpus * seconds), 1),
        # Over the measured window. "others" is whatever else ran: Kafka, other people's tests
        # and stacks; PostgreSQL and Redis include the work this run asked of them.
        "cpu_s": {**spent, "others": round(max(0.0, busy - sum(spent.values())), 1)},
    }


def _server_start(port: int, namespace: str, *, bare: Path | None = None) -> subprocess.Popen[bytes]:
    """The real application under uvicorn, or with ``bare`` (the sessions file) its bare twin
    ``bench.bare_bets``."""
    env = {
        **os.environ,
        "SPORTSBOOK_NAMESPACE": namespace,
        "DATABASE_URL": database_url(),
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)  # set by the test session; the server runs as in production
    # Debug mode records every query of a request; measure without it unless the caller asks.
    env.setdefault("DJANGO_DEBUG", "false")
    if bare is not None:
        env["BARE_BETS_SESSIONS"] = str(bare)
    logs = ROOT / "var" / "log"
    logs.mkdir(parents=True, exist_ok=True)
    app = "bench.bare_bets:application" if bare is not None else PRODUCT_APP
    return subprocess.Popen(
        server_command("uvicorn", port=port, workers=WORKERS, app=app),
        cwd=ROOT,
        env=env,
        start_new_session=True,
        stdout=(logs / "bench-bets-uvicorn.log").open("ab"),
        stderr=subprocess.STDOUT,
    )


def _server_ready(port: int, cookies: tuple[str, str, str], credentials: tuple[str, str]) -> bool:
    """The API answers a logged-in punter (``GET /api/wallet``)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        connection.request("GET", "/api/wallet", headers={"Cookie": f"{cookies[0]}={credentials[0]}"})
        return connection.getresponse().status == 200
    except (OSError, http.client.HTTPException):
        return False
    finally:
        connection.close()


def _server_stop(server: subprocess.Popen[bytes]) -> None:
    if server.poll() is None:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(10)


def _cookie_names() -> tuple[str, str, str]:
    from django.conf import settings

    header = settings.CSRF_HEADER_NAME.removeprefix("HTTP_").replace("_", "-")
    return settings.SESSION_COOKIE_NAME, settings.CSRF_COOKIE_NAME, header


# The one 5xx that is not a fault: the endpoint shedding load it cannot place within
# BET_POOL_TIMEOUT_MS (odds/api/placement.py), with Retry-After and nothing recorded.
LOAD_SHED = "503 overloaded"


def server_faults(summary: dict[str, Any]) -> dict[str, int]:
    """The answers of a run that were faults, by status and code: no response, or a 5xx other than
    the endpoint shedding load (a matter of speed on a busy machine, not of correctness)."""
    return {
        answer: count
        for answer, count in summary["bet_error_codes"].items()
        if answer != LOAD_SHED and (answer.startswith("5") or answer.startswith("0 "))
    }


def _bets_summary(
    bets: list[tuple[int, float, float, int, str]], *, rate: float, warmup: float, duration: float
) -> dict[str, Any]:
    """Latency of the accepted bets scheduled in the measured window; rates of the bets sent and
    answered within it (offsets from the start of the schedule, in ms)."""
    first, end = math.ceil(warmup * rate), math.ceil((warmup + duration) * rate)
    window = (warmup * 1000, (warmup + duration) * 1000)
    scheduled = [b for b in bets if first <= b[0] < end]
    accepted = [b for b in scheduled if b[3] == 201]
    sent_at = [b[0] / rate * 1000 + b[1] for b in bets]
    done_at = [t + b[2] for t, b in zip(sent_at, bets, strict=True)]
    return {
        "bet_p50_ms": round(percentile([b[2] for b in accepted], 0.5), 1),
        "bet_p99_ms": round(percentile([b[2] for b in accepted], 0.99), 1),
        "bet_max_ms": round(max((b[2] for b in accepted), default=float("nan")), 1),
        "bet_p99_target_ms": P99_TARGET_MS,
        # From the time the bet was due to its response: the latency above plus any wait in the
        # client (see bet_send_lag_*), what a punter would have seen.
        "bet_p99_from_schedule_ms": round(percentile([b[1] + b[2] for b in accepted], 0.99), 1),
        "bet_rate_offered": rate,
        "bet_rate_sent_per_s": round(sum(window[0] <= t < window[1] for t in sent_at) / duration, 1),
        "bet_rate_accepted_per_s": round(
            sum(window[0] <= t < window[1] for t, b in zip(done_at, bets, strict=True) if b[3] == 201) / duration, 1
        ),
        # Every request answered within the window, whatever the answer: what the server's and
        # the database's CPU over the window is divided by (bench_bet_costs).
        "bet_rate_answered_per_s": round(
            sum(window[0] <= t < window[1] for t, b in zip(done_at, bets, strict=True) if b[3]) / duration, 1
        ),
        "bets_scheduled": end - first,
        "bets_accepted": len(accepted),
        "bets_unanswered": (end - first) - len(scheduled),
        "bet_errors": dict(Counter(str(b[3]) for b in scheduled if not 200 <= b[3] < 300)),
        "bet_rejections": dict(Counter(b[4] for b in scheduled if b[4])),
        # Each answer that was not a 2xx by status and code ("503 overloaded", "0 TimeoutError").
        "bet_error_codes": dict(Counter(f"{b[3]} {b[4]}" for b in scheduled if not 200 <= b[3] < 300)),
        # How late the clients sent bets against the schedule: more than a few ms means every
        # connection was waiting for a response (or the client was starved of CPU).
        "bet_send_lag_p99_ms": round(percentile([b[1] for b in scheduled], 0.99), 1),
        "bet_send_lag_max_ms": round(max((b[1] for b in scheduled), default=float("nan")), 1),
    }


def _stream_summary(results: list[dict[str, Any]], *, stream: dict[str, Any], duration: float) -> dict[str, Any]:
    clients = [r for r in results if "received" in r]
    # Reducer timestamp to arrival at the websocket client.
    latencies = [s[4] - s[3] for r in clients for s in r["latencies"]]
    source = next(r for r in results if "published" in r)
    return {
        "published": source["published"],
        # Below ``rate`` when the publisher was starved of CPU: the stream then ran lighter.
        "published_per_s": round(source["published"] / max(source["published_s"], 1e-9)),
        "expected_per_s": round(stream["clients"] * stream["markets_per_client"] / stream["universe"] * stream["rate"]),
        "deliveries_per_s": round(sum(r["received"] for r in clients) / duration),
        "p50_ms": round(percentile(latencies, 0.5), 1),
        "p99_ms": round(percentile(latencies, 0.99), 1),
        "client_errors": sum(r["error_count"] for r in clients),
        "client_cpu_s": round(sum(r["cpu_s"] for r in clients), 1),
    }


def bench_bets(
    *,
    rate: float = 200,
    duration: float = 20,
    warmup: float = 5,
    stream_rate: float = 1000,
    punters: int = 300,
    stream_clients: int = 200,
    universe: int = 1000,
    ceiling_s: float = 8,
    search: tuple[float, ...] = SEARCH_RATES,
    search_duration: float = 8,
    search_warmup: float = 2,
    cost_rate: float = 200,
    cost_duration: float = 10,
) -> dict[str, Any]:
    """Measure bet placement at ``rate`` bets/s for ``duration`` s (after ``warmup`` s) with
    ``punters`` punters, while ``stream_clients`` websocket clients each watch 20 of ``universe``
    markets that move at ``stream_rate`` updates/s.

    Before that, on the same database and punters: the database's ceiling (``bench_db_ceiling``,
    ``ceiling_s`` per statement), and ``bets_per_s``, the highest of the ``search`` rates (tried
    in order, each under the same stream, until one fails) at which every bet was answered 2xx
    with p99 at most ``P99_TARGET_MS``; ``bets_ratio`` is ``bets_per_s`` over the ceiling.

    Then what a bet costs against its bare twin (``bench_bet_costs``: ``cost_rate`` bets/s for
    ``cost_duration`` s without the stream, to the application and to ``bench.bare_bets``).

    Returns the latency of accepted bets (``bet_p50_ms``, ``bet_p99_ms``, ``bet_max_ms``), the
    offered and accepted rates, ``bet_errors`` by HTTP status (0: no response),
    ``bet_rejections`` by error code, ``bet_error_codes`` by both, the bet clients' CPU seconds, the stream that ran
    (``stream``), the server's CPU and the machine's load over the measured window.
    """
    django_ready()
    from django.conf import settings

    from bench.common import namespace as fresh_namespace

    limit, window_s = settings.BET_PLACE_LIMIT, settings.BET_PLACE_WINDOW_S

    # Enough punters that none reaches the per-punter limit at the highest rate tried.
    punters = max(punters, math.ceil(max((rate, *search)) * window_s / (limit * LIMIT_SHARE)))
    markets_per_client = min(20, universe)
    if universe < EVENTS:
        raise ValueError(f"the stream's universe must hold the {EVENTS} benchmark markets")
    migrate_if_needed()
    with _exclusive(), fresh_namespace() as namespace:
        fixture_remove()
        log(f"creating {punters} punters and {EVENTS} benchmark markets")
        fixture: Fixture | None = None
        try:
            fixture = fixture_create(punters=punters)
            markets_publish(fixture.books)
            stream = {
                "clients": stream_clients,
                "markets_per_client": markets_per_client,
                "universe": universe,
                "rate": stream_rate,
            }
            log(f"the database's ceiling: pgbench, {ceiling_s:g} s per statement")
            ceiling = bench_db_ceiling(fixture, seconds=ceiling_s)
            best, trail = _search(
                fixture,
                namespace=namespace,
                stream=stream,
                rates=search,
                duration=search_duration,
                warmup=search_warmup,
            )
            measured = _measure(
                fixture, namespace=namespace, rate=rate, duration=duration, warmup=warmup, stream=stream
            )
            costs = bench_bet_costs(
                fixture, namespace=namespace, rate=cost_rate, duration=cost_duration, warmup=search_warmup
            )
            return {
                **ceiling,
                **costs,
                "bet_db_cpu_vs_pgbench": round(costs["bet_db_cpu_ms"] / ceiling["bet_pgbench_cpu_ms"], 2)
                if ceiling["bet_pgbench_cpu_ms"]
                else math.nan,
                "bets_per_s": best,
                "bets_ratio": round(best / ceiling["bets_db_ceiling_per_s"], 3),
                "bets_search": trail,
                **measured,
            }
        finally:
            if fixture is not None:
                sessions_remove(fixture.session_keys)
            fixture_remove(namespace=namespace)


def _cpu_ms_per_bet(run: dict[str, Any], role: str) -> float:
    answered = run["bet_rate_answered_per_s"] * run["duration_s"]
    return round(run["machine_load"]["cpu_s"][role] * 1000 / answered, 3) if answered else math.nan


def bench_bet_costs(fixture: Fixture, *, namespace: str, rate: float, duration: float, warmup: float) -> dict[str, Any]:
    """What one bet costs in CPU, against its bare twin, in the same run and without websocket
    clients (the benchmark markets alone move, at ``QUIET_STREAM_RATE``):
    the same clients send the same bets at ``rate`` first to the application, then to
    ``bench.bare_bets`` (the one database round trip on the same server and pool size).

    ``bet_web_cpu_ms`` and ``bet_bare_web_cpu_ms`` are the server's CPU (master and workers) per
    answered bet, ``bet_db_cpu_ms`` PostgreSQL's per answered bet of the application (every
    PostgreSQL process: the backends and the writer, WAL writer and checkpointer they cause).
    Both runs place real bets on the fixture's punters and markets."""
    from django.conf import settings

    with tempfile.NamedTemporaryFile("w", suffix=".json") as sessions:
        json.dump(
            {
                "cookie": settings.SESSION_COOKIE_NAME,
                "sessions": dict(zip(fixture.session_keys, fixture.user_ids, strict=True)),
            },
            sessions,
        )
        sessions.flush()
        # No websocket clients; the benchmark markets alone keep moving (through the reducers'
        # sink, not the server), so that their live states stay fresh and the bets are taken.
        quiet = {"clients": 0, "markets_per_client": 0, "universe": len(fixture.books), "rate": QUIET_STREAM_RATE}
        app = _measure(fixture, namespace=namespace, rate=rate, duration=duration, warmup=warmup, stream=quiet)
        bare = _measure(
            fixture,
            namespace=namespace,
            rate=rate,
            duration=duration,
            warmup=warmup,
            stream=quiet,
            bare=Path(sessions.name),
        )
    web, bare_web = _cpu_ms_per_bet(app, "server"), _cpu_ms_per_bet(bare, "server")
    return {
        "bet_web_cpu_ms": web,
        "bet_bare_web_cpu_ms": bare_web,
        "bet_web_cpu_vs_bare": round(web / bare_web, 2) if bare_web else math.nan,
        "bet_db_cpu_ms": _cpu_ms_per_bet(app, "postgres"),
        "bet_bare_db_cpu_ms": _cpu_ms_per_bet(bare, "postgres"),
        "bet_cost_runs": {
            name: {
                "rate": rate,
                "answered_per_s": run["bet_rate_answered_per_s"],
                "p50_ms": run["bet_p50_ms"],
                "p99_ms": run["bet_p99_ms"],
                "errors": run["bet_error_codes"],
                "cpu_s": run["machine_load"]["cpu_s"],
                "busy_pct": run["machine_load"]["busy_pct"],
            }
            for name, run in (("app", app), ("bare", bare))
        },
    }


def _search(
    fixture: Fixture,
    *,
    namespace: str,
    stream: dict[str, Any],
    rates: tuple[float, ...],
    duration: float,
    warmup: float,
) -> tuple[float, list[dict[str, Any]]]:
    """The highest of ``rates`` (tried in order until one fails) at which every bet was answered
    2xx with p99 within ``P99_TARGET_MS``, and what each try measured."""
    best, trail = 0.0, []
    for rate in rates:
        log(f"search: {rate:g} bets/s")
        tried = _measure(fixture, namespace=namespace, rate=rate, duration=duration, warmup=warmup, stream=stream)
        passed = tried["bet_p99_ms"] <= P99_TARGET_MS and not tried["bet_errors"] and not tried["bets_unanswered"]
        trail.append(
            {
                "rate": rate,
                "passed": passed,
                "p50_ms": tried["bet_p50_ms"],
                "p99_ms": tried["bet_p99_ms"],
                "accepted_per_s": tried["bet_rate_accepted_per_s"],
                "errors": tried["bet_errors"],
                "busy_pct": tried["machine_load"]["busy_pct"],
                "cpu_s": tried["machine_load"]["cpu_s"],
            }
        )
        if not passed:
            break
        best = rate
    return best, trail


def _measure(
    fixture: Fixture,
    *,
    namespace: str,
    rate: float,
    duration: float,
    warmup: float,
    stream: dict[str, Any] | None,
    bare: Path | None = None,
) -> dict[str, Any]:
    """One run of bets at ``rate``, under ``stream`` (None: bets alone), against the real
    application or, with ``bare`` (its sessions file), against its bare twin."""
    ctx = mp.get_context("spawn")
    out: Any = ctx.Queue()
    port = free_port()
    cookies = _cookie_names()
    server = _server_start(port, namespace, bare=bare)
    procs: list[Any] = []
    try:
        wait_until(
            lambda: server.poll() is not None or _server_ready(port, cookies, fixture.credentials[0]),
            timeout=90,
            interval=0.5,
            what="uvicorn to answer the API",
        )
        if server.poll() is not None:
            raise RuntimeError(f"uvicorn exited with {server.returncode}: see var/log/bench-bets-uvicorn.log")
        books_touch(fixture.books)
        # The bets start once every client process has had time to start and connect.
        lead = 4.0
        start_at = time.time() + lead
        if stream is not None:
            rng = random.Random(3)
            bench_ids = sorted(fixture.books)
            others = (m for m in range(1, 10**9) if m not in fixture.books)
            slots = bench_ids + [next(others) for _ in range(stream["universe"] - len(bench_ids))]
            watch = [rng.sample(slots, stream["markets_per_client"]) for _ in range(stream["clients"])]
            url = f"ws://127.0.0.1:{port}/ws/odds/"
            per = max(1, math.ceil(len(watch) / CLIENT_PROCS))
            for chunk in (watch[i : i + per] for i in range(0, len(watch), per)):
                procs.append(ctx.Process(target=client_process, args=(url, chunk, duration, lead + warmup, True, out)))
            seconds = lead + warmup + duration + 1
            procs.append(
                ctx.Process(target=stream_process, args=(namespace, slots, fixture.books, stream["rate"], seconds, out))
            )
        total = math.ceil((warmup + duration) * rate)
        run_id = uuid.uuid4().hex[:12]
        for first in range(CLIENT_PROCS):
            kwargs = {
                "port": port,
                "cookies": cookies,
                "credentials": fixture.credentials,
                "legs": fixture.legs,
                "run_id": run_id,
                "start_at": start_at,
                "rate": rate,
                "total": total,
                "first": first,
                "step": CLIENT_PROCS,
                "max_threads": MAX_THREADS,
                "drain_s": DRAIN_S,
                "out": out,
            }
            procs.append(ctx.Process(target=bet_client_process, kwargs=kwargs))
        for proc in procs:
            proc.start()
        clients = [p.pid for p in procs]
        under = f"{stream['clients']} websocket clients, stream {stream['rate']:g}/s" if stream else "no stream"
        log(f"{'bare twin' if bare else 'the application'}, {under}, bets {rate:g}/s from {start_at:.0f}")
        window_from = start_at + warmup
        time.sleep(max(0.0, window_from - time.time()))
        before = _cpu_by_role(server=server.pid, clients=clients)
        while (left := window_from + duration - time.time()) > 0:
            log(f"measuring: {left:4.0f} s left")
            time.sleep(min(5.0, left))
        after = _cpu_by_role(server=server.pid, clients=clients)
        machine = _machine_load(before, after, duration)
        results = [out.get(timeout=warmup + duration + 120) for _ in procs]
        for proc in procs:
            proc.join(30)
    finally:
        for proc in procs:
            if proc.is_alive():
                proc.terminate()
        _server_stop(server)
    bets = [b for r in results if "bets" in r for b in r["bets"]]
    return {
        **_bets_summary(bets, rate=rate, warmup=warmup, duration=duration),
        "bet_client_cpu_s": round(sum(r["cpu_s"] for r in results if "bets" in r), 1),
        "bet_client_procs": CLIENT_PROCS,
        "bet_client_connections": sum(r["threads"] for r in results if "bets" in r),
        "punters": len(fixture.credentials),
        "bench_markets": len(fixture.books),
        "duration_s": duration,
        "warmup_s": warmup,
        "server": {
            "kind": "uvicorn",
            "app": "bench.bare_bets" if bare else "webapp",
            "workers": WORKERS,
            "debug": os.environ.get("DJANGO_DEBUG", "false"),
            "cpu_s": machine["cpu_s"]["server"],
        },
        "stream": None
        if stream is None
        else {
            **stream,
            "batch": True,
            "source": "redis sink",
            **_stream_summary(results, stream=stream, duration=duration),
        },
        "machine_load": machine,
    }


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rate", type=float, default=200, help="bets per second, all clients together")
    parser.add_argument("--duration", type=float, default=20, help="seconds measured")
    parser.add_argument("--warmup", type=float, default=5, help="seconds of bets before the measurement")
    parser.add_argument("--stream-rate", type=float, default=1000, help="price updates per second")
    parser.add_argument("--stream-clients", type=int, default=200, help="websocket clients, 20 markets each")
    parser.add_argument("--universe", type=int, default=1000, help="markets the stream moves")
    parser.add_argument("--punters", type=int, default=300)
    parser.add_argument("--ceiling-s", type=float, default=8, help="seconds of pgbench per statement")
    parser.add_argument(
        "--search", type=float, nargs="*", default=list(SEARCH_RATES), help="bets/s rates tried for bets_per_s"
    )
    parser.add_argument("--search-duration", type=float, default=8)
    parser.add_argument("--search-warmup", type=float, default=2)
    parser.add_argument("--cost-rate", type=float, default=200, help="bets/s of the cost runs (no stream)")
    parser.add_argument("--cost-duration", type=float, default=10, help="seconds measured by each cost run")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    # The options are named after bench_bets's keywords.
    options = vars(parse(argv))
    options["search"] = tuple(options["search"])
    print(json.dumps(bench_bets(**options), indent=2))


if __name__ == "__main__":
    main()
