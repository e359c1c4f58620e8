"""The game reducer's bucket processor and its driver's sink, without Spark: the processor runs
over an in-memory stand-in of its state store, the sink over the in-memory Redis of
tests/fakes.py; the command reducer makes the punters' game channels on the same Redis."""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from typing import Any

import orjson
import pandas as pd
import pyarrow as pa
import pytest

from reducers import game, topics
from reducers.frames import GameQuestion
from reducers.schemas import GameAnswer, GameEvent
from reducers.subscriptions import StreamCommand, spec_from_json
from spark.jobs.game import OUTPUT, GameProcessor, GameSink
from store import keys
from store.channels import ChannelStore
from store.game import GameStore, PunterKeys, PunterOutput, Written, stored_punter, write_punters
from tests.fakes import FakeDeadLetters, fake_store_client

EVENT = 31
T0 = 1_795_000_000_000
BUCKETS = 2


class FakeValue:
    def __init__(self) -> None:
        self.value: tuple[Any, ...] | None = None

    def get(self) -> tuple[Any, ...] | None:
        return self.value

    def update(self, value: tuple[Any, ...]) -> None:
        self.value = value


class FakeHandle:
    """A bucket's state store in memory: one value per name."""

    def __init__(self) -> None:
        self.values: dict[str, FakeValue] = {}

    def getValueState(self, name: str, schema: Any) -> FakeValue:  # noqa: N802  # PySpark's name
        return self.values.setdefault(name, FakeValue())


class StoreWriter:
    """The workers' writes of their buckets' punters, on the test's Redis; each batch's punters
    kept, to write them again."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.batch: list[list[PunterOutput]] = []

    def write(self, punters: Sequence[PunterOutput]) -> Written:
        self.batch.append(list(punters))
        return write_punters(self.client, punters, names=PunterKeys.current())


class Buckets:
    """The game query's buckets, each a processor over its own state, and the sink after them."""

    def __init__(self, sink: GameSink, writer: StoreWriter) -> None:
        self.sink = sink
        self.writer = writer
        self.processors = []
        for _ in range(BUCKETS):
            processor = GameProcessor(events_topic=topics.game_events(), writer=writer)
            processor.init(FakeHandle())  # type: ignore[arg-type]
            self.processors.append(processor)
        self.offsets = {topics.game_events(): 0, topics.game_answers(): 0}
        self.batch = 0

    def run(self, *records: GameEvent | GameAnswer | tuple[str, bytes, bytes]) -> dict[str, int]:
        rows: list[list[dict[str, Any]]] = [[] for _ in range(BUCKETS)]
        for record in records:
            if isinstance(record, tuple):
                topic, key, value = record
            elif isinstance(record, GameEvent):
                topic, key, value = topics.game_events(), record.key(), record.encode()
            else:
                topic, key, value = topics.game_answers(), record.key(), record.encode()
            row = {"topic": topic, "key": key, "value": value, "partition": 0, "offset": self.offsets[topic]}
            self.offsets[topic] += 1
            targets = range(BUCKETS) if topic == topics.game_events() else [int(key or b"0") % BUCKETS]
            for bucket in targets:
                rows[bucket].append(row)
        outputs: list[pd.DataFrame] = []
        self.writer.batch = []
        self.yielded = [0] * BUCKETS
        for bucket, processor in enumerate(self.processors):
            if rows[bucket]:
                frame = pd.DataFrame(rows[bucket], columns=["topic", "key", "value", "partition", "offset"])
                frames = list(processor.handleInputRows((bucket,), iter([frame]), None))
                self.yielded[bucket] = len(frames)
                outputs.extend(frames)
        if outputs:
            table = pa.Table.from_pandas(
                pd.concat(outputs, ignore_index=True), schema=_arrow(OUTPUT), preserve_index=False
            )
        else:
            table = _arrow(OUTPUT).empty_table()
        self.last_table = table
        counts = self.sink.process(table, self.batch)
        self.batch += 1
        return counts


def _arrow(schema: Any) -> pa.Schema:
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(schema)


@pytest.fixture
def store():
    return fake_store_client()


@pytest.fixture
def dead_letters():
    return {"answers": FakeDeadLetters(), "events": FakeDeadLetters()}


@pytest.fixture
def buckets(store, dead_letters):
    return Buckets(
        GameSink(redis_client=store, answers=dead_letters["answers"], events=dead_letters["events"]),
        StoreWriter(store),
    )


class Feed:
    def __init__(self) -> None:
        self.seq = 0
        self.score = [0, 0]

    def __call__(self, kind: str, *, minute: int = 0, side: str = "") -> GameEvent:
        self.seq += 1
        if kind == "score":
            self.score[0 if side == "home" else 1] += 1
        return GameEvent(
            kind=kind,
            event_id=EVENT,
            seq=self.seq,
            sport="football",
            minute=minute,
            side=side,
            score=(self.score[0], self.score[1]),
            at=T0 + minute * 60_000,
        )


