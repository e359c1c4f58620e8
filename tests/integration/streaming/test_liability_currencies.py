"""Bets of wallets in several currencies on one book, end to end: placed by the placement
statement, relayed from the outbox through the bets topic, counted by the liability reducer in
Spark, converted in Redis at the rates the operator sets in PostgreSQL."""

from __future__ import annotations

import uuid
from decimal import Decimal

import pytest

from odds.betting.models import Bet
from odds.betting.services.bets import bet_place, bet_void
from odds.betting.services.placement import LegRequest
from odds.core.outbox import outbox_relay
from odds.models import OutboxMessage
from odds.trading.selectors.desk import desk_risk_books
from odds.trading.services.rates import exchange_rate_set
from reducers import topics
from reducers.schemas import decode_bet_event
from store import keys
from tests.conftest import wait_for
from tests.factories import live_state_write, market_create, user_create
from tests.integration.betting.helpers import selections_of

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture(autouse=True)
def celery_inline():
    """Tasks run in the calling thread, never on the shared broker."""
    from webapp.celery import app

    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = False


def _place(user, selection, *, stake: str) -> Bet:
    legs = [LegRequest(selection_id=selection.id, price_seen=Decimal("3.00"))]
    return bet_place(user=user, idempotency_key=uuid.uuid4().hex, stake=Decimal(stake), legs=legs).bet


def _pence(redis_client, selection_id: int) -> int:
    return int(redis_client.hget(keys.liability(selection_id), "pence") or 0)


def _rank(redis_client, *selection_ids: int) -> list[int]:
    scores = {s: redis_client.zscore(keys.liability_index(), str(s)) for s in selection_ids}
    return sorted(selection_ids, key=lambda s: -(scores[s] or 0))


def test_a_pound_and_a_euro_bet_add_up_at_the_operators_rate_and_cancel_exactly(
    reducers_running, producer, redis_client, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        exchange_rate_set(currency="EUR", rate=Decimal("0.85"), by=None)
    first, second = market_create(), market_create()
    for market in (first, second):
        live_state_write(redis_client, market, prices=("3.00", "3.40", "3.50"))
    home, other = selections_of(first)[0], selections_of(second)[0]
    pounds, euros = user_create(balance="500.00"), user_create(balance="500.00", currency="EUR")

    _place(pounds, home, stake="10.00")  # exposure £20.00
    euro_bet = _place(euros, home, stake="10.00")  # €20.00
    _place(euros, other, stake="20.00")  # €40.00
    assert outbox_relay().sent == 3
    stored = OutboxMessage.objects.get(topic=topics.bets(), key=str(euro_bet.id).encode()).value
    assert stored is not None
    record = bytes(stored)
    assert decode_bet_event(record).currency == "EUR"
    producer.produce(topics.bets(), key=str(euro_bet.id).encode(), value=record)  # redelivered
    producer.flush(10)

    wait_for(lambda: _pence(redis_client, other.id) == 3400, what="the euro bet counted at 0.85")
    wait_for(lambda: _pence(redis_client, home.id) == 2000 + 1700, what="both bets on one selection")
    assert redis_client.hget(keys.liability(home.id), "bets") == b"2"  # the redelivery counted once
    assert _rank(redis_client, home.id, other.id) == [home.id, other.id]
    worsts = {b["market_id"]: b["worst"] for b in desk_risk_books()}
    assert (worsts[first.id], worsts[second.id]) == (-3700, -3400)

    with django_capture_on_commit_callbacks(execute=True):
        exchange_rate_set(currency="EUR", rate=Decimal("1.2"), by=None)  # applied by its task at once
    assert (_pence(redis_client, home.id), _pence(redis_client, other.id)) == (2000 + 2400, 4800)
    assert _rank(redis_client, home.id, other.id) == [other.id, home.id]
    books = {b["market_id"]: b for b in desk_risk_books()}
    assert (books[first.id]["worst"], books[second.id]["worst"]) == (-4400, -4800)
    assert [b["market_id"] for b in sorted(books.values(), key=lambda b: b["event_worst"])][:2] == [
        second.id,
        first.id,
    ]

    bet_void(bet=Bet.objects.select_related("user").get(id=euro_bet.id), reason="palpable error")
    assert outbox_relay().sent == 1
    wait_for(lambda: redis_client.hget(keys.liability(home.id), "bets") == b"1", what="the void counted")
    assert redis_client.hget(keys.liability(home.id), "c:EUR") == b"0"
    assert _pence(redis_client, home.id) == 2000
