"""Command reducer: stream commands (subscribe, begin, change, unsubscribe) → channel state in Redis.

Every reducer reads every command (the command topic fans out to all of them). Commands are
keyed by channel id, so one channel's commands keep their order.
"""

from __future__ import annotations

import logging
from typing import Any

import redis
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming import StreamingQuery

from reducers import topics
from reducers.queries import COMMANDS
from reducers.schemas import InvalidRecord
from reducers.subscriptions import decode_command
from spark.faults import failure_of
from spark.jobs.query import dead_letters_of, start_query
from spark.sinks.dead_letter import DeadLetters, Rejects
from store.channels import ChannelStore
from store.clients import redis_client

log = logging.getLogger("spark.jobs.commands")
QUERY_NAME = COMMANDS.name


class CommandBatchProcessor:
    """Applies a batch of commands in order; a command that cannot be decoded or applied is a
    dead letter, and the commands after it are applied as usual."""

    def __init__(self, *, redis_client: redis.Redis, dead_letters: DeadLetters) -> None:
        self._redis = redis_client
        self._channels = ChannelStore(redis_client)
        self._dead_letters = dead_letters

    def process_rows(self, rows: list[Any]) -> dict[str, int]:
        outcomes: dict[str, int] = {}
        rejects = Rejects(
            sink=self._dead_letters, redis_client=self._redis, source_topic=topics.commands(), counter_prefix="command_"
        )
        for row in sorted(rows, key=lambda r: (r["partition"], r["offset"])):
            outcome = "rejected"
            try:
                command = decode_command(row["value"])
            except InvalidRecord as exc:
                rejects.add(row, exc.reason, exc.detail)
            except Exception as exc:  # anything else a record can raise is that record's fault
                rejects.add(row, *failure_of(exc, stage="decode"))
            else:
                try:
                    outcome = self._channels.apply_command(command)
                except Exception as exc:
                    rejects.add(row, *failure_of(exc, stage="apply"))
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
        rejects.flush()
        return outcomes

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        outcomes = self.process_rows(batch.collect())
        if outcomes:
            log.info("batch %s: %s", batch_id, outcomes)


def start(spark: SparkSession, *, bootstrap: str, redis_url: str, checkpoint_dir: str) -> StreamingQuery:
    processor = CommandBatchProcessor(
        redis_client=redis_client(redis_url), dead_letters=dead_letters_of(COMMANDS, bootstrap=bootstrap)
    )
    return start_query(
        spark, COMMANDS, process=processor, bootstrap=bootstrap, redis_url=redis_url, checkpoint_dir=checkpoint_dir
    )
