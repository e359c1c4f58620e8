"""The game stage (issue 52): punters answering the open questions of live matches, then a goal
in every match settling all their next-goal answers at once, through the product's own path
(the reducers process's Spark game query, its state store, Redis).

- ``game_answers_per_s``: answers into state: every punter's two answers (next goal, a card)
  produced at once, counted off the game query's progress reports (the batches after the
  production began) until they hold every answer, over the time from the first produced record
  to the end of the batch that took the last.
- ``game_answers_busy_per_s``: the same answers over the time the batches that started once
  every answer was produced were busy, as the reducers stage takes its rates
  (``bench.reducers.busy_rate``: the producer shares the two cores until then); the target's
  ratio, ``game_answers_vs_reducers``, sets it against the reducers' micro-batch updates taken
  so. ``game_answers_batches``: each batch that took answers (rows, ms, whether it started after
  the production).
- ``game_ceiling_answers_per_s``: the same answers taken by the game's bare stateful query
  (bench/game_ceiling.py: the game's source, spread and state store, no game in its processor),
  warmed as the game is, in a process of its own after the game; ``game_answers_vs_ceiling``
  sets the game's busy rate against it, as the reducers stage sets its reducers against theirs.
- ``game_least_answers_per_s``: the same answers taken by the same query doing the least any game
  must do with an answer (bench/game_ceiling.py ``--least``: decode and check it, write the
  punter's state to Redis), measured as the bare query is; ``game_answers_vs_least`` sets the
  game against it, ``game_ceiling_vs_reducers`` and ``game_least_vs_reducers`` the two queries
  against the reducers: the most any game of this shape can reach here.
- ``game_settle_p99_ms``: a match event → that punter's settled answer in their state in Redis,
  p99 over a sample of one punter in 50 (2,000 of 100,000; every punter in a small run): each
  goal's time at the source to the first read that saw the punter's next-goal answer won or
  lost, the sample read every 20 ms, so the figure carries the read's own resolution. Every
  punter is then checked settled.
- ``game_state_rss_mib``: resident memory of the reducers process (the JVM and its Python workers)
  once every answer is settled; ``game_state_rss_growth_mib`` how much of it the answers added.

The game is measured as a running reducers process plays it, warm, as the reducers, end-to-end
and desk stages measure theirs: before the measured matches kick off, rounds of warm-up matches
(``WARMUP_PUNTERS`` punters answer, a goal settles them, full time) are played until the
reducers' JIT compilers take less than ``bench.harness.JIT_SETTLED_CORES`` of a core over a round,
for at least ``WARMUP_LEAST_S``. A fresh JVM compiles Spark's code for minutes: without the
warm-up the compilers took 0.2-0.7 of a core of the two all through the measured answers and
goal. The warm-up's matches are dated in the past, a round apart by more than the book keeps a
finished match (``reducers.game.BOOK_KEEP_MS``): each round's kick-off lets the round before go,
and the measured kick-off lets the last one go, with the answers the warm-up punters held
(their states stay, small, in the buckets, as other matches' punters would).
``game_warmup_compiler_cores`` keeps the compilers' cores over each round, and
``game_compiler_cores`` over the measured answers and over the goal.

    .venv/bin/python -m bench.game [--punters 100000] [--matches 10]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import orjson

from bench.common import django_ready, percentile
from bench.harness import CompilerLoad, compilers_settled
from bench.reducers import Batch, busy_rate, note_progress
from reducers import game, topics
from reducers.schemas import GameAnswer, GameEvent
from store import keys
from store.game import GameStore

FULL = (100_000, 10)
QUICK = (300, 2)
# Match events of the stage: the ids of its matches start here (far from the catalogue's).
FIRST_EVENT = 9_100_001
READ_CHUNK = 5000
# The settlement is timed on a sample: one punter in SAMPLE_EVERY (every one up to
# SAMPLE_ALL_UP_TO punters), read every SAMPLE_READ_S until settled (2,000 of 100,000: a read
# pass of a few milliseconds, so the reader takes little of the machine it measures).
SAMPLE_EVERY = 50
SAMPLE_ALL_UP_TO = 10_000
SAMPLE_READ_S = 0.02
# Every punter is then checked settled, read this often.
CHECK_READ_S = 0.5
# The warm-up (the module's doc): rounds of WARMUP_MATCHES matches that WARMUP_PUNTERS punters
# play, for at least WARMUP_LEAST_S and on until the compilers have settled, at most
# WARMUP_MAX_S or WARMUP_ROUNDS_MOST rounds. Its punters and matches are numbered far from the
# measured ones; its rounds are dated WARMUP_ROUND_MS apart, the last one WARMUP_ROUND_MS before
# the measured kick-off.
WARMUP_PUNTERS = 10_000
WARMUP_QUICK_PUNTERS = 50
WARMUP_MATCHES = 2
WARMUP_LEAST_S = 60.0
WARMUP_MAX_S = 300.0
WARMUP_ROUNDS_MOST = 60
WARMUP_FIRST_USER = 5_000_001
WARMUP_FIRST_EVENT = 9_150_001
WARMUP_ROUND_MS = game.BOOK_KEEP_MS + 60_000
# Rounds of the answers the game's bare query takes once warm (bench_game_ceiling), full and quick.
CEILING_MEASURED = {False: 3, True: 1}
TARGETS = [
    ("game_answers_per_s", "Game answers into state, first produced → last taken (2 a punter)", "answers/s", None),
    ("game_answers_busy_per_s", "Game answers into state over busy batches, once all were produced", "answers/s", None),
    (
        "game_answers_vs_reducers",
        "Game answers ÷ the micro-batch reducers' updates, both over busy batches, same run",
        "ratio",
        ">= 0.5",
    ),
    ("game_ceiling_answers_per_s", "The game's bare stateful query (no game in it): the ceiling", "answers/s", None),
    ("game_answers_vs_ceiling", "Game answers ÷ the game's bare query, both over busy batches", "ratio", None),
    (
        "game_least_answers_per_s",
        "The same query doing the least a game must (decode, one Redis write an answer)",
        "answers/s",
        None,
    ),
    ("game_answers_vs_least", "Game answers ÷ that least game's", "ratio", None),
    ("game_ceiling_vs_reducers", "The game's bare query ÷ the micro-batch reducers' updates, same run", "ratio", None),
    ("game_least_vs_reducers", "The least game ÷ the micro-batch reducers' updates, same run", "ratio", None),
    ("game_answers_wall_vs_reducers", "Game answers (first produced → last taken) ÷ reducers' updates", "ratio", None),
    ("game_settle_p99_ms", "Goal → every punter's settled answer in Redis, p99", "ms", "<= 2000"),
    ("game_state_rss_mib", "Reducers process resident memory, the game's state held", "MiB", None),
]


@dataclass(frozen=True)
class Sizes:
    punters: int
    matches: int


def _now_ms() -> int:
    return int(time.time() * 1000)


def match_event(
    event_id: int, kind: str, *, seq: int, minute: int = 0, side: str = "", at: int | None = None
) -> GameEvent:
    """A football match's event, at the source now unless ``at`` (epoch ms) says when."""
    return GameEvent(
        kind=kind,
        event_id=event_id,
        seq=seq,
        sport="football",
        minute=minute,
        side=side,
        score=(1, 0) if kind == "score" else (0, 0),
        at=_now_ms() if at is None else at,
    )


