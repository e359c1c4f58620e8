"""Websocket edge benchmark: updates delivered per second and latency, per ASGI server.

A publisher applies market updates through the reducers' Redis sink (state + pub-sub) at a
fixed rate; websocket clients, each watching a set of markets, time every frame from the reducer
timestamp to its arrival. The clients are k6 virtual users (``--generator k6``, bench/k6/edge.js,
built by ``infra/bin/deps.sh k6``), or this module's own Python clients (``--generator python``,
which the end-to-end stage uses for its per-stage split). Run:

    .venv/bin/python -m bench.edge --server uvicorn --clients 1000 --markets 20 --rate 1000

`make bench`'s edge stage (``bench_edge``) runs it for the hub, plain Channels and a bare server
at rising rates, with the same clients and updates, and then the hub on each ASGI server.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing as mp
import os
import random
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from bench.common import log, migrate_if_needed, namespace, percentile, session_create, sessions_remove
from bench.harness import ASGI_APP, free_port
from store.clients import redis_client

ROOT = Path(__file__).resolve().parent.parent


# The ASGI servers that serve Channels' websockets: their command lines, by name. daphne runs
# one process whatever the workers asked for. uvicorn listens with the backlog `make up` gives it
# (WEB_BACKLOG), its websocket protocol (WS_PROTOCOL) and, as there, without permessage-deflate
# (the bare server has none either); the other uvicorn protocols are there to compare.
_UVICORN = (
    "uvicorn {app} --host 127.0.0.1 --port {port} --workers {workers} --lifespan off --no-access-log "
    "--backlog {backlog} --ws-per-message-deflate false"
)
SERVERS = {
    "uvicorn": f"{_UVICORN} --log-level warning --ws {{ws}}",
    "uvicorn-websockets": f"{_UVICORN} --log-level warning --ws websockets",
    "uvicorn-wsproto": f"{_UVICORN} --log-level warning --ws wsproto",
    "daphne": "daphne -b 127.0.0.1 -p {port} -v 0 {app}",
    "granian": "granian --interface asgi --host 127.0.0.1 --port {port} --workers {workers} --no-access-log "
    "--log-level warning {app}",
    "hypercorn": "hypercorn -b 127.0.0.1:{port} -w {workers} --log-level warning {app}",
}


def server_command(server: str, *, port: int, workers: int, app: str) -> list[str]:
    from django.conf import settings

    line = SERVERS[server].format(
        port=port, workers=workers, app=app, backlog=settings.WEB_BACKLOG, ws=settings.WS_PROTOCOL
    )
    program, *args = line.split()
    return [str(ROOT / ".venv" / "bin" / program), *args]


def server_start(server: str, *, port: int, workers: int, app: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """An ASGI server of ``SERVERS`` in a session of its own (stop it with ``os.killpg``), quiet
    unless ``BENCH_SERVER_LOG`` names a file its log is appended to."""
    log_path = os.environ.get("BENCH_SERVER_LOG")
    # The child gets its own copy of the descriptor: this process's is closed on return.
    with open(log_path, "ab") if log_path else contextlib.nullcontext(subprocess.DEVNULL) as sink:
        return subprocess.Popen(
            server_command(server, port=port, workers=workers, app=app),
            cwd=ROOT,
            env=env,
            start_new_session=True,
            stdout=sink,
            stderr=sink,
        )


# The application as `make up` serves it (webapp/serve.py): uvicorn builds it in each worker
# process with the factory, which tunes that process's garbage collector.
PRODUCT_APP = "webapp.serve:application_load --factory"
# The application each edge runs in the server (servers other than uvicorn load the module's).
EDGE_APPS = {"hub": PRODUCT_APP, "channel_layer": "bench.plain_edge:application"}


def edge_app(edge: str, server: str) -> str:
    app = EDGE_APPS[edge]
    return ASGI_APP if app == PRODUCT_APP and not server.startswith("uvicorn") else app


async def _client_main(
    url: str,
    watch_lists: list[list[int]],
    duration: float,
    warmup: float,
    batch: bool,
    out: Any,
    ramp_s: float = 0.0,
    open_attempts: int = 1,
) -> None:
    """Websocket clients, one per watch list, counting what arrives after ``warmup`` for
    ``duration`` seconds. ``ramp_s`` spreads their connects over that many seconds; a handshake
    that fails is tried again up to ``open_attempts`` times in all, with backoff, as a browser's
    client does (each retry is counted)."""
    import websockets
    from websockets.typing import Origin

    # The page origin of the server itself: the handshake checks scheme, host and port.
    page_origin = "http" + url.removeprefix("ws").split("/ws/", 1)[0]
    received = 0
    open_retries = 0  # handshakes that failed and were tried again
    merged = 0  # updates the server replaced by newer ones for a slow client (`conflated` frames)
    latencies: list[tuple[float, float, float, float, float]] = []  # event, produce, kafka, reducer, received
    started = time.time()
    measure_from = started + warmup
    stop_at = measure_from + duration

    async def opened(delay: float) -> Any:
        nonlocal open_retries
        await asyncio.sleep(delay)
        attempt = 1
        while True:
            try:
                return await websockets.connect(url, origin=Origin(page_origin), max_queue=None, compression=None)
            except (TimeoutError, OSError, websockets.InvalidHandshake):
                if attempt >= open_attempts:
                    raise
                open_retries += 1
                await asyncio.sleep(0.5 * 2 ** (attempt - 1))
                attempt += 1

    async def one(markets: list[int], delay: float) -> None:
        async with await opened(delay) as ws:
            await ws.send(json.dumps({"type": "watch", "markets": markets, "batch": batch}))
            # One deadline for the whole run: a ``wait_for`` per frame starts a task per frame, which
            # cost these clients more CPU than the frames themselves (a generator that falls behind
            # adds its own queueing to every latency it reports).
            try:
                async with asyncio.timeout(max(0.0, stop_at - time.time())):
                    while True:
                        on_frame(await ws.recv(), time.time())
            except TimeoutError:
                return

    def on_frame(raw: Any, now: float) -> None:
        """Counts a frame that arrived at ``now`` and samples its timestamps."""
        nonlocal received, merged
        if now < measure_from or not isinstance(raw, str):
            return
        if raw.startswith('{"type":"markets"'):
            items = orjson.loads(raw)["items"]
            received += len(items)
            ts = items[0]["ts"]
            latencies.append((ts["event"], ts["produce"], ts["kafka"], ts["reducer"], now * 1000))
        elif raw.startswith('{"type":"market"'):
            received += 1
            if received % 5 == 0:
                ts = orjson.loads(raw)["ts"]
                latencies.append((ts["event"], ts["produce"], ts["kafka"], ts["reducer"], now * 1000))
        elif raw.startswith('{"type":"conflated"'):
            merged += int(orjson.loads(raw)["merged"])

    step = ramp_s / max(1, len(watch_lists))
    results = await asyncio.gather(*(one(m, i * step) for i, m in enumerate(watch_lists)), return_exceptions=True)
    errors = [repr(r) for r in results if isinstance(r, BaseException)]
    usage = resource.getrusage(resource.RUSAGE_SELF)
    out.put(
        {
            "received": received,
            "merged": merged,
            "open_retries": open_retries,
            "latencies": latencies,
            "errors": errors[:3],
            "error_count": len(errors),
            "cpu_s": usage.ru_utime + usage.ru_stime,
        }
    )


def client_process(*args: Any) -> None:
    """A process of websocket clients: ``_client_main``'s arguments, in its order."""
    asyncio.run(_client_main(*args))


