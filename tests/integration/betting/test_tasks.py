"""Celery tasks: settlement retries on database errors; the relay task drains the outbox."""

from __future__ import annotations

import pytest
from celery.exceptions import Retry
from django.conf import settings
from django.db import OperationalError

from odds import tasks
from odds.betting.models import Bet
from odds.betting.services.settlement import market_bets_settle
from odds.catalogue.services.markets import market_result
from odds.models import OutboxMessage
from tests.factories import user_create
from tests.integration.betting.helpers import bet_accepted, selections_of

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def test_settlement_task_retries_after_a_database_error(punter, market, monkeypatch):
    bet = bet_accepted(punter, selections_of(market)[0])
    market_result(market=market, winners=[selections_of(market)[0].id])
    calls = []

    def flaky(*, market_id: int):
        calls.append(market_id)
        if len(calls) == 1:
            raise OperationalError("deadlock detected")
        return market_bets_settle(market_id=market_id)

    monkeypatch.setattr(tasks, "market_bets_settle", flaky)
    # An eager retry runs the task again at once; the Retry it then signals is not a failure.
    tasks.market_settle.apply(args=[market.id], throw=False)
    bet.refresh_from_db()
    assert (len(calls), bet.status) == (2, Bet.Status.WON)


def test_settlement_retries_wait_longer_each_time_up_to_a_minute(punter, market, monkeypatch):
    market_result(market=market, winners=[selections_of(market)[0].id])

    def failing(*, market_id: int):
        raise OperationalError("could not connect to server")

    countdowns: list[int | None] = []

    def recorded(*args, **kwargs):
        # Where Celery would schedule the next run: note when, and schedule nothing.
        countdowns.append(kwargs.get("countdown"))
        return Retry(when=kwargs.get("countdown"))

    monkeypatch.setattr(tasks, "market_bets_settle", failing)
    monkeypatch.setattr(tasks.market_settle, "retry", recorded)
    for retries in range(10):
        tasks.market_settle.apply(args=[market.id], retries=retries, throw=False)
    # Each retry waits twice as long as the one before, never more than a minute.
    assert countdowns == [1, 2, 4, 8, 16, 32, 60, 60, 60, 60]


def test_settlement_task_is_acknowledged_only_after_it_ran():
    assert (tasks.market_settle.acks_late, tasks.market_settle.reject_on_worker_lost) == (True, True)


def test_outbox_relay_task_sends_pending_records(market, kafka_topics):
    bet = bet_accepted(user_create(), selections_of(market)[0])
    tasks.outbox_relay.apply()
    assert OutboxMessage.objects.get(key=str(bet.id).encode()).sent_at is not None


def test_beat_runs_the_relay_every_second_and_keeps_the_heartbeat():
    schedule = settings.CELERY_BEAT_SCHEDULE
    assert schedule["outbox-relay"]["schedule"] == 1.0
    assert schedule["heartbeat"]["task"] == "odds.tasks.worker_heartbeat"
    assert schedule["settlement-sweep"]["task"] == "odds.tasks.settlement_sweep"


def test_settlement_sweep_queues_markets_whose_settlement_was_lost(punter, market, celery_inline):
    bet = bet_accepted(punter, selections_of(market)[0])
    market_result(market=market, winners=[selections_of(market)[0].id])
    tasks.settlement_sweep.apply()
    bet.refresh_from_db()
    assert bet.status == Bet.Status.WON