def match_of(user_id: int, *, matches: int) -> int:
    """The match a punter of the stage plays (punters numbered from 1)."""
    return FIRST_EVENT + (user_id - 1) % matches


def answers_of(
    *, punters: int, matches: int, questions: dict[int, dict[str, int]], seed: int = 52
) -> list[tuple[bytes, bytes]]:
    """Every punter's answers to their match's next-goal and card questions, encoded."""
    return answers_in(range(1, punters + 1), [FIRST_EVENT + i for i in range(matches)], questions, seed=seed)


def answers_in(
    users: range, events: list[int], questions: dict[int, dict[str, int]], *, seed: int
) -> list[tuple[bytes, bytes]]:
    """Each of ``users`` answers the next-goal and card questions of one of ``events`` (in turn:
    the n-th user the n-th event, round again), encoded."""
    rng = random.Random(seed)
    records = []
    for at, user_id in enumerate(users):
        event_id = events[at % len(events)]
        for kind in (game.NEXT_GOAL, game.CARD):
            answer = GameAnswer(
                answer_id=uuid.UUID(int=rng.getrandbits(128)).hex,
                user_id=user_id,
                event_id=event_id,
                question_id=questions[event_id][kind],
                choice=rng.choice(game.OPTIONS[kind]),
                ts=_now_ms(),
            )
            records.append((answer.key(), answer.encode()))
    return records