def answer(user: int, question_id: int, choice: str, *, ts: int = T0 + 1) -> GameAnswer:
    return GameAnswer(
        answer_id=uuid.uuid4().hex, user_id=user, event_id=EVENT, question_id=question_id, choice=choice, ts=ts
    )


def questions(store) -> dict[str, GameQuestion]:
    return {q["kind"]: q for q in GameStore(store).questions(EVENT) if q["status"] == "open"}


def game_channel(store, user: int) -> tuple[str, Any]:
    channel = uuid.uuid4().hex
    listener = store.pubsub(ignore_subscribe_messages=True)
    listener.subscribe(keys.subscriber_channel(channel))
    channels = ChannelStore(store)
    spec = spec_from_json({"view": "game", "event": EVENT})
    for kind in ("subscribe", "begin"):
        channels.apply_command(
            StreamCommand(
                type=kind, channel_id=channel, user_id=user, spec=spec if kind == "subscribe" else None, ts=T0
            )
        )
    return channel, listener


def received(listener: Any) -> list[dict[str, Any]]:
    """Every frame published on the listener's channels so far (the subscription's own
    confirmation reads as None, so three Nones in a row end it)."""
    out, quiet = [], 0
    while quiet < 3:
        message = listener.get_message(timeout=0.1)
        if message is None:
            quiet += 1
            continue
        quiet = 0
        out.append(orjson.loads(message["data"]))
    return out


def test_an_answer_and_the_goal_that_settles_it_reach_the_punters_game_channel_and_the_leaderboards(buckets, store):
    feed = Feed()
    public = store.pubsub(ignore_subscribe_messages=True)
    public.subscribe(keys.game_channel(EVENT))
    buckets.run(feed("kick_off"))
    goal = questions(store)["next_goal"]
    _channel, listener = game_channel(store, 1)

    buckets.run(answer(1, goal["id"], "home"), answer(2, goal["id"], "away"), answer(3, goal["id"], "home"))
    buckets.run(feed("score", minute=6, side="home"))

    frames = received(listener)
    assert [f["type"] for f in frames] == ["game.image", "game.delta", "game.delta"]
    assert [f["seq"] for f in frames] == [1, 2, 3]
    assert frames[0]["me"] is None
    assert [(n["kind"], n["choice"]) for n in frames[1]["news"]] == [("accepted", "home")]
    assert frames[1]["me"]["answers"][str(goal["id"])]["result"] == "pending"
    settled = frames[2]
    assert [(n["kind"], n["result"], n["points"]) for n in settled["news"]] == [("settled", "won", 10)]
    assert settled["me"]["matches"] == {str(EVENT): 10}
    assert settled["rank"]["match"] in (1, 2)  # level with punter 3
    board = store.zrevrange(keys.game_board(f"ev:{EVENT}"), 0, -1, withscores=True)
    assert sorted(board) == [(b"1", 10.0), (b"2", 0.0), (b"3", 10.0)]
    kinds = [f["type"] for f in received(public)]
    assert "game.questions" in kinds
    assert "game.top" in kinds
    # The buckets wrote every punter's state themselves; the driver was handed only the punter
    # with a game channel, and each bucket's summary.
    rows = buckets.last_table.select(["kind", "user"]).to_pylist()
    assert [r["user"] for r in rows if r["kind"] == "punter"] == [1]
    assert [r["kind"] for r in rows].count("summary") == BUCKETS


def test_a_bucket_with_nothing_for_the_driver_yields_no_frame(buckets, store):
    feed = Feed()
    buckets.run(feed("kick_off"))
    # Every bucket read the kick-off; only bucket 0 reports the questions it opened.
    assert buckets.yielded == [1, 0]
    assert {r["kind"] for r in buckets.last_table.select(["kind"]).to_pylist()} == {"question"}
    assert "next_goal" in questions(store)

    buckets.run(answer(2, questions(store)["next_goal"]["id"], "home"))
    assert buckets.yielded == [1, 0]  # punter 2 is bucket 0's; bucket 1 read nothing
    buckets.run(answer(1, questions(store)["next_goal"]["id"], "away"))
    assert buckets.yielded == [0, 1]


def test_the_same_answer_read_twice_counts_once_and_a_second_answer_is_refused_with_its_reason(buckets, store):
    feed = Feed()
    buckets.run(feed("kick_off"))
    goal = questions(store)["next_goal"]
    _channel, listener = game_channel(store, 4)
    first = answer(4, goal["id"], "home")
    buckets.run(first, first)
    buckets.run(first, answer(4, goal["id"], "away"))

    news = [n for f in received(listener) for n in f.get("news", [])]
    assert [(n["kind"], n.get("reason")) for n in news] == [("accepted", None), ("refused", game.ALREADY_ANSWERED)]
    assert stored_punter(store.get(keys.game_punter(4)))["answered"] == 1


