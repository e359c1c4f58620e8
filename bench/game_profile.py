"""Where a game settlement's time goes, without Spark: the game stage's punters and answers run
through the same code the game query runs, phase by phase, each timed and profiled.

- ``step``: every bucket's ``GameProcessor`` work in one Python process, as Spark's workers do it
  for the answers batch and then for the goal (``reducers.game.game_step`` over the bucket's
  ``PunterTable``, the table encoded for the state store, the punters' states encoded);
- ``write``: every bucket's punters written to Redis (``store.game.write_punters``: states,
  leaderboard points, the lookup of their game channels), as the workers write them;
- ``arrow``: the rows every bucket hands the driver, as the one Arrow table the driver receives;
- ``sink``: the driver's ``GameSink.process`` of that table (``store.game.GameStore.publish_batch``:
  the questions, the leaderboards' tops and ranks, the game channels' deltas).

Redis is written in a namespace of the profile's own that is deleted afterwards.

The game stage's figure (``game_settle_p99_ms``) is these phases plus what Spark adds (the
exchange to the buckets, the state store, Arrow between the JVM and Python, scheduling).

    .venv/bin/python -m bench.game_profile [--punters 100000] [--matches 10] [--buckets 64]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa

from reducers.game import Book

PROFILE_LINES = 12


def _timed(name: str, work: Callable[[], Any], report: dict[str, Any]) -> Any:
    profile = cProfile.Profile()
    started = time.perf_counter()
    result = profile.runcall(work)
    report[f"{name}_ms"] = round((time.perf_counter() - started) * 1000, 1)
    text = io.StringIO()
    pstats.Stats(profile, stream=text).sort_stats("cumulative").print_stats(PROFILE_LINES)
    report[f"{name}_profile"] = [
        line.strip() for line in text.getvalue().splitlines() if line.strip() and line.strip()[0].isdigit()
    ]
    return result


def profile_game(*, punters: int, matches: int, buckets: int) -> dict[str, Any]:
    os.environ.setdefault("SPORTSBOOK_NAMESPACE", f"gameprof{uuid.uuid4().hex[:8]}")
    from bench.game import FIRST_EVENT, answers_of, match_event
    from reducers import game
    from reducers.schemas import decode_game_answer
    from spark.jobs.game import OUTPUT, GameSink, PunterWriter, bucket_batch, written_rows
    from store.game import PunterKeys

    events = [FIRST_EVENT + i for i in range(matches)]
    book = Book()
    for event_id in events:
        book = game.book_apply(book, match_event(event_id, "kick_off", seq=1)).book
    questions = {
        event_id: {q.kind: q.id for q in book.of_event(event_id) if q.kind in (game.NEXT_GOAL, game.CARD)}
        for event_id in events
    }
    records = answers_of(punters=punters, matches=matches, questions=questions)
    by_bucket: dict[int, list[Any]] = {}
    for key, value in records:
        answer = decode_game_answer(key, value)
        by_bucket.setdefault(answer.user_id % buckets, []).append(answer)
    tables: dict[int, bytes | None] = dict.fromkeys(range(buckets))  # each bucket's stored table
    books = dict.fromkeys(range(buckets), book)
    goals = [match_event(event_id, "score", seq=2, minute=5, side="home") for event_id in events]
    report: dict[str, Any] = {"punters": punters, "matches": matches, "buckets": buckets, "answers": len(records)}

    def run_buckets(answers: dict[int, list[Any]], events_: list[Any]) -> list[Any]:
        results = []
        for bucket in range(buckets):
            result = bucket_batch(  # as the query's processor runs a bucket
                books[bucket], tables[bucket], events_, answers.get(bucket, []), bucket=bucket
            )
            books[bucket] = result.book
            if result.encoded is not None:
                tables[bucket] = result.encoded
            results.append(result)
        return results

    writer = PunterWriter(redis_url=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"), names=PunterKeys.current())
    client = writer.client()

    def write(results: list[Any]) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = []
        for result in results:
            rows.extend(result.rows + written_rows(writer.write(result.punters), result.news))
        return rows

    try:
        write(_timed("answers_step", lambda: run_buckets(by_bucket, []), report))
        results = _timed("settle_step", lambda: run_buckets({}, goals), report)
        rows = _timed("settle_write", lambda: write(results), report)
        table = _timed(
            "settle_arrow",
            lambda: pa.Table.from_pylist([{f.name: row.get(f.name) for f in OUTPUT.fields} for row in rows]),
            report,
        )
        sink = GameSink(redis_client=client, answers=_Discard(), events=_Discard())
        counts = _timed("settle_sink", lambda: sink.process(table, 1), report)
        report["settle_sink_counts"] = counts
    finally:
        namespace = os.environ["SPORTSBOOK_NAMESPACE"]
        for keys_ in _batches(client.scan_iter(match=f"{namespace}:*", count=10_000)):
            client.delete(*keys_)
    report["settle_rows"] = len(rows)
    return report


class _Discard:
    """A dead-letter sink for a run that refuses nothing (``spark.sinks.dead_letter.DeadLetters``)."""

    def send(
        self,
        *,
        key: bytes | None,
        value: bytes | None,
        reason: str,
        detail: str,
        origin: str,
        headers: Sequence[tuple[str, bytes]] = (),
    ) -> None:
        raise AssertionError(f"the profile's records are all valid, yet one was refused: {reason} {detail}")

    def flush(self, timeout: float = 30.0) -> None:
        return None


def _batches(items: Any, size: int = 5000) -> Any:
    batch: list[Any] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--punters", type=int, default=100_000)
    parser.add_argument("--matches", type=int, default=10)
    parser.add_argument("--buckets", type=int, default=64)
    args = parser.parse_args(argv)
    print(json.dumps(profile_game(punters=args.punters, matches=args.matches, buckets=args.buckets), indent=2))


if __name__ == "__main__":
    main()
