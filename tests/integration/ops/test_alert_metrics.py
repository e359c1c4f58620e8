"""The figures the alerts read that the web processes record: a bet's placement time and the
websocket closes by cause reach ``/metrics`` through the shared counters in Redis."""

from __future__ import annotations

from decimal import Decimal

import pytest
from prometheus_client.parser import text_string_to_metric_families

from odds.core.metrics import latency_histograms, websockets_report
from tests.factories import live_state_write, market_create, user_create

pytestmark = [pytest.mark.django_db(transaction=True)]


def scraped(client) -> dict[tuple[str, frozenset], float]:
    body = client.get("/metrics", REMOTE_ADDR="127.0.0.1").content.decode()
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(body)
        for s in family.samples
    }


def test_a_placed_bet_is_timed_in_the_placement_histogram(redis_client, own_namespace):
    # Keys of its own: the histogram sums every placement of its namespace, the session's web
    # servers' included.
    from odds.betting.services.bets import PLACEMENT_LATENCY, LegRequest, bet_place

    market = market_create(prices=("2.10", "3.40", "3.50"))
    live_state_write(redis_client, market, prices=("2.10", "3.40", "3.50"))
    selection = market.selections.order_by("id")[0]
    PLACEMENT_LATENCY.flush()  # earlier tests' placements in this process, counted before ours
    before = latency_histograms()["placement"]
    placement = bet_place(
        user=user_create(balance="50.00"),
        idempotency_key="timed-1",
        stake=Decimal("5.00"),
        legs=[LegRequest(selection_id=selection.id, price_seen=Decimal("2.10"))],
    )
    PLACEMENT_LATENCY.flush()
    assert placement.bet.status == "accepted"
    after = latency_histograms()["placement"]
    assert after.count == before.count + 1
    assert 0 < after.sum_s - before.sum_s < 5


def test_websocket_closes_reported_by_a_worker_are_exposed_by_cause(client, redis_client, kafka_topics, settings):
    settings.METRICS_TOKEN = ""
    before = scraped(client).get(("sportsbook_websocket_closes_total", frozenset({("cause", "too_big")})), 0)
    websockets_report(count=3, worker="host:1", closes={"too_big": 2, "going_away": 5})
    websockets_report(count=3, worker="host:2", closes={"too_big": 1})
    found = scraped(client)
    assert found[("sportsbook_websocket_closes_total", frozenset({("cause", "too_big")}))] == before + 3
    assert found[("sportsbook_latency_objective_seconds", frozenset({("stage", "placement")}))] == 0.25
