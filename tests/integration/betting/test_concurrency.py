"""Many bets on one wallet at the same time: the wallet lock keeps the balance and the ledger right."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from decimal import Decimal

import pytest
from django.db import connection

from odds.betting.models import Bet, Wallet
from odds.betting.selectors.bets import wallet_ledger_balance
from odds.betting.services.bets import LegRequest, Placement, bet_place
from tests.factories import market_create, user_create
from tests.integration.betting.helpers import selections_of

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

THREADS = 12


def run_together(work: Callable[[int], Placement], count: int) -> list[Placement]:
    """Start ``count`` threads at one barrier; each runs ``work(i)`` on its own connection."""
    barrier = threading.Barrier(count)
    results: list[Placement] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def target(i: int) -> None:
        try:
            barrier.wait()
            placement = work(i)
            with lock:
                results.append(placement)
        except BaseException as exc:
            with lock:
                errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=target, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors, errors
    return results


@pytest.fixture
def rich_market(services, redis_client):
    return market_create(prices=("2.10", "3.40", "3.50"))


def test_concurrent_bets_never_overdraw_the_wallet(rich_market):
    user = user_create(balance="100.00")
    home = selections_of(rich_market)[0]

    def place(i: int) -> Placement:
        return bet_place(
            user=user,
            idempotency_key=f"concurrent-{i}",
            stake=Decimal("15.00"),
            legs=[LegRequest(selection_id=home.id, price_seen=home.price)],
        )

    placements = run_together(place, THREADS)
    accepted = [p for p in placements if p.bet.status == Bet.Status.ACCEPTED]
    rejected = [p for p in placements if p.bet.status == Bet.Status.REJECTED]
    assert (len(accepted), len(rejected)) == (6, THREADS - 6)
    assert {p.bet.reject_code for p in rejected} == {"insufficient_funds"}
    assert Wallet.objects.get(user=user).balance == Decimal("10.00")


def test_concurrent_bets_leave_the_ledger_equal_to_the_balance(rich_market):
    user = user_create(balance="100.00")
    home = selections_of(rich_market)[0]

    def place(i: int) -> Placement:
        return bet_place(
            user=user,
            idempotency_key=uuid.uuid4().hex,
            stake=Decimal("7.77"),
            legs=[LegRequest(selection_id=home.id, price_seen=home.price)],
        )

    run_together(place, THREADS)
    wallet = Wallet.objects.get(user=user)
    assert wallet.balance >= 0
    assert wallet_ledger_balance(wallet=wallet) == wallet.balance


def test_concurrent_retries_of_one_key_place_one_bet(rich_market):
    user = user_create(balance="100.00")
    home = selections_of(rich_market)[0]

    def place(i: int) -> Placement:
        return bet_place(
            user=user,
            idempotency_key="one-slip",
            stake=Decimal("10.00"),
            legs=[LegRequest(selection_id=home.id, price_seen=home.price)],
        )

    placements = run_together(place, THREADS)
    assert len({p.bet.id for p in placements}) == 1
    assert sum(p.created for p in placements) == 1
    assert Wallet.objects.get(user=user).balance == Decimal("90.00")