def produce(producer: Any, topic: str, records: Iterable[tuple[bytes, bytes]], *, timeout: float = 120) -> None:
    for key, value in records:
        while True:
            try:
                producer.produce(topic, key=key, value=value)
                break
            except BufferError:
                producer.poll(0.01)
    if producer.flush(timeout):
        raise RuntimeError("game stage: records not acknowledged")


def open_questions(client: Any, events: list[int], *, timeout: float = 240) -> dict[int, dict[str, int]]:
    """The next-goal and card questions each match opened at kick-off."""
    store = GameStore(client)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found: dict[int, dict[str, int]] = {}
        for event_id in events:
            kinds = {q["kind"]: q["id"] for q in store.questions(event_id) if q["status"] == "open"}
            if game.NEXT_GOAL in kinds and game.CARD in kinds:
                found[event_id] = kinds
        if len(found) == len(events):
            return found
        time.sleep(0.2)
    raise TimeoutError("game stage: the matches' questions never opened")


def warm_up(
    client: Any, producer: Any, *, quick: bool, compilers: Callable[[], float] | None
) -> tuple[float, int, list[float]]:
    """Rounds of warm-up matches (the module's doc) until the reducers are warm
    (``rounds_until_warm``); quick, one small round. Returns the seconds it took, the rounds and
    the compilers' cores over each."""
    users = range(WARMUP_FIRST_USER, WARMUP_FIRST_USER + (WARMUP_QUICK_PUNTERS if quick else WARMUP_PUNTERS))
    first_at = _now_ms() - (WARMUP_ROUNDS_MOST + 1) * WARMUP_ROUND_MS

    def play(round_: int) -> None:
        events = [WARMUP_FIRST_EVENT + round_ * WARMUP_MATCHES + i for i in range(WARMUP_MATCHES)]
        play_warmup_round(client, producer, users=users, events=events, at=first_at + round_ * WARMUP_ROUND_MS)

    return rounds_until_warm(play, quick=quick, compilers=compilers)


def rounds_until_warm(
    play: Callable[[int], object], *, quick: bool, compilers: Callable[[], float] | None
) -> tuple[float, int, list[float]]:
    """``play`` rounds (numbered from 0) until a round over which the compilers took less than
    ``JIT_SETTLED_CORES`` of a core (``compilers``: their cores since last asked; ``None``: at
    once) ends ``WARMUP_LEAST_S`` or more after the first began, or one ends ``WARMUP_MAX_S``
    after it, ``WARMUP_ROUNDS_MOST`` rounds at most; quick, one round. Returns the seconds it
    took, the rounds and the compilers' cores over each."""
    least, longest = (0.0, 0.0) if quick else (WARMUP_LEAST_S, WARMUP_MAX_S)
    started = time.monotonic()
    readings: list[float] = []
    rounds = 0
    while rounds < WARMUP_ROUNDS_MOST:
        play(rounds)
        rounds += 1
        settled = compilers is None or compilers_settled(compilers, readings)
        elapsed = time.monotonic() - started
        if (settled and elapsed >= least) or elapsed >= longest:
            break
    return time.monotonic() - started, rounds, readings


