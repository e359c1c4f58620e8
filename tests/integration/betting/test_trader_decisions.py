"""Bets and cash-outs go by a trader's newest decision from the moment it commits.

A trader's price reaches the reducers' state through Kafka a moment later; until then the
decision itself is what bets are accepted at, written where bets read prices before the change
commits (a refusal there refuses the change). Suspensions and results are in the catalogue,
which the placement statement reads, so they hold at once as well.
"""

from __future__ import annotations

import uuid
from decimal import Decimal

import pytest
from django.db import transaction

from bench.harness import free_port
from odds.betting.models import Bet
from odds.betting.services.bets import LegRequest, bet_place
from odds.catalogue.models import Selection
from odds.catalogue.services.markets import (
    DecisionNotRecorded,
    market_result,
    market_suspend,
    selection_price_set,
)
from odds.core.connections import redis_shared
from store.markets import sequences_next
from tests.factories import live_state_write, market_create
from tests.integration.betting.helpers import bet_accepted, bet_body, error_of, selections_of

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture
def traded(kafka_topics, redis_client, django_capture_on_commit_callbacks):
    """A market whose live state (as the reducers applied it, with a source sequence) shows 2.10."""
    market = market_create(prices=("2.10", "3.40", "3.50"))
    (seq,) = sequences_next(redis_shared(), [market.id])
    live_state_write(redis_client, market, prices=("2.10", "3.40", "3.50"), seq=seq)

    def decide(action, **kwargs):
        with django_capture_on_commit_callbacks(execute=True):
            return action(**kwargs)

    return market, decide


def test_a_bet_at_the_old_price_is_rejected_as_soon_as_the_trader_moves_it(api, traded):
    market, decide = traded
    home = selections_of(market)[0]
    decide(selection_price_set, selection=home, price=Decimal("1.80"))

    old = api.post_json("/api/bets", bet_body((home.id, "2.10")))
    assert error_of(old) == (409, "price_changed", "selections")
    assert old.json()["error"]["selections"][0]["price"] == "1.80"
    new = api.post_json("/api/bets", bet_body((home.id, "1.80")))
    assert (new.status_code, new.json()["bet"]["legs"][0]["price"]) == (201, "1.80")


def test_once_the_reducers_apply_a_newer_price_it_governs_again(api, traded, redis_client):
    market, decide = traded
    home = selections_of(market)[0]
    decide(selection_price_set, selection=home, price=Decimal("1.80"))
    (seq,) = sequences_next(redis_shared(), [market.id])
    live_state_write(redis_client, market, prices=("1.95", "3.40", "3.50"), seq=seq)

    response = api.post_json("/api/bets", bet_body((home.id, "1.95")))
    assert (response.status_code, response.json()["bet"]["legs"][0]["price"]) == (201, "1.95")


def test_a_suspension_rejects_the_next_bet_while_the_live_state_still_says_open(api, traded):
    market, decide = traded
    decide(market_suspend, market=market)
    home = selections_of(market)[0]
    assert error_of(api.post_json("/api/bets", bet_body((home.id, "2.10")))) == (409, "market_suspended", "selections")


def test_a_result_closes_the_market_to_bets_at_once(api, traded):
    market, decide = traded
    home = selections_of(market)[0]
    decide(market_result, market=market, winners=[home.id])
    assert error_of(api.post_json("/api/bets", bet_body((home.id, "2.10")))) == (409, "market_closed", "selections")
    assert not Bet.objects.filter(status=Bet.Status.ACCEPTED, legs__market=market).exists()


def test_the_cash_out_quote_follows_the_traders_price_at_once(api, punter, traded):
    market, decide = traded
    home = selections_of(market)[0]
    bet_accepted(punter, home, stake="10.00")
    decide(selection_price_set, selection=home, price=Decimal("1.50"))
    # Fair value 21.00 / 1.50 = 14.00, less the 5 % margin = 13.30 (at the live 2.10 it is 9.50).
    assert api.get("/api/bets").json()["bets"][0]["cash_out"] == {"available": True, "quote": "13.30"}


def test_a_bet_placed_the_moment_a_new_price_commits_is_priced_at_it(
    punter, traded, django_capture_on_commit_callbacks
):
    market, _ = traded
    home = selections_of(market)[0]
    placed = []

    def bet_at_the_old_price() -> None:
        legs = [LegRequest(selection_id=home.id, price_seen=Decimal("2.10"))]
        placed.append(bet_place(user=punter, idempotency_key=uuid.uuid4().hex, stake=Decimal("5.00"), legs=legs))

    with django_capture_on_commit_callbacks(execute=True):
        # Registered first: it runs as soon as the change commits, before anything the change
        # itself left for after the commit.
        transaction.on_commit(bet_at_the_old_price)
        selection_price_set(selection=home, price=Decimal("1.80"))

    (placement,) = placed
    assert (placement.bet.status, placement.bet.reject_code) == (Bet.Status.REJECTED, "price_changed")
    assert placement.bet.legs.all()[0].price == Decimal("1.80")


def test_a_decision_that_cannot_be_recorded_for_bets_is_refused_and_changes_nothing(traded, settings):
    market, decide = traded
    home = selections_of(market)[0]
    original = settings.REDIS_URL
    settings.REDIS_URL = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    redis_shared.cache_clear()
    try:
        with pytest.raises(DecisionNotRecorded):
            decide(selection_price_set, selection=home, price=Decimal("1.80"))
        with pytest.raises(DecisionNotRecorded):
            decide(market_suspend, market=market)
    finally:
        # The shared client made again from the real address, never the dead one (later tests use it).
        settings.REDIS_URL = original
        redis_shared.cache_clear()
    assert Selection.objects.get(id=home.id).price == Decimal("2.10")
    market.refresh_from_db()
    assert market.status == "open"
