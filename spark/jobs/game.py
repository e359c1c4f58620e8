"""Game reducer: the predictor game's match events and punters' answers → each punter's game
state in Spark's state store → questions, punters' states, leaderboards and frames in Redis.

Seed 000's third variation on Spark. The answer topic is the data role: keyed by punter, each
punter's answers in one partition. The match-event topic is the command role: every bucket reads
it whole. The query reads both topics in one Kafka source; an answer goes to its punter's bucket
(a hash of the record's key, the punter's id), and every event record is copied to every bucket.
``transformWithStateInPandas`` groups the batch by bucket and keeps, per bucket, two values in
Spark's state store (the RocksDB provider, checkpointed with the query): the bucket's copy of the
question book and the bucket's punters (``reducers.game.PunterTable``). Each bucket's batch is
``reducers.game.game_step``. The bucket writes the punters it changed to Redis itself (their
states and leaderboard points, ``store.game.write_punters``: a goal changes every punter of its
match, and the workers share that work instead of handing it all to the driver). Its output rows
are what the driver still needs: the changed punters that have a game channel, a summary (how
many punters, which events' leaderboards moved), the questions from bucket 0 (whose copy of the
book is every bucket's) and the records it could not decode. The driver writes the questions,
the leaderboards' tops and ranks and fans the deltas out to the game channels
(``store.game.GameStore.publish_batch``).

Exactly once: the state moves once per batch (a batch replayed after a crash starts from the
state of the batch before and computes the same output), answers carry their id (the same record
read twice counts once) and events their sequence; the writes to Redis are the new values (a
replay writes them again, whether a worker or the driver made them), so a settlement never
scores twice. The driver's replication wait (``spark.sinks.replicated``) covers the workers'
writes too: they were made before its mark.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Protocol

import orjson
import pandas as pd
import redis
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.streaming import StatefulProcessor, StatefulProcessorHandle, StreamingQuery

from reducers import topics
from reducers.game import (
    Book,
    News,
    PunterTable,
    Step,
    board_points,
    book_from_json,
    book_to_json,
    game_step,
    question_frame,
)
from reducers.queries import GAME
from reducers.schemas import GameAnswer, GameEvent, InvalidRecord, decode_game_answer, decode_game_event
from spark.config import ConfigError, config
from spark.hashing import int_partition
from spark.jobs.query import gc_paused
from spark.sinks.dead_letter import DeadLetters, Rejects, dead_letter_sink
from spark.sinks.replicated import Replicated
from spark.sources import kafka_stream
from store.channels import ChannelStore
from store.clients import redis_client
from store.game import GameStore, PunterKeys, PunterOutput, Written, write_punters
from store.markets import replicas_acknowledge

log = logging.getLogger("spark.jobs.game")
QUERY_NAME = GAME.name

PUNTER = "punter"
SUMMARY = "summary"
QUESTION = "question"
REJECT = "reject"
# What a bucket's batch hands the driver: one row per changed punter with a game channel (``doc``
# its state, ``news``, ``channels`` its channels), one summary of the punters it wrote (``doc``:
# how many, the day of each event whose leaderboard moved, the news by kind), one per changed
# question (bucket 0 only; ``doc`` the question) and one per record it could not decode (its
# origin, key and value, and why).
OUTPUT = T.StructType(
    [
        T.StructField("kind", T.StringType()),
        T.StructField("user", T.LongType()),
        T.StructField("doc", T.BinaryType()),
        T.StructField("news", T.BinaryType()),
        T.StructField("channels", T.BinaryType()),
        T.StructField("topic", T.StringType()),
        T.StructField("partition", T.IntegerType()),
        T.StructField("offset", T.LongType()),
        T.StructField("key", T.BinaryType()),
        T.StructField("value", T.BinaryType()),
        T.StructField("reason", T.StringType()),
        T.StructField("detail", T.StringType()),
    ]
)
OUTPUT_COLUMNS = [f.name for f in OUTPUT.fields]
# What punter, summary and question rows carry besides their kind (the rest is a refused record's).
ROW_COLUMNS = ["user", "doc", "news", "channels"]
_WHOLE = {f.name for f in OUTPUT.fields if isinstance(f.dataType, T.IntegerType | T.LongType)}
_BLOB = T.StructType([T.StructField("raw", T.BinaryType())])
# No boards moved (shared, read-only).
_NONE: Mapping[Any, Any] = MappingProxyType({})


def _decoded(
    frame: pd.DataFrame, *, events_topic: str, bucket: int
) -> tuple[list[GameEvent], list[GameAnswer], list[dict[str, Any]]]:
    """A bucket's records decoded: events in their order, answers, and the records refused (an
    event record's only in bucket 0, which every event reaches as every bucket does)."""
    events: list[tuple[int, GameEvent]] = []
    answers: list[GameAnswer] = []
    rejects: list[dict[str, Any]] = []
    columns = zip(
        frame["topic"].tolist(),
        frame["key"].tolist(),
        frame["value"].tolist(),
        frame["partition"].tolist(),
        frame["offset"].tolist(),
        strict=True,
    )
    for topic, key, value, partition, offset in columns:
        is_event = topic == events_topic
        try:
            if is_event:
                events.append((offset, decode_game_event(value)))
            else:
                answers.append(decode_game_answer(key, value))
        except InvalidRecord as exc:
            if not is_event or bucket == 0:
                rejects.append(_reject(topic, partition, offset, key, value, exc.reason, exc.detail))
        except Exception as exc:  # anything else a record can raise is that record's fault
            if not is_event or bucket == 0:
                rejects.append(
                    _reject(topic, partition, offset, key, value, "undecodable", f"{type(exc).__name__}: {exc}")
                )
    return [event for _, event in sorted(events, key=lambda pair: pair[0])], answers, rejects