def play_warmup_round(client: Any, producer: Any, *, users: range, events: list[int], at: int) -> None:
    """One warm-up round, its events dated from ``at``: the matches kick off, every one of
    ``users`` answers, then a goal and full time in every match, each step waited for."""
    produce(producer, topics.game_events(), (_event_record(match_event(e, "kick_off", seq=1, at=at)) for e in events))
    questions = open_questions(client, events)
    records = answers_in(users, events, questions, seed=at)
    after = last_batch(client)
    produce(producer, topics.game_answers(), records)
    answers_taken(client, after_batch=after, answers=len(records), started=time.time(), timeout=300)
    after = last_batch(client)
    ends = [
        match_event(e, kind, seq=seq, minute=minute, side="home", at=at + seq * 1000)
        for e in events
        for kind, seq, minute in (("score", 2, 5), ("full_time", 3, 90))
    ]
    produce(producer, topics.game_events(), (_event_record(e) for e in ends))
    answers_taken(client, after_batch=after, answers=len(ends), started=time.time(), timeout=300)


def _event_record(event: GameEvent) -> tuple[bytes, bytes]:
    return event.key(), event.encode()


def last_batch(client: Any, query: str = "game") -> int:
    """The id of the game query's (or ``query``'s) newest progress report (-1 before any)."""
    raw = client.lindex(keys.reducer_progress_recent(query), 0)
    return -1 if raw is None else int(orjson.loads(raw)["batchId"])


@dataclass(frozen=True)
class Taken:
    """How the game query took a set of records: seconds from ``started`` to the end of the batch
    that took the last, and the progress of its batches after the one it was asked after."""

    seconds: float
    batches: list[Batch]

    def busy_rate(self, *, since: float) -> int | None:
        """Records over the time the batches that started at ``since`` or later were busy, as
        the reducers stage takes its consumers' rates (``bench.reducers.busy_rate``)."""
        return busy_rate(self.batches, since=since)


def answers_taken(
    client: Any, *, after_batch: int, answers: int, started: float, timeout: float, query: str = "game"
) -> Taken:
    """How the batches after ``after_batch`` brought the game query's (or ``query``'s) input to
    ``answers`` records (answers or events), timed from ``started`` (epoch)."""
    seen: dict[int, Batch] = {}
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        note_progress(client, seen, query)
        after = [batch for batch_id, batch in sorted(seen.items()) if batch_id > after_batch]
        if sum(b.rows for b in after) >= answers:
            return Taken(max(b.started + b.ms / 1000 for b in after) - started, after)
        time.sleep(0.2)
    taken = sum(b.rows for batch_id, b in seen.items() if batch_id > after_batch)
    raise TimeoutError(f"game stage: {taken} of {answers} answers reached the game")


def answers_produced_and_taken(
    client: Any, producer: Any, records: list[tuple[bytes, bytes]], *, timeout: float, query: str = "game"
) -> tuple[Taken, float, float]:
    """Produce ``records`` to the answer topic and wait until the game query (or ``query``) has
    taken them: how it took them, when the production began and when it ended (epoch s)."""
    after = last_batch(client, query)
    started = time.time()
    produce(producer, topics.game_answers(), records)
    produced_at = time.time()
    taken = answers_taken(
        client, after_batch=after, answers=len(records), started=started, timeout=timeout, query=query
    )
    return taken, started, produced_at


def batch_durations(client: Any, *, after_batch: int, timeout: float = 60) -> list[dict[str, Any]]:
    """The game query's batches after ``after_batch`` that took input: rows and Spark's time by
    step (``durationMs`` of the progress report, the state operator's times), oldest first. Waits
    for the first (a batch reports once it is committed, after its writes to Redis)."""
    deadline = time.monotonic() + timeout
    while last_batch(client) <= after_batch and time.monotonic() < deadline:
        time.sleep(0.2)
    found = []
    for raw in client.lrange(keys.reducer_progress_recent("game"), 0, -1):
        progress = orjson.loads(raw)
        if progress["batchId"] > after_batch and progress["numInputRows"]:
            state = {
                name: value
                for operator in progress.get("stateOperators", [])
                for name, value in operator.items()
                if name.endswith("TimeMs") and value
            }
            steps = progress.get("durationMs", {})
            found.append({"batch": progress["batchId"], "rows": progress["numInputRows"], **steps, **state})
    return sorted(found, key=lambda b: b["batch"])


