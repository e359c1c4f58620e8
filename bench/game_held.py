"""A game bucket's batch with the punters it holds but that are not playing: what a live batch
costs as a book's punters add up over the days (no Spark: one bucket's work as its processor does
it, ``spark.jobs.game.bucket_batch`` over its stored table).

A bucket holds its share of ``HELD`` idle punters (their matches let go, their day points and
counters kept) and ``LIVE`` punters of one live match, who have answered its next-goal question.
Then, each timed ``ROUNDS`` times from the same stored table, the median:

- ``small``: a batch of ``SMALL`` of the live punters answering the card question;
- ``all``: a batch of every live punter answering it;
- ``goal``: the goal that settles every live punter's answer.

``game_held_small_vs_none``: the small batch with a million punters held, against with none (1.0:
the idle punters cost nothing).

    .venv/bin/python -m bench.game_held
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.common import median
from bench.game import match_event
from reducers import game
from reducers.game import Book, PunterTable, book_apply
from reducers.schemas import GameAnswer, GameEvent

# The stage's bucket count (``SPARK_GAME_BUCKETS``' default) and punters held over all of them.
BUCKETS = 64
HELD = (0, 250_000, 1_000_000)
LIVE = 1_600  # a bucket's share of the game stage's 100,000 punters
SMALL = 30
ROUNDS = 7
EVENT = 7
T0 = 1_795_000_000_000
TARGETS = [
    (
        "game_held_small_vs_none",
        "A game bucket's small live batch, a million punters held ÷ none held (no Spark)",
        "ratio",
        None,
    ),
]


def _event(kind: str, seq: int, minute: int) -> GameEvent:
    return match_event(
        EVENT, kind, seq=seq, minute=minute, side="home" if kind == "score" else "", at=T0 + minute * 60_000
    )


def _answer(user: int, question: game.Question, choice: str, ts: int) -> GameAnswer:
    return GameAnswer(
        answer_id=f"{user:010d}{question.id:010d}{ts:016d}",
        user_id=user,
        event_id=EVENT,
        question_id=question.id,
        choice=choice,
        ts=ts,
    )


def _median_ms(work: Callable[[], Any]) -> float:
    times = []
    for _ in range(ROUNDS):
        started = time.perf_counter()
        work()
        times.append((time.perf_counter() - started) * 1000)
    return round(median(times), 2)


def bucket_costs(held: int) -> dict[str, float]:
    """One bucket's batches (ms) holding ``held`` idle punters and ``LIVE`` live ones."""
    from spark.jobs.game import bucket_batch

    book = book_apply(Book(), _event("kick_off", 1, 0)).book
    goal = next(q for q in book.questions.values() if q.kind == game.NEXT_GOAL)
    card = next(q for q in book.questions.values() if q.kind == game.CARD)
    table = PunterTable()
    for user in range(1_000_000, 1_000_000 + held):
        table.put(
            game.Punter(
                user_id=user,
                streak=user % 3,
                best_streak=3,
                answered=12,
                correct=5,
                days={"2026-11-17": 40, "2026-11-18": 10},
            )
        )
    idle = table.encode()
    del table  # as a worker holds the table: stored, not read
    first = bucket_batch(
        book,
        idle,
        [],
        [_answer(u, goal, ("home", "away")[u % 2], T0 + u) for u in range(1, LIVE + 1)],
        bucket=1,
    )
    stored, book = first.encoded, first.book
    del first, idle
    gc.collect()
    small = [_answer(u, card, "yes", T0 + 1_000 + u) for u in range(1, SMALL + 1)]
    every = [_answer(u, card, "yes", T0 + 1_000 + u) for u in range(1, LIVE + 1)]
    scored = [_event("score", 2, 5)]
    return {
        "small": _median_ms(lambda: bucket_batch(book, stored, [], small, bucket=1)),
        "all": _median_ms(lambda: bucket_batch(book, stored, [], every, bucket=1)),
        "goal": _median_ms(lambda: bucket_batch(book, stored, scored, [], bucket=1)),
        "stored_kib": round(len(stored or b"") / 1024),
    }


def bench_game_held() -> dict[str, Any]:
    """Each count held measured in a process of its own (in one, each table's batches ran on a
    heap the tables before had shaped, and their order moved the figures by a third)."""
    costs = {}
    for held in HELD:
        out = subprocess.run(
            [sys.executable, "-m", "bench.game_held", "--bucket", str(held // BUCKETS)],
            check=True,
            capture_output=True,
            text=True,
            cwd=Path(__file__).resolve().parent.parent,
        ).stdout
        costs[held] = json.loads(out)
    return {
        "game_held_buckets": BUCKETS,
        "game_held_live_per_bucket": LIVE,
        "game_held_bucket_ms": {str(held): cost for held, cost in costs.items()},
        "game_held_small_vs_none": round(costs[HELD[-1]]["small"] / costs[0]["small"], 2),
    }


def markdown_lines(results: dict[str, Any]) -> list[str]:
    costs = results.get("game_held_bucket_ms")
    if not costs:
        return []
    parts = [
        f"{int(held):,} held: {c['small']} ms small, {c['all']} ms all, {c['goal']} ms goal "
        f"({c['stored_kib']:,} KiB stored)"
        for held, c in costs.items()
    ]
    return [
        "",
        f"Game bucket with idle punters held (no Spark, one bucket of {results['game_held_buckets']}, "
        f"{results['game_held_live_per_bucket']:,} live punters; the median batch): " + "; ".join(parts) + ".",
    ]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bucket", type=int, help="one bucket holding this many idle punters (JSON of its costs)")
    args = parser.parse_args()
    if args.bucket is not None:
        bucket_costs(args.bucket)  # warm: a process's first batches pay for being first
        print(json.dumps(bucket_costs(args.bucket)))
    else:
        print(json.dumps(bench_game_held(), indent=1))