def _reject(topic: str, partition: int, offset: int, key: Any, value: Any, reason: str, detail: str) -> dict[str, Any]:
    return {
        "kind": REJECT,
        "topic": topic,
        "partition": partition,
        "offset": offset,
        "key": key,
        "value": value,
        "reason": reason,
        "detail": detail[:500],
    }


class Writer(Protocol):
    """Writes a bucket's changed punters (``store.game.write_punters``)."""

    def write(self, punters: Sequence[PunterOutput]) -> Written: ...


# One Redis client per worker process and URL (a worker runs many buckets' batches).
_CLIENTS: dict[str, redis.Redis] = {}


@dataclass(frozen=True)
class PunterWriter:
    """Where a bucket writes its punters: Redis's URL and the keys, both decided on the driver
    (the workers are processes of their own, started before a test's namespace was chosen), and
    how many replicas must hold the writes before the bucket's batch is done (as the driver's
    ``Replicated`` waits for its own: a failover between a worker's write and the driver's wait
    must fail the batch, not lose the punters)."""

    redis_url: str
    names: PunterKeys
    replicas: int = 0
    replica_timeout_ms: int = 2000

    @classmethod
    def configured(cls, redis_url: str) -> PunterWriter:
        settings = config()
        return cls(
            redis_url=redis_url,
            names=PunterKeys.current(),
            replicas=settings.redis_replicas,
            replica_timeout_ms=settings.redis_replica_timeout_ms,
        )

    def client(self) -> redis.Redis:
        client = _CLIENTS.get(self.redis_url)
        if client is None:
            client = _CLIENTS[self.redis_url] = redis_client(self.redis_url)
        return client

    def write(self, punters: Sequence[PunterOutput]) -> Written:
        client = self.client()
        written = write_punters(client, punters, names=self.names)
        if punters:
            replicas_acknowledge(client, replicas=self.replicas, timeout_ms=self.replica_timeout_ms)
        return written