def paced_updates(markets: int, rate: float, seconds: float, *, first_seq: int = 1) -> Iterator[list[Any]]:
    """Ticks of random price updates over ``markets`` at ``rate`` a second, for ``seconds``.

    Each tick yields its updates (per-market sequences increase by one from ``first_seq``) and
    sleeps out the rest of the tick, so the caller's own work counts against it.
    """
    from reducers.schemas import PriceUpdate, SelectionPrice

    rng = random.Random(1)
    seqs = [first_seq - 1] * (markets + 1)
    tick = 0.005
    budget = 0.0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        started = time.monotonic()
        budget += rate * tick
        n = int(budget)
        budget -= n
        now = int(time.time() * 1000)
        batch = []
        for _ in range(n):
            m = rng.randint(1, markets)
            seqs[m] += 1
            price = Decimal(rng.randint(101, 900)) / 100
            batch.append(PriceUpdate(m, seqs[m], "open", (SelectionPrice(1, price),), now, now))
        yield batch
        time.sleep(max(0.0, tick - (time.monotonic() - started)))


def publisher_process(namespace: str, markets: int, rate: float, seconds: float, out: Any) -> None:
    """The source for edge runs: updates applied through the reducers' Redis sink."""
    os.environ["SPORTSBOOK_NAMESPACE"] = namespace

    from reducers.prices import conflate
    from store.markets import MarketStore

    sink = MarketStore(redis_client(os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")))
    sent = 0
    for batch in paced_updates(markets, rate, seconds):
        sink.apply(conflate([(update, update.produce_ts) for update in batch]))
        sent += len(batch)
    out.put({"published": sent})


def kafka_feed_process(namespace: str, markets: int, rate: float, seconds: float, out: Any) -> None:
    """The source for end-to-end runs: price updates produced to Kafka at a fixed rate."""
    os.environ["SPORTSBOOK_NAMESPACE"] = namespace
    from reducers import topics
    from store.clients import kafka_producer

    # The feed's own producer settings, sending each record within a millisecond.
    producer = kafka_producer(os.environ.get("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9092"), **{"linger.ms": 1})
    sent = 0
    # The end-to-end stage feeds the same reducers several times: each run's sequences start at
    # the milliseconds of its start, above any earlier run's, or the reducers would take its
    # prices for old ones and apply none.
    for batch in paced_updates(markets, rate, seconds, first_seq=int(time.time() * 1000)):
        for update in batch:
            producer.produce(topics.prices(), key=update.key(), value=update.encode())
        producer.poll(0)
        sent += len(batch)
    producer.flush(30)
    out.put({"published": sent})


K6_SCRIPT = ROOT / "bench" / "k6" / "edge.js"


def k6_binary() -> Path:
    """The k6 build the project pins (built on first use)."""
    subprocess.run([str(ROOT / "infra" / "bin" / "deps.sh"), "k6"], check=True, cwd=ROOT)
    (binary,) = (ROOT / ".cache" / "bin").glob("k6-v*")
    return binary


class K6Run(NamedTuple):
    process: subprocess.Popen[bytes]
    summary: Path
    log: Path


K6_START_AT = re.compile(r"start_at (\d+)")


def k6_clients(
    *,
    url: str,
    watch: list[list[int]],
    batch: bool,
    connect_s: float,
    warmup: float,
    duration: float,
    ts_field: str,
    cookies: list[str],
    arrival_per_s: float = 0,
) -> K6Run:
    """Start k6 with one virtual user per watch list, user i logged in with ``cookies[i mod n]``;
    once k6 has readied them all they connect within ``connect_s`` seconds, all at once or
    ``arrival_per_s`` a second, and count what arrives from ``warmup`` seconds after that for
    ``duration`` seconds. ``k6_start_at`` says when the connecting ends (the source's start)."""
    folder = Path(tempfile.mkdtemp(prefix="sportsbook-k6-"))
    (folder / "watch.json").write_text(json.dumps(watch))
    env = {
        **os.environ,
        "URL": url,
        "ORIGIN": "http" + url.removeprefix("ws").split("/ws/", 1)[0],
        "WATCH_FILE": str(folder / "watch.json"),
        "BATCH": "1" if batch else "0",
        "CONNECT_MS": str(int(connect_s * 1000)),
        "WARMUP_MS": str(int(warmup * 1000)),
        "DURATION_MS": str(int(duration * 1000)),
        "TS_FIELD": ts_field,
        "COOKIES": " ".join(cookies),
        "ARRIVAL_PER_S": str(arrival_per_s),
        "SUMMARY": str(folder / "summary.json"),
        "K6_NO_USAGE_REPORT": "true",
    }
    # k6's log to a file of its own is written late (buffered); its standard error, unbuffered,
    # goes to the file as each line is logged, so setup()'s start is there when it is said.
    with open(folder / "k6.log", "wb") as log_file:
        process = subprocess.Popen(
            [str(k6_binary()), "run", "--quiet", "--no-color", "--log-output=stderr", str(K6_SCRIPT)],
            cwd=folder,
            env=env,
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=log_file,
        )
    return K6Run(process, folder / "summary.json", folder / "k6.log")


def k6_start_at(k6: K6Run, *, timeout: float) -> float:
    """When k6's users stop connecting and the source starts (epoch s), as its setup() logs it once
    every user is readied: k6 readies 10,000 users in 10 s or more, so a start fixed before k6
    started would take that from the users' time to connect."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if k6.log.exists():
            found = K6_START_AT.search(k6.log.read_text(errors="replace"))
            if found:
                return int(found.group(1)) / 1000
        if k6.process.poll() is not None:
            raise RuntimeError(f"k6 exited (status {k6.process.returncode}) before its users were ready")
        time.sleep(0.1)
    os.killpg(k6.process.pid, signal.SIGKILL)
    raise TimeoutError(f"k6 did not ready its users within {timeout:.0f} s")


def k6_wait(process: subprocess.Popen[bytes], summary: Path, *, timeout: float) -> dict[str, Any]:
    """Wait for k6 to finish; its summary plus the CPU seconds it used."""
    deadline = time.monotonic() + timeout
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            process.returncode = os.waitstatus_to_exitcode(status)
            break
        if time.monotonic() > deadline:
            os.killpg(process.pid, signal.SIGKILL)
            raise TimeoutError(f"k6 did not finish within {timeout:.0f} s")
        time.sleep(0.2)
    if not summary.exists():
        raise RuntimeError(f"k6 wrote no summary (exit status {process.returncode})")
    result = json.loads(summary.read_text())
    result["cpu_s"] = usage.ru_utime + usage.ru_stime
    return result


def _group_cpu_s(pid: int) -> float:
    """CPU seconds used so far by a process and its children (the server and its workers)."""
    import psutil

    try:
        root = psutil.Process(pid)
        total = 0.0
        for p in [root, *root.children(recursive=True)]:
            times = p.cpu_times()
            total += times.user + times.system
        return total
    except psutil.NoSuchProcess:
        return 0.0


def _group_rss_mib(pid: int) -> float:
    import psutil

    try:
        root = psutil.Process(pid)
        return sum(p.memory_info().rss for p in [root, *root.children(recursive=True)]) / 2**20
    except psutil.NoSuchProcess:
        return 0.0


def stage_split(samples: list[tuple[float, float, float, float, float]]) -> dict[str, float]:
    """p50 of each stage: source → Kafka producer, → broker, → reducer applied, → client."""
    names = ("event_to_produce", "produce_to_kafka", "kafka_to_reducer", "reducer_to_client")
    return {
        f"{name}_p50_ms": round(percentile([s[i + 1] - s[i] for s in samples], 0.5), 1) for i, name in enumerate(names)
    }


def web_settings_args() -> list[str]:
    """The web processes' settings the bare server runs with: the edge's tick and the collector's
    policy."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
    from django.conf import settings

    return [
        *("--tick-ms", str(settings.EDGE_TICK_MS)),
        *("--gc-young", str(settings.WEB_GC_YOUNG), "--gc-growth", str(settings.WEB_GC_FULL_GROWTH)),
    ]


def run_ceiling(args: argparse.Namespace) -> dict[str, Any]:
    """The same clients and updates against the bare server of bench/ceiling_server.py."""
    port = free_port()
    start_file = Path(tempfile.mkdtemp(prefix="sportsbook-ceiling-")) / "start_at"
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bench.ceiling_server",
            "--port",
            str(port),
            "--workers",
            str(args.workers),
            "--universe",
            str(args.universe),
            "--rate",
            str(args.rate),
            *web_settings_args(),
            "--start-file",
            str(start_file),
            "--seconds",
            str(args.warmup + args.duration),
        ],
        cwd=ROOT,
        start_new_session=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )

    def start(at: float) -> None:  # written whole, then named: a worker never reads half of it
        written = start_file.with_suffix(".new")
        written.write_text(repr(at))
        written.rename(start_file)

    try:
        port_wait(port)
        memory = {"empty": _group_rss_mib(server.pid)}
        with watcher_cookies(args.clients) as cookies:  # the same requests as the hub's (ignored here)
            k6 = k6_clients(
                url=f"ws://127.0.0.1:{port}/ws/odds/",
                watch=watch_lists(args),
                batch=True,
                connect_s=args.connect_s,
                warmup=args.warmup,
                duration=args.duration,
                ts_field="reducer",
                cookies=cookies,
                arrival_per_s=args.arrival_per_s,
            )
            generated, server_cpu = k6_window(k6, args, server.pid, memory, start=start, at_start=None)
        server_rss_mib = memory["streaming"]
        out, _ = server.communicate(timeout=60)
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(20)
        shutil.rmtree(start_file.parent, ignore_errors=True)
    return _k6_result(args, generated, json.loads(out)["published"], server_cpu, server_rss_mib, memory)


