"""The most Spark does with the predictor game's shape on this machine: the ceiling of the game's
answers.

``python -m bench.game_ceiling`` runs one streaming query with the game query's source and spread
(``spark.jobs.game.bucket_spread``: both topics read as one stream, an answer in its punter's
bucket, the buckets balanced over the state's partitions as a new checkpoint balances them) and
session, and hands each bucket's batch to a stateful processor in Python
(``transformWithStateInPandas``, the RocksDB state store, checkpointed) that does the least a
bucket can: it gets and updates its two values (a count where the game keeps its book and its
punters) and yields one row, its count of records. No decoding, no game step, no Redis from the
workers. The driver adds the counts to ``keys.bench_rows(QUERY_NAME)`` so the benchmark knows
when the answers are taken; its progress reports go to Redis like the reducers' (query name
``game_ceiling``).

``python -m bench.game_ceiling --least`` runs the same query with the least any game must do with
an answer in its processor instead (``LeastProcessor``): decode and check each answer as the game
does (``reducers.schemas.decode_game_answer``) and write the punter's changed state to Redis, one
value a punter in one round trip a bucket, as the game's workers write theirs. It keeps a count
where the game keeps its book and its punters, and settles nothing. What it takes is the most a
game of this shape can take on this machine.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Iterator
from typing import Any

import pandas as pd
from pyspark.sql import DataFrame
from pyspark.sql import types as T
from pyspark.sql.streaming import StatefulProcessor, StatefulProcessorHandle

from bench.spark_ceiling import run_until_stopped
from reducers.schemas import InvalidRecord, decode_game_answer
from spark.config import config
from spark.jobs.game import BucketLayout, bucket_spread
from spark.progress import RedisProgressListener
from spark.session import build_session
from store import keys, packed
from store.clients import redis_client
from store.game import state_writes

QUERY_NAME = "game_ceiling"
log = logging.getLogger("bench.game_ceiling")
_COUNT = T.StructType([T.StructField("count", T.LongType())])
OUTPUT = T.StructType([T.StructField("bucket", T.IntegerType()), T.StructField("rows", T.LongType())])


class CountingProcessor(StatefulProcessor):
    """A bucket's batch counted: its two values got and updated, one row out."""

    def init(self, handle: StatefulProcessorHandle) -> None:
        self._book = handle.getValueState("book", _COUNT)
        self._punters = handle.getValueState("punters", _COUNT)

    def handleInputRows(self, key: Any, rows: Iterator[pd.DataFrame], timerValues: Any) -> Iterator[pd.DataFrame]:  # noqa: N802, N803  # PySpark's names
        count = sum(len(frame) for frame in rows)
        for state in (self._book, self._punters):
            held = state.get()
            state.update(((held[0] if held else 0) + count,))
        yield pd.DataFrame({"bucket": [int(key[0])], "rows": [count]})

    def close(self) -> None:
        pass


class LeastProcessor(CountingProcessor):
    """The least a game's bucket must do with its answers: each decoded and checked, and each
    answering punter's state written to Redis (here the answer as it came: a punter's state is
    about as long), in one round trip. Its two values are counts, as the bare query's."""

    def init(self, handle: StatefulProcessorHandle) -> None:
        super().init(handle)
        self._client = redis_client(config().redis_url)
        self._prefix = keys.game_punter_prefix().encode()

    def handleInputRows(self, key: Any, rows: Iterator[pd.DataFrame], timerValues: Any) -> Iterator[pd.DataFrame]:  # noqa: N802, N803  # PySpark's names
        states = least_states(rows, self._prefix)
        packed.execute(self._client, state_writes(states))
        for state in (self._book, self._punters):
            held = state.get()
            state.update(((held[0] if held else 0) + len(states),))
        yield pd.DataFrame({"bucket": [int(key[0])], "rows": [len(states)]})


def least_states(frames: Iterator[pd.DataFrame], prefix: bytes) -> list[tuple[bytes, bytes]]:
    """Each answer in ``frames`` that decodes, as its punter's key (``prefix`` and the punter's id)
    and its value; the records that do not decode are skipped."""
    states: list[tuple[bytes, bytes]] = []
    for frame in frames:
        for key, value in zip(frame["key"].tolist(), frame["value"].tolist(), strict=True):
            try:
                answer = decode_game_answer(key, value)
            except InvalidRecord:
                continue
            states.append((prefix + b"%d" % answer.user_id, value))
    return states


def ceiling_plan(spark: Any, *, bootstrap: str, layout: BucketLayout, least: bool = False) -> DataFrame:
    """The game's source and spread into ``CountingProcessor`` (the bare query), or into
    ``LeastProcessor`` (``least``)."""
    processor = LeastProcessor() if least else CountingProcessor()
    return (
        bucket_spread(spark, bootstrap=bootstrap, layout=layout)
        .groupBy("bucket")
        .transformWithStateInPandas(
            statefulProcessor=processor, outputStructType=OUTPUT, outputMode="Update", timeMode="None"
        )
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--least", action="store_true", help="the least a game must do with each answer")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    settings = config()
    client = redis_client(settings.redis_url)
    spark = build_session("sportsbook-bench-game-ceiling")
    spark.streams.addListener(RedisProgressListener(client, QUERY_NAME))
    layout = BucketLayout(settings.game_buckets, settings.shuffle_partitions)

    def batch(frame: DataFrame, batch_id: int) -> None:
        rows = sum(row["rows"] for row in frame.collect())
        if rows:
            client.incrby(keys.bench_rows(QUERY_NAME), rows)

    plan = ceiling_plan(spark, bootstrap=settings.kafka_bootstrap, layout=layout, least=args.least)
    run_until_stopped(plan, batch, name=QUERY_NAME, output_mode="update")
    spark.stop()


if __name__ == "__main__":
    main()