def _settled_at(client: Any, users: list[int], *, questions: dict[int, str], matches: int) -> tuple[list[int], int]:
    """Of ``users``, those whose next-goal answer is decided in Redis now, and when they were read
    (epoch ms). ``questions``: each match's next-goal question id."""
    settled = []
    seen_ms = 0
    for at in range(0, len(users), READ_CHUNK):
        chunk = users[at : at + READ_CHUNK]
        raws = client.mget(keys.game_punters(chunk))
        seen_ms = _now_ms()
        for user_id, raw in zip(chunk, raws, strict=True):
            state = orjson.loads(raw) if raw is not None else None
            question = questions[match_of(user_id, matches=matches)]
            held = state[game.ANSWERS].get(question) if state else None
            if held is not None and held[game.HELD_RESULT] in (game.WON, game.LOST):
                settled.append(user_id)
    return settled, seen_ms


def settle_latencies(
    client: Any,
    *,
    goals_ms: dict[int, int],
    questions: dict[int, dict[str, int]],
    punters: int,
    matches: int,
    timeout: float,
) -> list[float]:
    """Per sampled punter: ms from their match's goal to the first read of their state that holds
    the next-goal answer decided. The sample is every ``sample_every(punters)``-th punter (spread
    over the matches and the buckets), read every ``SAMPLE_READ_S`` until each is settled; then
    every punter is checked once settled (the figure is a sample's, the settlement is checked
    whole). Reading every punter all along would take a core of the two the reducers settle them
    on, and more so when the punters are written bucket by bucket as the batch goes."""
    next_goal = {event_id: str(kinds[game.NEXT_GOAL]) for event_id, kinds in questions.items()}
    deadline = time.monotonic() + timeout

    def until_settled(users: list[int], every_s: float, what: str) -> list[float]:
        latencies: list[float] = []
        while users and time.monotonic() < deadline:
            settled, seen_ms = _settled_at(client, users, questions=next_goal, matches=matches)
            latencies.extend(seen_ms - goals_ms[match_of(user_id, matches=matches)] for user_id in settled)
            done = set(settled)
            users = [user_id for user_id in users if user_id not in done]
            if users:
                time.sleep(every_s)
        if users:
            raise TimeoutError(f"game stage: {len(users)} {what} answers never settled")
        return latencies

    latencies = until_settled(list(range(1, punters + 1, sample_every(punters))), SAMPLE_READ_S, "sampled punters'")
    until_settled(list(range(1, punters + 1)), CHECK_READ_S, "punters'")
    return latencies


def sample_every(punters: int) -> int:
    """One punter in how many is timed: every one in a small run, one in ``SAMPLE_EVERY`` in a
    large one."""
    return 1 if punters <= SAMPLE_ALL_UP_TO else SAMPLE_EVERY


def tree_rss_mib(pid: int) -> float:
    import psutil

    root = psutil.Process(pid)
    total = 0
    for proc in [root, *root.children(recursive=True)]:
        try:
            total += proc.memory_info().rss
        except psutil.NoSuchProcess:
            continue
    return total / 2**20


