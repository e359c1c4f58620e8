"""Customer stake limits and referral (docs/referral.md), against the real database: a bet above
the customer's limit is held pending for a trader, who accepts or declines it in time; no answer
declines it; two traders, or a trader and the resolver, decide it once."""

from __future__ import annotations

import threading
import uuid
from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import connection
from django.utils import timezone

from odds.audit.models import AuditEntry
from odds.betting.models import Bet, LedgerEntry, Wallet
from odds.betting.selectors.bets import wallet_ledger_balance
from odds.betting.services.bet_delay import bets_delay_resolve
from odds.betting.services.bets import LegRequest, bet_place
from odds.betting.services.referrals import ReferralRefused, referral_decide
from odds.catalogue.models import Competition, Event, Sport
from odds.catalogue.services.markets import market_resume, market_suspend
from odds.models import OutboxMessage
from odds.trading.models import CustomerLimit, CustomerSportLimit
from odds.trading.services.customers import LimitRefused, customer_limits_set
from reducers import topics
from reducers.schemas import BetEvent, decode_bet_event
from reducers.trading import REFERRAL_WINDOW_S, referral_reason
from tests.factories import market_create, user_create
from tests.integration.betting.helpers import selections_of

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def trader(services):
    return user_create(balance="0", staff=True)


@pytest.fixture
def customer(services):
    return user_create(balance="1000.00")


@pytest.fixture
def market(services, redis_client):
    return market_create(prices=("2.10", "3.40", "3.50"))


def place(user, market, stake: str) -> Bet:
    home = selections_of(market)[0]
    return bet_place(
        user=user,
        idempotency_key=uuid.uuid4().hex,
        stake=Decimal(stake),
        legs=[LegRequest(selection_id=home.id, price_seen=home.price)],
    ).bet


def events(bet: Bet) -> list[BetEvent]:
    messages = OutboxMessage.objects.filter(topic=topics.bets(), key=str(bet.id).encode()).order_by("id")
    return [decode_bet_event(bytes(m.value)) for m in messages if m.value is not None]


def balance(user) -> Decimal:
    wallet = Wallet.objects.get(user=user)
    assert wallet.balance == wallet_ledger_balance(wallet=wallet)
    return wallet.balance


def sport_of(market) -> Sport:
    return Sport.objects.get(competitions__events=market.event_id)


def test_a_stake_above_the_factors_share_is_referred_with_its_stake_held(customer, trader, market):
    # 0.01 of the market's maximum stake of 10,000.00: 100.00.
    assert customer_limits_set(customer=customer, stake_factor=Decimal("0.01"), sport_limits={}, by=trader)
    at_limit = place(customer, market, "100.00")
    assert (at_limit.status, at_limit.referred_limit) == (Bet.Status.ACCEPTED, None)

    bet = place(customer, market, "150.00")
    assert (bet.status, bet.referred_limit, bet.reject_code) == (Bet.Status.PENDING, Decimal("100.00"), "")
    assert bet.accept_at is not None
    assert bet.accept_at - bet.placed_at == timedelta(seconds=REFERRAL_WINDOW_S)
    assert balance(customer) == Decimal("750.00")
    assert LedgerEntry.objects.get(bet=bet).kind == LedgerEntry.Kind.STAKE
    [referred] = events(bet)
    assert (referred.type, referred.event_id) == ("referred", f"{bet.id}:referred")
    assert referred.reason == referral_reason(stake=Decimal("150.00"), limit=Decimal("100.00"), currency="GBP")
    assert referred.until == int(bet.accept_at.timestamp() * 1000)


def test_a_sports_limit_below_the_factors_share_is_the_limit_on_that_sport_only(customer, trader, market):
    tennis, _ = Sport.objects.get_or_create(slug="tennis", defaults={"name": "Tennis"})
    other = market_create(prices=("1.50", "4.00", "6.00"))
    tour, _ = Competition.objects.get_or_create(sport=tennis, name="Test Tour")
    Event.objects.filter(id=other.event_id).update(competition=tour)
    assert sport_of(other) != sport_of(market)
    customer_limits_set(
        customer=customer,
        stake_factor=Decimal("0.5"),
        sport_limits={sport_of(market).id: Decimal("20.00")},
        by=trader,
    )
    assert place(customer, market, "25.00").referred_limit == Decimal("20.00")
    assert place(customer, other, "25.00").status == Bet.Status.ACCEPTED


