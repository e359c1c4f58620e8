"""Liability reducer: bet events → liability per selection in Redis (adder/subtractor).

Each bet event carries a unique ``event_id``; the script marks it seen and applies its deltas
in one step, so redelivered events (at-least-once) are counted exactly once.
"""

from __future__ import annotations

import logging
from typing import Any

import redis
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming import StreamingQuery

from reducers import keys, topics
from reducers.liability import SEEN_TTL_S, liability_deltas
from reducers.queries import LIABILITY
from reducers.schemas import InvalidRecord, decode_bet_event
from spark.faults import failure_of
from spark.jobs.query import dead_letters_of, start_query
from spark.sinks.dead_letter import DeadLetters, Rejects
from store.clients import redis_client

log = logging.getLogger("spark.jobs.liability")
QUERY_NAME = LIABILITY.name

APPLY_ONCE = """
if redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[1]) == false then return 0 end
local n = (#KEYS - 2)
for i = 1, n do
  local pence = tonumber(ARGV[1 + i * 3 - 2])
  redis.call('HINCRBY', KEYS[1 + i], 'pence', pence)
  redis.call('HINCRBY', KEYS[1 + i], 'bets', tonumber(ARGV[1 + i * 3 - 1]))
  redis.call('ZINCRBY', KEYS[#KEYS], pence, ARGV[1 + i * 3])
end
return 1
"""


class LiabilityProcessor:
    def __init__(self, *, redis_client: redis.Redis, dead_letters: DeadLetters) -> None:
        self._redis = redis_client
        self._script = redis_client.register_script(APPLY_ONCE)
        self._dead_letters = dead_letters

    def process_rows(self, rows: list[Any]) -> dict[str, int]:
        counts = {"applied": 0, "duplicates": 0, "rejected": 0}
        rejects = Rejects(
            sink=self._dead_letters, redis_client=self._redis, source_topic=topics.bets(), counter_prefix="bet_"
        )
        pipe = self._redis.pipeline(transaction=False)
        queued: list[Any] = []
        for row in sorted(rows, key=lambda r: (r["partition"], r["offset"])):
            try:
                event = decode_bet_event(row["value"])
                deltas = liability_deltas(event)
            except InvalidRecord as exc:
                counts["rejected"] += 1
                rejects.add(row, exc.reason, exc.detail)
                continue
            except Exception as exc:  # anything else a record can raise is that record's fault
                counts["rejected"] += 1
                rejects.add(row, *failure_of(exc, stage="decode"))
                continue
            args: list[Any] = [SEEN_TTL_S]
            for delta in deltas:
                args.extend([delta.pence, delta.bets, delta.selection_id])
            self._script(
                keys=[
                    keys.bet_event_seen(event.event_id),
                    *(keys.liability(d.selection_id) for d in deltas),
                    keys.liability_index(),
                ],
                args=args,
                client=pipe,
            )
            queued.append(row)
        if queued:
            # Each script's reply on its own: one record's error reply must not fail the others.
            for row, applied in zip(queued, pipe.execute(raise_on_error=False), strict=True):
                if isinstance(applied, Exception):
                    counts["rejected"] += 1
                    rejects.add(row, *failure_of(applied, stage="apply"))
                else:
                    counts["applied" if int(applied) else "duplicates"] += 1
        rejects.flush()
        return counts

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        counts = self.process_rows(batch.collect())
        if any(counts.values()):
            log.info("batch %s: %s", batch_id, counts)


def start(spark: SparkSession, *, bootstrap: str, redis_url: str, checkpoint_dir: str) -> StreamingQuery:
    processor = LiabilityProcessor(
        redis_client=redis_client(redis_url), dead_letters=dead_letters_of(LIABILITY, bootstrap=bootstrap)
    )
    return start_query(
        spark, LIABILITY, process=processor, bootstrap=bootstrap, redis_url=redis_url, checkpoint_dir=checkpoint_dir
    )
