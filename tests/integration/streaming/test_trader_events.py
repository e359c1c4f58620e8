"""An event a trader creates flows through the pipe like the feed's: its opening books reach the
reducers once the markets table holds its markets, and nothing lands in the dead letters."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.utils import timezone

from odds.catalogue.models import Event
from odds.core.outbox import outbox_drain
from odds.trading.services.operations import event_create
from reducers import topics
from store import keys
from tests.conftest import wait_for
from tests.integration.topic_records import records_from_start

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def tasks_inline():
    from webapp.celery import app

    app.conf.task_always_eager = True
    app.conf.task_eager_propagates = True
    yield app
    app.conf.task_always_eager = False
    app.conf.task_eager_propagates = False


@pytest.fixture
def outbox_relayed():
    """The outbox relayed every 200 ms (Celery beat relays it every second in the stack), the
    first time a few seconds late: a price sent before its market's definition would certainly
    overtake it."""
    stop = threading.Event()

    def relay() -> None:
        from django.db import connection

        try:
            stop.wait(4.0)
            while not stop.wait(0.2):
                outbox_drain(budget_s=0.2)
        finally:
            connection.close()

    thread = threading.Thread(target=relay, daemon=True)
    thread.start()
    yield
    stop.set()
    thread.join(10)


def test_an_event_a_trader_creates_reaches_the_reducers_without_dead_letters(
    reducers_running, kafka_topics, redis_client, tasks_inline, outbox_relayed
):
    event = event_create(
        sport="football",
        competition="Trader Cup",
        home="Reds",
        away="Blues",
        starts_at=timezone.now() + timedelta(days=2),
    )
    market_ids = list(Event.objects.get(id=event.id).markets.values_list("id", flat=True))
    assert len(market_ids) == 5

    def all_priced() -> bool:
        return all(redis_client.hget(keys.market_state(m), "seq") is not None for m in market_ids)

    wait_for(all_priced, timeout=90, what="every opening book applied by the reducers")
    ours = {str(m).encode() for m in market_ids}
    dead = [record for record in records_from_start(topics.dead_letter_of(topics.prices())) if record.key() in ours]
    assert dead == []