def test_a_customer_no_trader_limited_is_never_referred(customer, market):
    assert not Wallet.objects.get(user=customer).customer_limits
    assert place(customer, market, "900.00").status == Bet.Status.ACCEPTED


def test_a_trader_accepting_takes_the_bet_at_the_punters_price_and_is_audited(customer, trader, market, redis_client):
    customer_limits_set(customer=customer, stake_factor=Decimal("0.001"), sport_limits={}, by=trader)
    bet = place(customer, market, "50.00")
    decided = referral_decide(bet_id=bet.id, accept=True, by=trader)
    assert (decided.status, decided.decided_by, decided.legs.get().price) == (
        Bet.Status.ACCEPTED,
        trader,
        Decimal("2.10"),
    )
    assert balance(customer) == Decimal("950.00")
    assert [e.type for e in events(bet)] == ["referred", "placed"]
    entry = AuditEntry.objects.get(kind=AuditEntry.Kind.REFERRAL_ACCEPT, object_id=str(bet.id))
    assert (entry.actor_id, entry.before["status"], entry.after["status"]) == (trader.id, "pending", "accepted")


def test_a_trader_declining_gives_the_stake_back_with_the_reason_the_punter_reads(customer, trader, market):
    customer_limits_set(customer=customer, stake_factor=Decimal("0.001"), sport_limits={}, by=trader)
    bet = place(customer, market, "50.00")
    decided = referral_decide(bet_id=bet.id, accept=False, by=trader, reason="  too   big for this market ")
    assert (decided.status, decided.reject_code) == (Bet.Status.REJECTED, "referral_declined")
    assert decided.reject_message == "A trader declined this bet: too big for this market."
    assert balance(customer) == Decimal("1000.00")
    assert LedgerEntry.objects.get(bet=bet, kind=LedgerEntry.Kind.REFUND).amount == Decimal("50.00")
    rejected = events(bet)[-1]
    assert (rejected.type, rejected.reason) == ("rejected", decided.reject_message)
    assert AuditEntry.objects.get(kind=AuditEntry.Kind.REFERRAL_DECLINE).reason == "too big for this market"


def test_no_answer_in_time_declines_it_and_a_late_answer_is_refused(customer, trader, market):
    customer_limits_set(customer=customer, stake_factor=Decimal("0.001"), sport_limits={}, by=trader)
    bet = place(customer, market, "50.00")
    Bet.objects.filter(id=bet.id).update(accept_at=timezone.now() - timedelta(milliseconds=1))
    with pytest.raises(ReferralRefused, match="has passed"):
        referral_decide(bet_id=bet.id, accept=True, by=trader)
    assert bets_delay_resolve().rejected == 1
    bet.refresh_from_db()
    assert (bet.status, bet.reject_code, bet.decided_by) == (Bet.Status.REJECTED, "referral_expired", None)
    assert balance(customer) == Decimal("1000.00")
    with pytest.raises(ReferralRefused, match="decided already"):
        referral_decide(bet_id=bet.id, accept=True, by=trader)
    assert not AuditEntry.objects.filter(object_id=str(bet.id), kind=AuditEntry.Kind.REFERRAL_ACCEPT).exists()


def test_a_referral_whose_market_suspended_meanwhile_cannot_be_accepted(
    customer, trader, market, django_capture_on_commit_callbacks
):
    customer_limits_set(customer=customer, stake_factor=Decimal("0.001"), sport_limits={}, by=trader)
    bet = place(customer, market, "50.00")
    with django_capture_on_commit_callbacks(execute=False):
        market_suspend(market=market)
        market_resume(market=market)
    decided = referral_decide(bet_id=bet.id, accept=True, by=trader)
    assert (decided.status, decided.reject_code) == (Bet.Status.REJECTED, "market_suspended")
    assert decided.reject_message == "the market was suspended during the referral"
    assert balance(customer) == Decimal("1000.00")


