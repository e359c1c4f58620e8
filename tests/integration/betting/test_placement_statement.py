"""The placement statement decides as the platform's bet maths does (``reducers.betting``).

``sb_bet_place`` computes odds, the potential return and the price policy in SQL; these tests
hold it to the Python rules the rest of the platform (cash-out, settlement, the slip) uses.
"""

from __future__ import annotations

import random
import uuid
from decimal import Decimal

import pytest

from odds.betting.models import Bet
from odds.betting.services.bets import MAX_RETURN, BetInvalid, LegRequest, bet_place
from reducers import betting
from tests.factories import live_state_write, market_create, user_create
from tests.integration.betting.helpers import selections_of

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def _price(rng: random.Random) -> Decimal:
    return Decimal(rng.randint(101, 5000)) / 100


def test_odds_and_potential_return_are_those_of_the_bet_maths(services, redis_client):
    rng = random.Random(14)
    user = user_create(balance="10000.00")
    markets = [market_create() for _ in range(3)]
    for _ in range(16):
        prices = []
        for market in markets:
            book = (_price(rng), _price(rng), _price(rng))
            live_state_write(redis_client, market, prices=tuple(str(p) for p in book))
            prices.append(book[0])
        stake = Decimal(rng.randint(10, 2000)) / 100
        legs = [
            LegRequest(selection_id=selections_of(m)[0].id, price_seen=p) for m, p in zip(markets, prices, strict=True)
        ]
        potential = betting.potential_return(stake=stake, prices=prices)
        if potential > MAX_RETURN:
            with pytest.raises(BetInvalid, match="potential return is above"):
                bet_place(user=user, idempotency_key=uuid.uuid4().hex, stake=stake, legs=legs)
            continue
        bet = bet_place(user=user, idempotency_key=uuid.uuid4().hex, stake=stake, legs=legs).bet
        if bet.status == Bet.Status.REJECTED:
            assert bet.reject_code == "insufficient_funds"
            continue
        assert (bet.odds, bet.potential_return) == (
            betting.combined_odds(prices),
            potential,
        ), (stake, prices)


@pytest.mark.parametrize("policy", betting.PRICE_POLICIES)
@pytest.mark.parametrize(("seen", "current"), [("2.10", "2.10"), ("2.10", "2.20"), ("2.10", "2.00")])
def test_price_policy_is_that_of_the_bet_maths(services, redis_client, policy, seen, current):
    market = market_create(prices=("2.10", "3.40", "3.50"))
    live_state_write(redis_client, market, prices=(current, "3.40", "3.50"))
    bet = bet_place(
        user=user_create(),
        idempotency_key=uuid.uuid4().hex,
        stake=Decimal("1.00"),
        legs=[LegRequest(selection_id=selections_of(market)[0].id, price_seen=Decimal(seen))],
        price_policy=policy,
    ).bet
    acceptable = betting.price_acceptable(seen=Decimal(seen), current=Decimal(current), policy=policy)
    assert (bet.status, bet.legs.all()[0].price) == (
        Bet.Status.ACCEPTED if acceptable else Bet.Status.REJECTED,
        Decimal(current),
    )