class GameProcessor(StatefulProcessor):
    """One bucket's batch (``reducers.game.game_step``) over the bucket's state: its copy of the
    question book and its punters, one value each. The punters it changed are written by
    ``writer`` before the batch's rows go to the driver."""

    def __init__(self, *, events_topic: str, writer: Writer) -> None:
        self._events_topic = events_topic
        self._writer = writer

    def init(self, handle: StatefulProcessorHandle) -> None:
        self._book = handle.getValueState("book", _BLOB)
        self._punters = handle.getValueState("punters", _BLOB)

    def handleInputRows(self, key: Any, rows: Iterator[pd.DataFrame], timerValues: Any) -> Iterator[pd.DataFrame]:  # noqa: N802, N803  # PySpark's names
        bucket = int(key[0])
        frame = pd.concat(list(rows), ignore_index=True)
        events, answers, rejects = _decoded(frame, events_topic=self._events_topic, bucket=bucket)
        stored_book = self._book.get()
        book = book_from_json(stored_book[0]) if stored_book else Book()
        stored_punters = self._punters.get() if answers or events else None
        result = bucket_batch(book, stored_punters[0] if stored_punters else None, events, answers, bucket=bucket)
        if result.book is not book:
            self._book.update((book_to_json(result.book),))
        if result.encoded is not None:
            self._punters.update((result.encoded,))
        with gc_paused():
            written = self._writer.write(result.punters)
        out = rejects + result.rows + written_rows(written, result.news)
        if out:
            # A bucket with nothing to tell the driver yields no frame: an empty one still costs
            # its building and its Arrow conversion, in every bucket that an event reaches.
            yield _frame(out)

    def close(self) -> None:
        pass


@dataclass
class BucketResult:
    """One bucket's batch: the book after it, the punter table encoded again when the step
    changed it (else ``None``), the punters it changed or told something (to write), how many
    news of each kind it made, and its question rows."""

    book: Book
    encoded: bytes | None
    punters: list[PunterOutput]
    news: dict[str, int]
    rows: list[dict[str, Any]]


def bucket_batch(
    book: Book, punters: bytes | None, events: Sequence[GameEvent], answers: Sequence[GameAnswer], *, bucket: int
) -> BucketResult:
    """One bucket's batch over its stored punter table (``punters``, encoded). The states the
    batch reads are decoded, stepped and encoded (``reducers.game.PunterTable``), up to hundreds
    of thousands of objects and none in a cycle, with the cyclic collector paused: it would
    otherwise walk them again and again. The table and the step are let go before collection
    resumes, so that its first pass does not walk them either (a tenth of a goal's settlement
    when they were still held)."""
    with gc_paused():
        table = PunterTable.decode(punters)
        step = game_step(book, table, events, answers)
        outputs, news = punter_outputs(step)
        pruned = table.prune(step.pruned)
        # The changed punters' states, as encoded for Redis, are the table's too (unless let go of
        # an event since).
        known = {p.user_id: p.doc for p in outputs if p.doc is not None and p.user_id not in pruned}
        encoded = table.encode(known) if step.changed or step.pruned else None
        rows = question_rows(step, bucket=bucket)
        result = BucketResult(step.book, encoded, outputs, news, rows)
        del table, step
    return result


def punter_outputs(step: Step) -> tuple[list[PunterOutput], dict[str, int]]:
    """Every punter the step changed or told something, as written to Redis, and how many news
    of each kind it made. A goal hands over every punter of its match: the points on the boards
    each punter moved on are read here from the state in hand (``reducers.game.board_points``)."""
    out: list[PunterOutput] = []
    counts: dict[str, int] = {}
    changed, told, moved, states = step.changed, step.news, step.moved, step.table.held
    dumps = orjson.dumps
    for user_id in sorted(told.keys() | changed):
        news = told.get(user_id, [])
        for item in news:
            counts[item.kind] = counts.get(item.kind, 0) + 1
        if user_id in changed:
            state = states[user_id]
            out.append(PunterOutput(user_id, dumps(state), news, board_points(state, moved.get(user_id, _NONE))))
        else:
            out.append(PunterOutput(user_id, None, news, _NONE))
    return out, counts