def test_an_answer_after_the_close_is_refused_as_closed(buckets, store):
    feed = Feed()
    buckets.run(feed("kick_off"))
    goal = questions(store)["next_goal"]
    _channel, listener = game_channel(store, 5)
    buckets.run(feed("score", minute=3, side="away"))
    buckets.run(answer(5, goal["id"], "away", ts=T0 + 3 * 60_000 + 1))

    news = [n for f in received(listener) for n in f.get("news", [])]
    assert [(n["kind"], n.get("reason")) for n in news] == [("refused", game.QUESTION_CLOSED)]
    assert store.zscore(keys.game_board(f"ev:{EVENT}"), "5") is None


def test_a_void_scores_nothing_for_every_answer(buckets, store):
    feed = Feed()
    buckets.run(feed("kick_off"))
    card = questions(store)["card"]
    buckets.run(*(answer(u, card["id"], "yes") for u in range(1, 5)))
    void = GameEvent(
        kind="void", event_id=EVENT, seq=1, sport="football", at=T0 + 5, question_id=card["id"], reason="booking missed"
    )
    counts = buckets.run(void)

    assert counts["punters"] == 4
    stored = GameStore(store).question(card["id"], event_id=EVENT)
    assert stored is not None
    assert (stored["status"], stored["void_reason"]) == ("void", "booking missed")
    for user in range(1, 5):
        doc = stored_punter(store.get(keys.game_punter(user)))
        assert doc["answers"][str(card["id"])]["result"] == "void"


def test_records_that_cannot_be_read_are_dead_lettered_once_each(buckets, store, dead_letters):
    feed = Feed()
    counts = buckets.run(
        feed("kick_off"),
        (topics.game_answers(), b"9", b'{"v": 1, "answer_id": "x"}'),
        (topics.game_events(), b"31", b"not json"),
    )

    assert counts["rejected"] == 2
    assert dead_letters["answers"].reasons() == ["bad_field"]
    assert dead_letters["events"].reasons() == ["bad_json"]  # once, though every bucket read it
    assert store.hgetall(keys.counter("dead_letters")) == {b"game_answer_bad_field": b"1", b"game_event_bad_json": b"1"}


def _snapshot(store) -> dict[bytes, Any]:
    """Every game key's value; the games index by its members (its scores are write times)."""
    found: dict[bytes, Any] = {}
    for key in store.keys(f"{topics.namespace()}:game:*"):
        kind = store.type(key)
        if key == keys.game_events_index().encode():
            found[key] = sorted(store.zrange(key, 0, -1))
        elif kind == b"zset":
            found[key] = store.zrange(key, 0, -1, withscores=True)
        elif kind == b"hash":
            found[key] = store.hgetall(key)
        else:
            found[key] = store.get(key)
    return found


def test_a_batch_written_twice_leaves_redis_as_once(buckets, store):
    feed = Feed()
    buckets.run(feed("kick_off"))
    goal = questions(store)["next_goal"]
    buckets.run(*(answer(u, goal["id"], ("home", "away")[u % 2]) for u in range(1, 7)))
    buckets.run(feed("score", minute=4, side="home"))
    before = _snapshot(store)

    # The settlement's batch written again, as after a crash between its writes and its commit:
    # the workers' writes of its punters, then the driver's.
    for punters in buckets.writer.batch:
        write_punters(store, punters, names=PunterKeys.current())
    buckets.sink.process(buckets.last_table, buckets.batch - 1)

    assert _snapshot(store) == before
    assert store.zscore(keys.game_board(f"ev:{EVENT}"), "2") == 10


def test_a_punters_state_reads_as_its_document_and_one_stored_as_a_document_as_it_is():
    state = [3, 1, 1, 2, 1, {"2026-12-03": 10}, {"7": 10}, {"7001": [7, "home", "a1", "won", 10]}]
    doc = stored_punter(orjson.dumps(state))
    assert doc["matches"] == {"7": 10}
    assert doc["answers"] == {"7001": {"event_id": 7, "choice": "home", "result": "won", "points": 10}}
    assert stored_punter(orjson.dumps(doc)) == doc


def test_a_games_keys_expire_a_week_after_its_last_batch_and_the_index_forgets_older_games(buckets, store):
    now_ms = int(time.time() * 1000)
    index = keys.game_events_index()
    store.zadd(index, {"900": now_ms - game.RESULTS_KEEP_S * 1000 - 60_000, "901": now_ms - 60_000})
    feed = Feed()
    buckets.run(feed("kick_off"))
    goal = questions(store)["next_goal"]
    buckets.run(*(answer(u, goal["id"], "home") for u in range(1, 4)))
    buckets.run(feed("score", minute=4, side="home"))
    day = goal["day"]
    for key in (
        keys.game_questions(EVENT),
        keys.game_board(f"ev:{EVENT}"),
        keys.game_board(f"day:{day}"),
        keys.game_top(EVENT),
    ):
        assert store.exists(key), key
        assert 0 < store.ttl(key) <= game.RESULTS_KEEP_S, key
    # a game no batch changed for a week leaves the index; one changed a minute ago stays
    assert {m.decode() for m in store.zrange(index, 0, -1)} == {"901", str(EVENT)}
    # punters' states stay (one a punter)
    assert store.ttl(keys.game_punter(1)) == -1
