"""A game bucket's own writes of its punters (``spark.jobs.game.PunterWriter``) on the real
Redis: written under the keys the driver spelled, and a bucket's batch fails when the replicas
it must wait for do not hold them."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import orjson
import pytest
from django.conf import settings

from spark.jobs.game import PunterWriter
from store import keys
from store.game import PunterKeys, PunterOutput, stored_punter
from store.markets import ReplicationLag

DAY = "2026-12-03"


@pytest.fixture(autouse=True)
def own_keys(redis_client, monkeypatch) -> Iterator[str]:
    """Keys under a namespace of the test's own (the replication mark too, which other tests
    read), deleted afterwards."""
    name = f"{os.environ['SPORTSBOOK_NAMESPACE']}w{uuid.uuid4().hex[:6]}"
    monkeypatch.setenv("SPORTSBOOK_NAMESPACE", name)
    yield name
    for key in redis_client.scan_iter(match=f"{name}:*", count=1000):
        redis_client.delete(key)


def _punter(user_id: int, points: int) -> PunterOutput:
    return PunterOutput(
        user_id=user_id,
        doc=orjson.dumps([2, 1, 1, 1, 1, {DAY: points}, {"77": points}, {}]),
        news=[],
        boards={77: (DAY, points, points)},
    )


def test_a_bucket_writes_its_punters_and_their_board_scores_under_the_drivers_keys(redis_client):
    writer = PunterWriter(redis_url=settings.REDIS_URL, names=PunterKeys.current())

    written = writer.write([_punter(880_001, 10), _punter(880_002, 0)])

    assert written.punters == 2
    assert written.days == {77: DAY}
    assert written.watched == []  # neither has a game channel
    assert stored_punter(redis_client.get(keys.game_punter(880_001)))["matches"] == {"77": 10}
    assert redis_client.zscore(keys.game_board("ev:77"), "880001") == 10
    assert redis_client.zscore(keys.game_board(f"day:{DAY}"), "880002") == 0


def test_a_bucket_whose_writes_the_replicas_do_not_hold_fails_its_batch(redis_client):
    writer = PunterWriter(redis_url=settings.REDIS_URL, names=PunterKeys.current(), replicas=1, replica_timeout_ms=50)

    with pytest.raises(ReplicationLag, match="0 of 1 replicas"):
        writer.write([_punter(880_003, 5)])
    # Nothing to write, nothing to wait for.
    assert writer.write([]).punters == 0
