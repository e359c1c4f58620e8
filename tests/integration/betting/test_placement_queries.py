"""POST /api/bets costs a fixed number of SQL queries, however many legs the bet has.

The 12: session and user (authentication); savepoint and release (the test's transaction makes
``atomic`` a savepoint); the wallet locked once; the idempotency key; the selections with their
markets and events; the bet, its legs, the wallet's balance, the ledger entry and the outbox row.
The response is built from the legs in memory, without reading them back.
"""

from __future__ import annotations

import pytest

from tests.factories import market_create
from tests.integration.betting.helpers import bet_body, first_selection

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

PLACEMENT_QUERIES = 12


def test_single_bet_is_placed_in_a_fixed_number_of_queries(api, market, django_assert_max_num_queries):
    home = first_selection(market)
    with django_assert_max_num_queries(PLACEMENT_QUERIES):
        response = api.post_json("/api/bets", bet_body((home.id, "2.10")))
    assert response.status_code == 201, response.json()
    leg = response.json()["bet"]["legs"][0]
    assert (leg["selection"], leg["market"], leg["price"]) == (home.name, market.name, "2.10")


def test_accumulator_costs_no_more_queries_than_a_single(api, market, django_assert_max_num_queries):
    markets = [market, market_create(prices=("1.50", "4.00", "6.00")), market_create(prices=("1.80", "3.60", "4.20"))]
    legs = [(first_selection(m).id, str(first_selection(m).price)) for m in markets]
    with django_assert_max_num_queries(PLACEMENT_QUERIES):
        response = api.post_json("/api/bets", bet_body(*legs, stake="1.00"))
    assert response.status_code == 201, response.json()
    body = response.json()["bet"]
    assert [(leg["market"], leg["event"]) for leg in body["legs"]] == [(m.name, m.event.name) for m in markets]
