"""A reducer batch that fails after writing its states and before fanning them out to the
subscriber channels: the supervisor restarts the query, Spark replays the batch, and the slip,
bets and match frames still reach the channels (at least once; clients keep the higher market
sequence). Real Spark queries on real Kafka topics, the store in the real Redis."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from typing import Any

import orjson
import pytest

from reducers.schemas import MatchClock, MatchStateUpdate
from reducers.subscriptions import StreamCommand, spec_from_json
from reducers.supervision import Backoff
from reducers.topics import TopicSpec
from spark.jobs.commands import CommandBatchProcessor
from spark.jobs.matches import MatchBatchProcessor
from spark.jobs.prices import PriceBatchProcessor
from spark.jobs.reducers import QuerySupervisor
from spark.sources import kafka_stream
from store import keys
from tests.conftest import wait_for
from tests.factories import market_ids_define, raw_price_update
from tests.fakes import FakeDeadLetters
from tests.unit.test_fan_out import FailingFanOut

pytestmark = pytest.mark.integration

SLIP = "r" * 24
BETS = "q" * 24


def open_channel(redis_client: Any, channel: str, spec: dict[str, Any]) -> None:
    commands = CommandBatchProcessor(redis_client=redis_client, dead_letters=FakeDeadLetters())
    for offset, kind in enumerate(("subscribe", "begin")):
        command = StreamCommand(
            type=kind,
            channel_id=channel,
            user_id=7,
            spec=spec_from_json(spec) if kind == "subscribe" else None,
            ts=1_700_000_000_000,
        )
        commands.process_rows([{"key": command.key(), "value": command.encode(), "partition": 0, "offset": offset}])


def logged(redis_client: Any, channel: str) -> list[dict[str, Any]]:
    return [orjson.loads(frame) for frame in reversed(redis_client.lrange(keys.channel_log(channel), 0, -1))]


def supervised(spark: Any, redis_client: Any, *, topic: str, handler: Callable[..., None], checkpoint: str):
    from django.conf import settings

    def start():
        return (
            kafka_stream(spark, topic=topic, bootstrap=settings.KAFKA_BOOTSTRAP_SERVERS, starting_offsets="earliest")
            .writeStream.queryName(f"{os.environ['SPORTSBOOK_NAMESPACE']}-{topic}")
            .option("checkpointLocation", checkpoint)
            .foreachBatch(handler)
            .trigger(processingTime="200 milliseconds")
            .start()
        )

    return QuerySupervisor(
        starters={"under-test": start}, redis_client=redis_client, backoff=Backoff(base_s=1, cap_s=2, stable_s=600)
    )


class Running:
    """A supervisor polled in a thread until the test ends."""

    def __init__(self, supervisor: QuerySupervisor) -> None:
        self.supervisor = supervisor
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._poll, daemon=True)

    def _poll(self) -> None:
        while not self.stop.wait(0.2):
            self.supervisor.poll()

    def __enter__(self) -> QuerySupervisor:
        self.supervisor.start()
        self.thread.start()
        return self.supervisor

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(5)
        self.supervisor.stop()


@pytest.fixture
def topic(kafka_topics) -> Iterator[str]:
    from odds.core.kafka import admin_client, topics_ensure

    name = f"{os.environ['SPORTSBOOK_NAMESPACE']}.fan-out-replay.{os.urandom(3).hex()}.v1"
    topics_ensure(specs=[TopicSpec(name, 1)])
    yield name
    for future in admin_client().delete_topics([name], operation_timeout=30).values():
        future.result()


def test_slip_and_bets_views_converge_after_a_price_batch_fails_before_its_fan_out(
    spark, producer, redis_client, topic, tmp_path
):
    markets = (987_501, 987_502)
    market_ids_define(redis_client, *markets)
    seed = PriceBatchProcessor(redis_client=redis_client, dead_letters=FakeDeadLetters())
    seed.process_rows(
        [
            {"key": b"k", "value": raw_price_update(market_id=m, seq=1, prices=((1, "2.00"), (2, "3.00"))).encode()}
            | {"partition": 0, "offset": at, "kafka_ts": 1_700_000_000_000}
            for at, m in enumerate(markets)
        ]
    )
    open_channel(
        redis_client,
        SLIP,
        {
            "view": "slip",
            "slip": [{"selection_id": 1, "market_id": markets[0]}, {"selection_id": 2, "market_id": markets[1]}],
        },
    )
    legs = [{"selection_id": 1, "market_id": markets[0], "price": "2.00"}]
    open_channel(redis_client, BETS, {"view": "bets", "bets": [{"bet_id": 5, "stake": "10.00", "legs": legs}]})
    failing = FailingFanOut(redis_client, fails=1)
    processor = PriceBatchProcessor(redis_client=redis_client, dead_letters=FakeDeadLetters(), channels=failing)

    with Running(supervised(spark, redis_client, topic=topic, handler=processor, checkpoint=str(tmp_path / "p"))) as s:
        update = raw_price_update(market_id=markets[0], seq=2, prices=((1, "4.00"), (2, "3.00")))
        producer.produce(topic, key=update.key(), value=update.encode())
        producer.flush(10)

        wait_for(lambda: s.runs["under-test"].restarts >= 1, timeout=120, what="the failed batch's query to restart")
        wait_for(
            lambda: logged(redis_client, BETS)[-1].get("bets") == [{"bet_id": 5, "cash_out": "4.75"}],
            timeout=120,
            what="the bets view to show the new cash-out",
            detail=lambda: logged(redis_client, BETS),
        )
        slip = logged(redis_client, SLIP)[-1]
        assert [(m["market_id"], m["seq"]) for m in slip["markets"]] == [(markets[0], 2)]
        assert slip["slip"]["combined_odds"] == "12.00"  # 4.00 x 3.00
        assert failing.fails == 0
        error = str(s.runs["under-test"].last_error)
        assert error.endswith("InjectedFailure: the batch failed after writing its states")


def test_a_match_state_reaches_the_channels_after_its_batch_fails_before_the_fan_out(
    spark, producer, redis_client, topic, tmp_path
):
    market = 987_511  # its event has the same id (tests/factories.py)
    market_ids_define(redis_client, market)
    open_channel(redis_client, SLIP[:-1] + "m", {"view": "slip", "slip": [{"selection_id": 1, "market_id": market}]})
    failing = FailingFanOut(redis_client, fails=1)
    processor = MatchBatchProcessor(redis_client=redis_client, dead_letters=FakeDeadLetters(), channels=failing)

    def handler(batch, batch_id: int) -> None:
        processor.process_rows(batch.collect())

    with Running(supervised(spark, redis_client, topic=topic, handler=handler, checkpoint=str(tmp_path / "m"))) as s:
        update = MatchStateUpdate(
            event_id=market,
            seq=7,
            sport="football",
            status="in_play",
            period=1,
            score={"home": 1, "away": 0},
            clock=MatchClock(running=True, elapsed_s=1200, at=1_700_000_000_000),
            event_ts=1_700_000_000_000,
            produce_ts=1_700_000_000_001,
        )
        producer.produce(topic, key=update.key(), value=update.encode())
        producer.flush(10)

        wait_for(
            lambda: logged(redis_client, SLIP[:-1] + "m")[-1]["type"] == "view.match",
            timeout=120,
            what="the match state to reach the channel",
        )
        frame = logged(redis_client, SLIP[:-1] + "m")[-1]
        assert [(m["event_id"], m["seq"]) for m in frame["matches"]] == [(market, 7)]
        assert s.runs["under-test"].restarts >= 1