def question_rows(step: Step, *, bucket: int) -> list[dict[str, Any]]:
    """From bucket 0, a row per question the step changed (every bucket's copy of the book
    changes alike)."""
    if bucket != 0:
        return []
    return [{"kind": QUESTION, "doc": orjson.dumps(question_frame(q))} for q in step.questions.values()]


def written_rows(written: Written, news: dict[str, int]) -> list[dict[str, Any]]:
    """What the driver needs of a bucket's written punters: those with a game channel, and a
    summary (none when the bucket changed no punter)."""
    if not written.punters:
        return []
    rows: list[dict[str, Any]] = [
        {
            "kind": PUNTER,
            "user": punter.user_id,
            "doc": punter.doc,
            "news": orjson.dumps([n.to_json() for n in punter.news]),
            "channels": channels,
        }
        for punter, channels in written.watched
    ]
    summary = {"punters": written.punters, "days": {str(e): d for e, d in written.days.items()}, "news": news}
    rows.append({"kind": SUMMARY, "doc": orjson.dumps(summary)})
    return rows


def _frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The output rows as a frame whose every column has its type even when all its values are
    missing (pandas would make such a column floats, which Arrow cannot turn into text)."""
    return pd.DataFrame(
        {
            name: pd.array([row.get(name) for row in rows], dtype="Int64" if name in _WHOLE else object)
            for name in OUTPUT_COLUMNS
        }
    )


def game_plan(spark: SparkSession, *, bootstrap: str, redis_url: str, layout: BucketLayout) -> DataFrame:
    """The game query's plan: both topics read as one stream, each answer in its punter's
    bucket and each event in every bucket (``bucket_spread``), each bucket's batch through
    ``GameProcessor`` (writing its punters to ``redis_url``)."""
    return (
        bucket_spread(spark, bootstrap=bootstrap, layout=layout)
        .groupBy("bucket")
        .transformWithStateInPandas(
            statefulProcessor=GameProcessor(
                events_topic=topics.game_events(), writer=PunterWriter.configured(redis_url)
            ),
            outputStructType=OUTPUT,
            outputMode="Update",
            timeMode="None",
        )
    )


def bucket_spread(spark: SparkSession, *, bootstrap: str, layout: BucketLayout) -> DataFrame:
    """Both of the game's topics read as one stream, each record with its ``bucket``: an answer
    in its punter's (``layout``: how many buckets, and their labels), an event once in every one."""
    events_topic = topics.game_events()
    raw = kafka_stream(
        spark,
        topic=f"{topics.game_answers()},{events_topic}",
        bootstrap=bootstrap,
        starting_offsets=GAME.starting_offsets,
        with_topic=True,
    )
    labels = F.array(*[F.lit(label) for label in bucket_labels(layout)])
    every_bucket = labels
    own_bucket = F.array(
        F.element_at(labels, (F.pmod(F.xxhash64(F.col("key")), F.lit(layout.buckets)) + 1).cast("int"))
    )
    return raw.select(
        "topic",
        "key",
        "value",
        "partition",
        "offset",
        F.explode(F.when(F.col("topic") == events_topic, every_bucket).otherwise(own_bucket)).alias("bucket"),
    )


