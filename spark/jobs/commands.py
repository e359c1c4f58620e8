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

from reducers import keys, topics
from reducers.schemas import InvalidRecord
from reducers.subscriptions import decode_command
from spark.sinks.channels import ChannelStore
from spark.sources import env, kafka_stream

log = logging.getLogger("spark.jobs.commands")
QUERY_NAME = "commands"


class CommandBatchProcessor:
    def __init__(self, *, redis_client: redis.Redis) -> None:
        self._redis = redis_client
        self._channels = ChannelStore(redis_client)

    def process_rows(self, rows: list[Any]) -> dict[str, int]:
        outcomes: dict[str, int] = {}
        for row in sorted(rows, key=lambda r: (r["partition"], r["offset"])):
            try:
                outcome = self._channels.apply_command(decode_command(row["value"]))
            except InvalidRecord as exc:
                log.warning("rejected command at %s/%s: %s", row["partition"], row["offset"], exc)
                self._redis.hincrby(keys.counter("dead_letters"), f"command_{exc.reason}", 1)
                outcome = "rejected"
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
        return outcomes

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        outcomes = self.process_rows(batch.collect())
        if outcomes:
            log.info("batch %s: %s", batch_id, outcomes)


def start(spark: SparkSession, *, bootstrap: str, redis_url: str, checkpoint_dir: str) -> StreamingQuery:
    processor = CommandBatchProcessor(redis_client=redis.Redis.from_url(redis_url))
    return (
        kafka_stream(spark, topic=topics.commands(), bootstrap=bootstrap, starting_offsets="latest")
        .writeStream.queryName(QUERY_NAME)
        .option("checkpointLocation", checkpoint_dir)
        .foreachBatch(processor)
        .trigger(processingTime=env("SPARK_COMMANDS_TRIGGER", "0 seconds"))
        .start()
    )