def k6_window(
    k6: K6Run,
    args: argparse.Namespace,
    server_pid: int,
    memory: dict[str, float],
    *,
    start: Callable[[float], None] | None,
    at_start: Callable[[], None] | None,
) -> tuple[dict[str, Any], float]:
    """Through one k6 run: learn when the source starts (``start`` is told at once), sample the
    server's memory with every socket open and idle just before it, call ``at_start`` then, measure
    the server's CPU over the measured window and its memory at the end; k6's summary and the
    server's CPU seconds in the window."""
    # k6 readies its users before setup() (tens of seconds for 10,000 on a slow machine).
    start_at = k6_start_at(k6, timeout=120 + args.clients / 50)
    if start is not None:
        start(start_at)
    time.sleep(max(0.0, start_at - 0.5 - time.time()))
    memory["idle"] = _group_rss_mib(server_pid)
    time.sleep(max(0.0, start_at - time.time()))
    if at_start is not None:
        at_start()
    time.sleep(max(0.0, start_at + args.warmup - time.time()))
    server_cpu = _group_cpu_s(server_pid)
    time.sleep(max(0.0, start_at + args.warmup + args.duration - time.time()))
    server_cpu = _group_cpu_s(server_pid) - server_cpu
    memory["streaming"] = _group_rss_mib(server_pid)
    generated = k6_wait(k6.process, k6.summary, timeout=120 + args.clients / 50)
    # The run's folder (its users' watch lists, summary and log) goes once its summary is read;
    # a run that failed keeps it, for its log.
    shutil.rmtree(k6.summary.parent, ignore_errors=True)
    return generated, server_cpu