def bench_game(*, quick: bool = False, sizes: Sizes | None = None) -> dict[str, Any]:
    """The stage in a reducers process of its own (``bench.reducers.reducers_running``)."""
    from bench.common import log
    from bench.reducers import reducers_running

    size = sizes or Sizes(*(QUICK if quick else FULL))
    events = [FIRST_EVENT + i for i in range(size.matches)]
    with reducers_running("microbatch", log_name="bench-game.log", define=False) as running:
        client, producer = running.client, running.producer
        compilers = None if quick else CompilerLoad(running.process.pids).cores
        log("game: warm-up rounds until the reducers' JIT compilers have settled")
        warmed_s, warm_rounds, warm_cores = warm_up(client, producer, quick=quick, compilers=compilers)
        log(f"game: warm after {warmed_s:.0f} s, {warm_rounds} rounds (the compilers' cores: {warm_cores})")
        log(f"game: {size.matches} matches kick off")
        produce(
            producer,
            topics.game_events(),
            ((str(e).encode(), match_event(e, "kick_off", seq=1).encode()) for e in events),
        )
        questions = open_questions(client, events)
        records = answers_of(punters=size.punters, matches=size.matches, questions=questions)
        rss_before = tree_rss_mib(running.process.pid)
        log(f"game: {size.punters:,} punters answer ({len(records):,} answers)")
        measured_cores: dict[str, float] = {}
        if compilers is not None:
            compilers()  # from here
        taken, started, produced_at = answers_produced_and_taken(client, producer, records, timeout=600)
        if compilers is not None:
            measured_cores["answers"] = round(compilers(), 3)
        before_goals = last_batch(client)
        goals_ms: dict[int, int] = {}
        for event_id in events:
            goal = match_event(event_id, "score", seq=2, minute=5, side="home")
            goals_ms[event_id] = goal.at
            producer.produce(topics.game_events(), key=goal.key(), value=goal.encode())
        producer.flush(30)
        log("game: a goal in every match settles every punter's next-goal answer")
        latencies = settle_latencies(
            client, goals_ms=goals_ms, questions=questions, punters=size.punters, matches=size.matches, timeout=300
        )
        if compilers is not None:
            measured_cores["settle"] = round(compilers(), 3)
        rss_after = tree_rss_mib(running.process.pid)
        settle_batches = batch_durations(client, after_batch=before_goals)
    log(f"game: the settling batches' steps (ms): {settle_batches}")
    answers_busy = taken.busy_rate(since=produced_at)
    ceiling = bench_game_ceiling(quick=quick, sizes=size)
    least = bench_game_ceiling(quick=quick, sizes=size, least=True)
    ceiling_rate, least_rate = ceiling["game_ceiling_answers_per_s"], least["game_least_answers_per_s"]
    return {
        **ceiling,
        **least,
        "game_answers_vs_ceiling": round(answers_busy / ceiling_rate, 2) if answers_busy and ceiling_rate else None,
        "game_answers_vs_least": round(answers_busy / least_rate, 2) if answers_busy and least_rate else None,
        "game_punters": size.punters,
        "game_matches": size.matches,
        "game_answers": len(records),
        "game_answers_per_s": round(len(records) / taken.seconds),
        "game_answers_busy_per_s": answers_busy,
        "game_answers_produce_s": round(produced_at - started, 2),
        "game_answers_batches": [
            {"rows": b.rows, "ms": b.ms, "after_produced": b.started >= produced_at} for b in taken.batches if b.rows
        ],
        "game_settle_sampled": len(latencies),
        "game_settle_p50_ms": round(percentile(latencies, 0.5)),
        "game_settle_p99_ms": round(percentile(latencies, 0.99)),
        "game_settle_max_ms": round(max(latencies)),
        "game_state_rss_mib": round(rss_after),
        "game_state_rss_growth_mib": round(rss_after - rss_before),
        "game_settle_batches": settle_batches,
        "game_warmup_s": round(warmed_s),
        "game_warmup_rounds": warm_rounds,
        "game_warmup_compiler_cores": warm_cores,
        "game_compiler_cores": measured_cores,
    }