class GameSink:
    """The driver's part of a batch, once the buckets have written their punters: the questions,
    the leaderboards' tops and ranks and the game channels' deltas (``GameStore.publish_batch``);
    refused records to their topics' dead letters."""

    def __init__(self, *, redis_client: redis.Redis, answers: DeadLetters, events: DeadLetters) -> None:
        self._redis = redis_client
        self._store = GameStore(redis_client)
        self._channels = ChannelStore(redis_client)
        self._dead_letters = {
            topics.game_answers(): (answers, "game_answer_"),
            topics.game_events(): (events, "game_event_"),
        }

    def process(self, table: Any, batch_id: int) -> dict[str, int]:
        """``table``: the batch's output (a pyarrow table of ``OUTPUT``)."""
        with gc_paused():
            return self._process(table, batch_id)

    def _process(self, table: Any, batch_id: int) -> dict[str, int]:
        kinds = table.column("kind").to_pylist()
        # The rejects' columns are read only when a record was refused.
        wanted = OUTPUT_COLUMNS if REJECT in kinds else ROW_COLUMNS
        columns = {name: table.column(name).to_pylist() for name in wanted}
        questions = []
        written = Written()
        news: dict[str, int] = {}
        rejects: dict[str, Rejects] = {}
        for at, kind in enumerate(kinds):
            if kind == PUNTER:
                punter = PunterOutput(
                    user_id=columns["user"][at],
                    doc=columns["doc"][at],
                    news=[News(**n) for n in orjson.loads(columns["news"][at])],
                    boards={},
                )
                written.watched.append((punter, columns["channels"][at]))
            elif kind == SUMMARY:
                summary = orjson.loads(columns["doc"][at])
                written.punters += summary["punters"]
                written.days.update({int(e): d for e, d in summary["days"].items()})
                for name, count in summary["news"].items():
                    news[name] = news.get(name, 0) + count
            elif kind == QUESTION:
                questions.append(orjson.loads(columns["doc"][at]))
            else:
                topic = columns["topic"][at]
                if topic not in rejects:
                    sink, prefix = self._dead_letters[topic]
                    rejects[topic] = Rejects(
                        sink=sink, redis_client=self._redis, source_topic=topic, counter_prefix=prefix
                    )
                row = {name: columns[name][at] for name in ("key", "value", "partition", "offset")}
                rejects[topic].add(row, columns["reason"][at], columns["detail"][at])
        refused = sum(len(r) for r in rejects.values())
        for found in rejects.values():
            found.flush()
        applied = self._store.publish_batch(
            questions=sorted(questions, key=lambda q: q["id"]),
            written=written,
            batch=batch_id,
            now_ms=int(time.time() * 1000),
            publish=lambda frames: self._channels.publish_many(frames, only_streaming=True),
        )
        return {
            "punters": applied.punters,
            "settled": news.get("settled", 0),
            "questions": applied.questions,
            "frames": applied.frames,
            "tops": len(applied.tops),
            "rejected": refused,
        }

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        started = time.perf_counter()
        table = batch.toArrow()
        computed = time.perf_counter()
        counts = self.process(table, batch_id)
        if any(counts.values()):
            log.info(
                "batch %s: %s; buckets (their punters written) %.0f ms, driver's Redis %.0f ms",
                batch_id,
                counts,
                (computed - started) * 1000,
                (time.perf_counter() - computed) * 1000,
            )


# The file in the game query's checkpoint that keeps how its punters are spread over buckets.
BUCKETS_FILE = "game-buckets"


@dataclass(frozen=True)
class BucketLayout:
    """How the game's punters are spread over buckets: ``buckets`` of them, a punter in the one
    that ``xxhash64(id) mod buckets`` picks, and each bucket's label (the key its state is kept
    under). With ``partitions`` the labels are chosen so that each of the state's partitions
    holds as many buckets as another (``bucket_labels``); without (a checkpoint made before the
    layout was kept), bucket ``i`` is labelled ``i``."""

    buckets: int
    partitions: int | None = None

    def kept(self) -> str:
        """The layout as ``BUCKETS_FILE`` keeps it."""
        return f"{self.buckets}\n" if self.partitions is None else f"{self.buckets} {self.partitions}\n"