WATCHER_PREFIX = "bench-watcher-"


@contextlib.contextmanager
def watcher_cookies(clients: int) -> Iterator[list[str]]:
    """Session cookies of logged-in punters for the generator's users, as browsers present them:
    enough punters that none reaches the per-punter connection cap; removed afterwards."""
    from django.conf import settings
    from django.contrib.auth.hashers import make_password
    from django.contrib.auth.models import User

    migrate_if_needed()
    per_punter = max(1, settings.WS_MAX_CONNECTIONS_PER_USER // 2)
    User.objects.filter(username__startswith=WATCHER_PREFIX).delete()  # an interrupted run's
    users = User.objects.bulk_create(
        User(username=f"{WATCHER_PREFIX}{n:05d}", password=make_password(None))
        for n in range(-(-clients // per_punter))
    )
    session_keys = [session_create(user=user) for user in users]
    try:
        yield [f"{settings.SESSION_COOKIE_NAME}={key}" for key in session_keys]
    finally:
        sessions_remove(session_keys)
        User.objects.filter(username__startswith=WATCHER_PREFIX).delete()


def port_wait(port: int, *, timeout: float = 30) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise TimeoutError(f"nothing listens on port {port} after {timeout:.0f} s")


def watch_lists(args: argparse.Namespace) -> list[list[int]]:
    """The markets each client watches: the same lists in every run of the same arguments."""
    rng = random.Random(2)
    return [rng.sample(range(1, args.universe + 1), args.markets) for _ in range(args.clients)]


def run(args: argparse.Namespace) -> dict[str, Any]:
    if args.edge == "ceiling":
        return run_ceiling(args)
    namespace = os.environ.get("SPORTSBOOK_NAMESPACE") or f"bench{uuid.uuid4().hex[:6]}"
    port = free_port()
    env = {**os.environ, "SPORTSBOOK_NAMESPACE": namespace, "PYTHONUNBUFFERED": "1"}
    server = server_start(args.server, port=port, workers=args.workers, app=edge_app(args.edge, args.server), env=env)
    relay = None
    if args.edge == "channel_layer":
        relay = subprocess.Popen(
            [sys.executable, "-m", "bench.plain_edge"],
            cwd=ROOT,
            env=env,
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    try:
        port_wait(port)
        watch = watch_lists(args)
        queue: Any = mp.Queue()
        url = f"ws://127.0.0.1:{port}/ws/odds/"
        source = kafka_feed_process if args.source == "kafka" else publisher_process
        pub = mp.Process(target=source, args=(namespace, args.universe, args.rate, args.warmup + args.duration, queue))
        if args.generator == "k6":
            memory = {"empty": _group_rss_mib(server.pid)}
            # The users connect first (once k6 has readied them); the source starts after.
            with watcher_cookies(args.clients) as cookies:
                k6 = k6_clients(
                    url=url,
                    watch=watch,
                    batch=args.batch,
                    connect_s=args.connect_s,
                    warmup=args.warmup,
                    duration=args.duration,
                    ts_field="event" if args.source == "kafka" else "reducer",
                    cookies=cookies,
                    arrival_per_s=args.arrival_per_s,
                )
                generated, server_cpu = k6_window(k6, args, server.pid, memory, start=None, at_start=pub.start)
            published = queue.get(timeout=60)
            pub.join(30)
            server_rss_mib = _group_rss_mib(server.pid)
            return _k6_result(args, generated, published["published"], server_cpu, server_rss_mib, memory)
        procs = []
        per = (args.clients + args.client_procs - 1) // args.client_procs
        for i in range(args.client_procs):
            chunk = watch[i * per : (i + 1) * per]
            if chunk:
                p = mp.Process(target=client_process, args=(url, chunk, args.duration, args.warmup, args.batch, queue))
                p.start()
                procs.append(p)
        time.sleep(min(5.0, args.warmup / 2))
        pub.start()
        results = [queue.get(timeout=args.warmup + args.duration + 120) for _ in range(len(procs) + 1)]
        for p in [*procs, pub]:
            p.join(30)
        server_rss_mib = _group_rss_mib(server.pid)
    finally:
        for process in (server, relay):
            if process is not None:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(20)
    clients = [r for r in results if "received" in r]
    samples = [tuple(x) for r in clients for x in r["latencies"]]
    origin = 0 if args.source == "kafka" else 3  # end to end from the source event, else from the reducer
    latencies = [s[4] - s[origin] for s in samples]
    received = sum(r["received"] for r in clients)
    return {
        "server": args.server,
        "edge": args.edge,
        "batch": args.batch,
        "workers": args.workers,
        "clients": args.clients,
        "markets_per_client": args.markets,
        "universe": args.universe,
        "rate": args.rate,
        "published": next(r["published"] for r in results if "published" in r),
        "deliveries_per_s": round(received / args.duration),
        "expected_per_s": round(
            next(r["published"] for r in results if "published" in r)
            / (args.warmup + args.duration)
            * args.clients
            * args.markets
            / args.universe
        ),
        "p50_ms": round(percentile(latencies, 0.5), 1),
        "p99_ms": round(percentile(latencies, 0.99), 1),
        "max_ms": round(max(latencies, default=float("nan")), 1),
        "client_errors": sum(r["error_count"] for r in clients),
        "client_cpu_s": round(sum(r["cpu_s"] for r in clients), 1),
        "source": args.source,
        "server_rss_mib": round(server_rss_mib),
        **(stage_split(samples) if args.source == "kafka" else {}),
    }


def _k6_result(
    args: argparse.Namespace,
    generated: dict[str, Any],
    published: int,
    server_cpu_s: float,
    server_rss_mib: float,
    memory: dict[str, float],
) -> dict[str, Any]:
    """One k6 run's row. ``memory``: the server's resident MiB before any socket (``empty``), with
    every socket open before the stream (``idle``) and at the end of the window (``streaming``)."""
    delivered = generated["deliveries"]
    generator_cpu_s = generated["cpu_s"]
    wall = args.warmup + args.duration
    return {
        "server": args.server,
        "edge": args.edge,
        "generator": "k6",
        "batch": args.batch,
        "workers": args.workers,
        "clients": args.clients,
        "markets_per_client": args.markets,
        "universe": args.universe,
        "rate": args.rate,
        "published": published,
        "deliveries_per_s": round(delivered / args.duration),
        "expected_per_s": round(published / wall * args.clients * args.markets / args.universe),
        "p50_ms": round(generated["p50_ms"], 1),
        "p99_ms": round(generated["p99_ms"], 1),
        "max_ms": round(generated["max_ms"], 1),
        "conflated": generated["conflated"],
        "client_errors": generated["socket_errors"],
        # Handshakes tried again after a refusal or a drop before they opened (k6 as the browser).
        "retries": generated.get("retries", 0),
        "late_opens": generated["late_opens"],
        "logged_in": generated["logged_in"],
        "server_cpu_s": round(server_cpu_s, 1),
        "server_cpu_s_per_1000": round(server_cpu_s / delivered * 1000, 4) if delivered else None,
        # k6 runs for the connect time, the warm-up and the window: its share is of all of that.
        "generator_cpu_s": round(generator_cpu_s, 1),
        "generator_cpu_share": round(generator_cpu_s / ((os.cpu_count() or 1) * (wall + args.connect_s)), 3),
        "source": args.source,
        "server_rss_mib": round(server_rss_mib),
        "server_rss_empty_mib": round(memory["empty"], 1),
        "server_rss_idle_mib": round(memory["idle"], 1),
        "server_rss_streaming_mib": round(memory["streaming"], 1),
        # Resident memory each open socket adds, idle and while streaming.
        "rss_per_socket_idle_kib": round((memory["idle"] - memory["empty"]) * 1024 / args.clients, 1),
        "rss_per_socket_streaming_kib": round((memory["streaming"] - memory["empty"]) * 1024 / args.clients, 1),
        # Sockets accepted a second (the server's handshake, the punter's session read) when every
        # user connects at once; the last open bounds it. With users arriving ``arrival_per_s`` a
        # second, the arrival bounds it instead.
        "arrival_per_s": args.arrival_per_s,
        "opens": generated.get("opens", 0),
        "open_p50_ms": round(generated.get("open_p50_ms", 0), 1),
        "open_max_ms": round(generated.get("open_max_ms", 0), 1),
        "accepted_per_s": round(generated["opens"] / (generated["open_max_ms"] / 1000))
        if generated.get("opens") and generated.get("open_max_ms")
        else None,
    }


# --- the edge stage of `make bench` ---------------------------------------------------------


TARGETS = [
    ("edge_deliveries_per_s", "Edge (hub): highest rate with p99 <= 100 ms", "deliveries/s", None),
    ("edge_p99_ms", "Edge (hub) p99 at that rate", "ms", "<= 100"),
    ("edge_baseline_deliveries_per_s", "Plain Channels path (group_send), same test", "deliveries/s", None),
    ("edge_ceiling_deliveries_per_s", "Bare websocket server, same test: the ceiling", "deliveries/s", None),
    ("edge_ratio", "Hub ÷ plain path, same run", "times", ">= 15"),
    ("edge_vs_ceiling", "Hub ÷ the ceiling, same run", "ratio", ">= 0.6"),
    ("edge_server_cpu_s_per_1000", "Edge (hub) server CPU per 1,000 deliveries", "s", None),
    ("edge_generator_cpu_share", "Load generator (k6) share of the machine's CPU", "ratio", None),
]
# The p99 bound of an edge's figure, and the paths measured with their labels in the plot.
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
        args = parse(
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
            row = run(args)
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


def markdown_lines(results: dict[str, Any]) -> list[str]:
    """The stage's tables under the table of docs/performance.md: every run of every path, and
    the hub on each ASGI server."""
    if not results.get("edge_rows"):
        return []
    lines = [
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
    return lines


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", choices=sorted(SERVERS), default="uvicorn")
    parser.add_argument(
        "--edge",
        choices=["hub", "channel_layer", "ceiling"],
        default="hub",
        help="hub: the product's edge; channel_layer: plain Channels group_send; ceiling: a bare server",
    )
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--markets", type=int, default=20, help="markets watched per client")
    parser.add_argument("--universe", type=int, default=1000, help="markets updated by the publisher")
    parser.add_argument("--rate", type=float, default=1000, help="market updates per second")
    parser.add_argument("--duration", type=float, default=10)
    parser.add_argument("--warmup", type=float, default=5)
    parser.add_argument("--client-procs", type=int, default=2, help="processes of Python clients")
    parser.add_argument("--generator", choices=["k6", "python"], default="k6", help="who drives the websockets")
    parser.add_argument("--connect-s", type=float, default=10, help="k6: seconds for the users to connect")
    parser.add_argument("--arrival-per-s", type=float, default=0, help="k6: users connecting a second (0: all at once)")
    parser.add_argument("--batch", action="store_true", help="clients ask for one frame per tick")
    parser.add_argument(
        "--source",
        choices=["redis", "kafka"],
        default="redis",
        help="redis: updates applied straight to Redis (the edge alone); kafka: produced to Kafka and "
        "reduced by running reducers (end to end, latency from the source event)",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
    django.setup()  # the generator's punters and their sessions
    print(json.dumps(run(parse(argv))))


if __name__ == "__main__":
    main()