def test_two_traders_deciding_one_referral_at_once_decide_it_once(customer, trader, market):
    other = user_create(balance="0", staff=True)
    customer_limits_set(customer=customer, stake_factor=Decimal("0.001"), sport_limits={}, by=trader)
    bet = place(customer, market, "50.00")
    barrier = threading.Barrier(2)
    outcomes: dict[str, str] = {}

    def decide(who, accept: bool) -> None:
        try:
            barrier.wait()
            outcomes[who.username] = referral_decide(bet_id=bet.id, accept=accept, by=who).status
        except ReferralRefused as refused:
            outcomes[who.username] = f"refused: {refused}"
        finally:
            connection.close()

    threads = [
        threading.Thread(target=decide, args=(trader, True)),
        threading.Thread(target=decide, args=(other, False)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(o.split(":")[0] for o in outcomes.values()) in (["accepted", "refused"], ["refused", "rejected"])
    bet.refresh_from_db()
    winner = trader if outcomes[trader.username] == bet.status else other
    assert bet.decided_by == winner
    assert AuditEntry.objects.filter(object_id=str(bet.id)).count() == 1
    assert LedgerEntry.objects.filter(bet=bet, kind=LedgerEntry.Kind.REFUND).count() == (bet.status == "rejected")
    assert balance(customer) == (Decimal("950.00") if bet.status == "accepted" else Decimal("1000.00"))


def test_a_bet_that_was_not_referred_cannot_be_decided(customer, trader, market):
    bet = place(customer, market, "5.00")
    with pytest.raises(ReferralRefused, match="was not referred"):
        referral_decide(bet_id=bet.id, accept=False, by=trader)


def test_limits_out_of_bounds_are_refused_and_change_nothing(customer, trader, market):
    sport = sport_of(market)
    for factor, limits in [
        (Decimal("2"), {}),
        (Decimal("0.0001"), {}),
        (None, {sport.id: Decimal("0")}),
        (None, {sport.id: Decimal("10000.01")}),
        (None, {sport.id: Decimal("1.001")}),
        (None, {999_999: Decimal("5.00")}),
    ]:
        with pytest.raises(LimitRefused):
            customer_limits_set(customer=customer, stake_factor=factor, sport_limits=limits, by=trader)
    assert not CustomerLimit.objects.filter(user=customer).exists()
    assert not CustomerSportLimit.objects.filter(user=customer).exists()
    assert not Wallet.objects.get(user=customer).customer_limits
    assert not AuditEntry.objects.filter(kind=AuditEntry.Kind.CUSTOMER_LIMIT_SET).exists()


def test_setting_limits_records_what_changed_and_a_repeat_records_nothing(customer, trader, market):
    sport = sport_of(market)
    assert customer_limits_set(
        customer=customer, stake_factor=Decimal("0.1"), sport_limits={sport.id: Decimal("40")}, by=trader, note="sharp"
    )
    assert not customer_limits_set(
        customer=customer, stake_factor=Decimal("0.100"), sport_limits={sport.id: Decimal("40.00")}, by=trader
    )
    assert customer_limits_set(customer=customer, stake_factor=None, sport_limits={sport.id: None}, by=trader)
    first, second = AuditEntry.objects.filter(kind=AuditEntry.Kind.CUSTOMER_LIMIT_SET).order_by("id")
    assert (first.before, first.after, first.reason) == (
        {"stake_factor": None, f"max_stake:{sport.name}": None},
        {"stake_factor": "0.1", f"max_stake:{sport.name}": "40.00"},
        "sharp",
    )
    assert second.after == {"stake_factor": None, f"max_stake:{sport.name}": None}
    # Cleared limits refer nothing; the wallet keeps its flag (the statement finds no limit).
    assert Wallet.objects.get(user=customer).customer_limits
    assert place(customer, market, "900.00").status == Bet.Status.ACCEPTED
