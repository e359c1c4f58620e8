"""Liability per selection from the real bets topic, through Spark, into Redis."""

from __future__ import annotations

import uuid
from decimal import Decimal

import pytest

from reducers import topics
from reducers.schemas import BetEvent, BetLeg
from store import keys
from tests.conftest import wait_for

pytestmark = pytest.mark.integration


def bet_event(kind: str, *, bet_id: int, selection_id: int, stake: str, price: str, event_id: str | None = None):
    return BetEvent(
        event_id=event_id or uuid.uuid4().hex,
        type=kind,
        bet_id=bet_id,
        user_id=1,
        stake=Decimal(stake),
        potential_return=(Decimal(stake) * Decimal(price)).quantize(Decimal("0.01")),
        legs=(BetLeg(selection_id=selection_id, market_id=1, event_id=1, price=Decimal(price)),),
        ts=1,
    )


def pence(redis_client, selection_id: int) -> int | None:
    raw = redis_client.hget(keys.liability(selection_id), "pence")
    return int(raw) if raw is not None else None


def test_liability_adds_placed_bets_subtracts_voided_and_ignores_redelivery(reducers_running, producer, redis_client):
    selection = 600_001
    placed = bet_event("placed", bet_id=1, selection_id=selection, stake="10.00", price="3.00")
    events = [
        placed,
        placed,  # redelivered: counted once
        bet_event("placed", bet_id=2, selection_id=selection, stake="5.00", price="2.00"),
        bet_event("voided", bet_id=1, selection_id=selection, stake="10.00", price="3.00"),
    ]
    for e in events:
        producer.produce(topics.bets(), key=e.key(), value=e.encode())
    producer.produce(topics.bets(), key=b"3", value=b'{"v": 1, "type": "placed"}')
    producer.flush(10)

    wait_for(lambda: redis_client.hget(keys.liability(selection), "bets") == b"1", what="liability settled")
    assert pence(redis_client, selection) == 500
    assert redis_client.zscore(keys.liability_index(), str(selection)) == 500
    wait_for(lambda: redis_client.hget(keys.counter("dead_letters"), "bet_bad_field"), what="bad bet counted")
