"""The outbox relay against the real Kafka: committed records are delivered even after a crash."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from odds.betting.services.settlement import market_bets_settle
from odds.catalogue.services.markets import market_result
from odds.core.kafka import producer_create
from odds.core.outbox import outbox_relay
from odds.models import OutboxMessage
from reducers import topics
from reducers.schemas import decode_bet_event, decode_market_definition
from tests.factories import market_create, user_create
from tests.integration.betting.helpers import bet_accepted, consume_until, selections_of

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def fresh_market(kafka_topics, redis_client):
    return market_create()


def test_bet_event_committed_before_a_crash_is_delivered_by_the_next_relay(fresh_market):
    bet = bet_accepted(user_create(), selections_of(fresh_market)[0])
    # The process that placed the bet died after the commit: nothing was produced, the row waits.
    assert OutboxMessage.objects.filter(key=str(bet.id).encode(), sent_at__isnull=True).count() == 1

    result = outbox_relay()

    assert result.failed == 0
    # Other tests of the session produce bet events too; this bet's own event is the one asked for.
    event_id = f'"event_id":"{bet.id}:placed"'.encode()
    message = consume_until(topics.bets(), lambda m: m.key() == str(bet.id).encode() and event_id in (m.value() or b""))
    event = decode_bet_event(message.value())
    assert (event.event_id, event.type, event.bet_id) == (f"{bet.id}:placed", "placed", bet.id)


def test_relay_marks_delivered_records_sent(fresh_market):
    bet = bet_accepted(user_create(), selections_of(fresh_market)[0])
    outbox_relay()
    row = OutboxMessage.objects.get(key=str(bet.id).encode())
    assert row.sent_at is not None
    assert row.attempts == 1


def test_a_second_relay_run_sends_nothing_again(fresh_market):
    bet_accepted(user_create(), selections_of(fresh_market)[0])
    outbox_relay()
    assert outbox_relay().sent == 0


def test_an_unacknowledged_record_stays_pending_for_the_next_run(fresh_market):
    bet = bet_accepted(user_create(), selections_of(fresh_market)[0])
    unreachable = producer_create(**{"bootstrap.servers": "127.0.0.1:1", "message.timeout.ms": 300})

    result = outbox_relay(producer=unreachable, timeout=3)

    row = OutboxMessage.objects.get(key=str(bet.id).encode())
    assert (result.sent, row.sent_at, row.attempts) == (0, None, 1)
    assert row.last_error


def test_market_definitions_reach_the_compacted_topic(fresh_market):
    market_result(market=fresh_market, winners=[selections_of(fresh_market)[0].id])
    outbox_relay()
    message = consume_until(
        topics.markets(), lambda m: m.key() == str(fresh_market.id).encode() and m.value() is not None
    )
    definition = decode_market_definition(message.value())
    assert definition is not None
    assert (definition.status, definition.version) == ("closed", 2)


def test_settled_market_is_removed_from_the_compacted_topic_by_a_tombstone(fresh_market):
    market_result(market=fresh_market, winners=[selections_of(fresh_market)[0].id])
    market_bets_settle(market_id=fresh_market.id)
    outbox_relay()
    message = consume_until(topics.markets(), lambda m: m.key() == str(fresh_market.id).encode() and m.value() is None)
    assert decode_market_definition(message.value()) is None


def test_relay_outbox_command_sends_what_is_pending(fresh_market):
    bet = bet_accepted(user_create(), selections_of(fresh_market)[0])
    out = io.StringIO()
    call_command("relay_outbox", "--once", stdout=out)
    assert OutboxMessage.objects.get(key=str(bet.id).encode()).sent_at is not None
    assert "0 pending" in out.getvalue()
