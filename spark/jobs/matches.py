"""Match-state reducer: match-state snapshots → latest state per event in Redis, published on
the event's public channel (every page showing the event follows it) and sent to the subscriber
channels that show the event's markets.

Each record is a full snapshot of one event, so a batch keeps the newest per event; the store
script applies it only when its sequence is higher than the stored one, so replays and
duplicates change nothing.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import redis
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming import StreamingQuery

from reducers import topics
from reducers.frames import MatchMessage
from reducers.matchstate import ConflatedMatch, conflate_matches, match_message
from reducers.queries import MATCHES
from reducers.schemas import InvalidRecord, MatchStateUpdate, decode_match_state
from spark.faults import failure_of
from spark.jobs.query import dead_letters_of, start_query
from spark.sinks.dead_letter import DeadLetters, Rejects
from store.channels import ChannelStore, FanOutJournal
from store.clients import redis_client
from store.matches import MatchStore

log = logging.getLogger("spark.jobs.matches")
QUERY_NAME = MATCHES.name


class MatchBatchProcessor:
    def __init__(
        self, *, redis_client: redis.Redis, dead_letters: DeadLetters, channels: ChannelStore | None = None
    ) -> None:
        self._redis = redis_client
        self._matches = MatchStore(redis_client)
        self._channels = channels or ChannelStore(redis_client)
        self._journal = FanOutJournal(self._channels, query=QUERY_NAME, of="matches")
        self._dead_letters = dead_letters

    def process_rows(self, rows: list[Any]) -> dict[str, int]:
        rejects = Rejects(
            sink=self._dead_letters,
            redis_client=self._redis,
            source_topic=topics.match_states(),
            counter_prefix="match_",
        )
        good: list[tuple[MatchStateUpdate, int]] = []
        for row in rows:
            try:
                good.append((decode_match_state(row["value"]), int(row["kafka_ts"])))
            except InvalidRecord as exc:
                rejects.add(row, exc.reason, exc.detail)
            except Exception as exc:  # anything else a record can raise is that record's fault
                rejects.add(row, *failure_of(exc, stage="decode"))
        rejected = len(rejects)
        rejects.flush()
        items = conflate_matches(good)
        with self._journal.batch() as journal:
            applied = self._apply(items, journal=journal)
            frames = self._channels.fan_out_matches(applied, journal=journal)
        return {
            "records": len(rows),
            "rejected": rejected,
            "events": len(items),
            "applied": len(applied),
            "frames": frames,
        }

    def _apply(self, items: list[ConflatedMatch], *, journal: str) -> dict[int, MatchMessage]:
        reducer_ts = int(time.time() * 1000)
        messages = [match_message(item=item, reducer_ts=reducer_ts) for item in items]
        applied = self._matches.apply(messages, journal=journal)
        return {m["event_id"]: m for m, stored in zip(messages, applied, strict=True) if stored}

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        counts = self.process_rows(batch.collect())
        if counts["records"]:
            log.info("batch %s: %s", batch_id, counts)


def start(spark: SparkSession, *, bootstrap: str, redis_url: str, checkpoint_dir: str) -> StreamingQuery:
    processor = MatchBatchProcessor(
        redis_client=redis_client(redis_url), dead_letters=dead_letters_of(MATCHES, bootstrap=bootstrap)
    )
    return start_query(
        spark, MATCHES, process=processor, bootstrap=bootstrap, redis_url=redis_url, checkpoint_dir=checkpoint_dir
    )