def bench_game_ceiling(*, quick: bool, sizes: Sizes, least: bool = False) -> dict[str, Any]:
    """The bare stateful query of the game's shape (bench/game_ceiling.py), or with ``least`` the
    same query doing the least any game must do with an answer (``--least``), in a process and
    namespace of its own, with the reducers' session, warmed as the game is: rounds of the
    stage's answers (``sizes``), each produced once the one before was taken, until its JIT
    compilers have settled (``rounds_until_warm``), then ``CEILING_MEASURED`` rounds more.
    ``game_ceiling_answers_per_s`` (``game_least_answers_per_s``): their median busy rate, taken as
    the game's (``Taken.busy_rate``)."""
    from django.conf import settings

    from bench.common import log, namespace
    from bench.harness import ROOT, Process, python, wait_until
    from bench.reducers import reducer_env
    from odds.core.kafka import producer_create
    from store.clients import redis_client

    query = "game_ceiling"
    stage = "game_least" if least else "game_ceiling"
    events = [FIRST_EVENT + i for i in range(sizes.matches)]
    # Neither query looks the questions up: the answers need no questions that exist.
    first = {e: e * game.QUESTIONS_PER_EVENT for e in events}
    questions = {e: {game.NEXT_GOAL: first[e] + 1, game.CARD: first[e] + 2} for e in events}
    with namespace() as ns:
        client = redis_client(settings.REDIS_URL)
        process = Process(
            query,
            python("-m", "bench.game_ceiling", *(["--least"] if least else [])),
            env={**os.environ, **reducer_env(ns, "microbatch")},
            log=ROOT / "var" / "log" / f"bench-{stage.replace('_', '-')}.log",
        ).start()
        what = "the least game's query" if least else "the game's bare query"
        try:
            wait_until(lambda: client.get(keys.heartbeat(query)), timeout=180, what=f"{what} to start")
            producer = producer_create()

            def answers_round(round_: int) -> int | None:
                records = answers_in(range(1, sizes.punters + 1), events, questions, seed=round_)
                taken, _, produced_at = answers_produced_and_taken(client, producer, records, timeout=300, query=query)
                return taken.busy_rate(since=produced_at)

            readings: list[float] = []
            warm_rounds = 0
            if not quick:
                log(f"game: {what} takes rounds of the answers until its compilers have settled")
                _, warm_rounds, readings = rounds_until_warm(
                    answers_round, quick=False, compilers=CompilerLoad(process.pids).cores
                )
            measured = (answers_round(warm_rounds + i) for i in range(CEILING_MEASURED[quick]))
            rates = [rate for rate in measured if rate is not None]
        finally:
            process.stop()
    return {
        f"{stage}_answers_per_s": round(percentile([float(r) for r in rates], 0.5)) if rates else None,
        f"{stage}_rounds_per_s": rates,
        f"{stage}_warmup_rounds": warm_rounds,
        f"{stage}_warmup_compiler_cores": readings,
    }


def markdown_lines(results: dict[str, Any]) -> list[str]:
    """The stage's line under the table of docs/performance.md."""
    if results.get("game_settle_p99_ms") is None:
        return []
    r = results
    return [
        "",
        f"Game stage: {r['game_punters']:,} punters in {r['game_matches']} matches, {r['game_answers']:,} answers; "
        f"settlement p50 {r['game_settle_p50_ms']} ms, max {r['game_settle_max_ms']} ms; the answers grew the "
        f"reducers process by {r['game_state_rss_growth_mib']} MiB.{_warmup_line(r)}",
    ]


def _warmup_line(r: dict[str, Any]) -> str:
    if "game_warmup_rounds" not in r:
        return ""  # a run from before the stage warmed up
    cores = r.get("game_compiler_cores") or {}
    read = (
        f"; the JIT compilers took {cores['answers']:.2f} of a core over the answers and {cores['settle']:.2f} "
        "over the goal"
        if {"answers", "settle"} <= cores.keys()
        else ""
    )
    rounds = r["game_warmup_rounds"]
    return f" Measured warm, after {r['game_warmup_s']} s of warm-up ({rounds} round{'s' * (rounds != 1)}){read}."


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--punters", type=int, default=FULL[0])
    parser.add_argument("--matches", type=int, default=FULL[1])
    args = parser.parse_args(argv)
    django_ready()
    print(json.dumps(bench_game(sizes=Sizes(args.punters, args.matches)), indent=2))


if __name__ == "__main__":
    main()


def game_ratio(results: dict[str, Any]) -> None:
    """The game's answers into state against the micro-batch reducers' price updates, same run,
    each taken the same way: records over the time the batches that started once they were all
    produced were busy (``game_answers_vs_reducers``); and the answers' rate over the wall clock
    from their first record produced against the same updates (``game_answers_wall_vs_reducers``).
    Beside them, what the same shape takes with no game in it (``game_ceiling_vs_reducers``) and
    with the least a game must do (``game_least_vs_reducers``): the most a game can reach."""
    updates = results.get("reducer_microbatch_updates_per_s")
    for key, answers in (
        ("game_answers_vs_reducers", results.get("game_answers_busy_per_s")),
        ("game_answers_wall_vs_reducers", results.get("game_answers_per_s")),
        ("game_ceiling_vs_reducers", results.get("game_ceiling_answers_per_s")),
        ("game_least_vs_reducers", results.get("game_least_answers_per_s")),
    ):
        results[key] = round(answers / updates, 2) if answers and updates else None