def bucket_labels(layout: BucketLayout) -> list[int]:
    """Each bucket's label, by bucket. Spark puts a bucket's batch and state in the partition that
    a hash of its label picks (``spark.hashing.int_partition``); labelled ``0, 1, 2, ...``, 64
    buckets fell 11, 21, 16 and 16 into 4 partitions, and the partition with 21 held a third of
    the punters and finished last. Balanced, bucket ``i`` is labelled with the smallest label
    not yet taken in partition ``(p0 + i) mod partitions`` (``p0``: label 0's partition, so that
    bucket 0 is labelled 0: it speaks for every bucket's copy of the book)."""
    if layout.partitions is None:
        return list(range(layout.buckets))
    parts = layout.partitions
    first = int_partition(0, parts)
    free: dict[int, list[int]] = {p: [] for p in range(parts)}
    label = 0
    labels = []
    for bucket in range(layout.buckets):
        wanted = (first + bucket) % parts
        while not free[wanted]:
            free[int_partition(label, parts)].append(label)
            label += 1
        labels.append(free[wanted].pop(0))
    return labels


def pin_buckets(checkpoint_dir: str | Path, buckets: int, partitions: int) -> BucketLayout:
    """Keep the game's bucket layout in its query's checkpoint, and refuse another bucket count.
    A punter's state lives in the bucket a hash of their id picks among ``buckets``: resumed with
    another count, the query would look for every punter in the wrong bucket, take a second
    answer to a question they answered, and never settle the answers they hold. A new
    checkpoint balances its buckets over the state's ``partitions`` (``bucket_labels``; Spark
    keeps the partition count in the checkpoint too); one kept before the labels were balanced
    keeps its labels, and one made before the count was kept takes the count it is started with,
    with those labels. Returns the layout kept."""
    directory = Path(checkpoint_dir)
    kept = directory / BUCKETS_FILE
    if kept.exists():
        text = kept.read_text().strip()
        fields = text.split()
        if not 1 <= len(fields) <= 2 or not all(f.isdigit() and int(f) >= 1 for f in fields):
            raise ConfigError(
                f"{kept} must hold the game's bucket count and, after it, its state's partition count, "
                f"whole numbers of at least 1; it holds {text!r}"
            )
        layout = BucketLayout(int(fields[0]), int(fields[1]) if len(fields) == 2 else None)
        if layout.buckets != buckets:
            raise ConfigError(
                f"SPARK_GAME_BUCKETS is {buckets}, but the game's checkpoint {directory} keeps its punters in "
                f"{layout.buckets} buckets: set SPARK_GAME_BUCKETS={layout.buckets}, or start the game from a "
                "new checkpoint (its punters' game states are then lost)"
            )
        return layout
    layout = BucketLayout(buckets, partitions)
    if (directory / "metadata").exists():
        log.warning("the game's checkpoint %s keeps no bucket count: it is taken to be %d", directory, buckets)
        layout = BucketLayout(buckets)
    directory.mkdir(parents=True, exist_ok=True)
    kept.write_text(layout.kept())
    return layout


def start(
    spark: SparkSession, *, bootstrap: str, redis_url: str, checkpoint_dir: str, sink: GameSink | None = None
) -> StreamingQuery:
    """Start the game query; ``sink``: the driver's part of each batch (``GameSink`` on the
    configured Redis and dead-letter topics unless given)."""
    settings = config()
    layout = pin_buckets(checkpoint_dir, settings.game_buckets, settings.shuffle_partitions)
    sink = sink or GameSink(
        redis_client=redis_client(redis_url),
        answers=dead_letter_sink(bootstrap=bootstrap, source_topic=topics.game_answers()),
        events=dead_letter_sink(bootstrap=bootstrap, source_topic=topics.game_events()),
    )
    return (
        game_plan(spark, bootstrap=bootstrap, redis_url=redis_url, layout=layout)
        .writeStream.queryName(GAME.name)
        .option("checkpointLocation", checkpoint_dir)
        .outputMode("update")
        .foreachBatch(Replicated(sink, redis_url=redis_url))
        .trigger(processingTime=settings.triggers[GAME.name])
        .start()
    )
