"""Customer stake limits and referral (docs/referral.md), against the real database: a bet above
the customer's limit is held pending for a trader, who accepts or declines it in time; no answer
declines it; two traders, or a trader and the resolver, decide it once."""

from __future__ import annotations

import threading
import uuid
from datetime import timedelta
from decimal import Decimal

import orjson
import pytest
from django.db import connection
from django.utils import timezone

from odds.audit.models import AuditEntry
from odds.betting.models import Bet, LedgerEntry, Wallet
from odds.betting.selectors.bets import wallet_ledger_balance
from odds.betting.services.bet_delay import bets_delay_resolve
from odds.betting.services.bets import BetInvalid, LegRequest, bet_place
from odds.betting.services.referrals import OfferRefused, ReferralRefused, offer_answer, referral_decide, referral_offer
from odds.catalogue.models import Competition, Event, Sport
from odds.catalogue.services.markets import market_resume, market_suspend
from odds.models import OutboxMessage
from odds.trading.models import CustomerLimit, CustomerSportLimit
from odds.trading.services.customers import LimitRefused, customer_limits_set
from reducers import topics
from reducers.schemas import BetEvent, decode_bet_event
from reducers.trading import OFFER_WINDOW_S, REFERRAL_WINDOW_S, referral_reason
from store import keys
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


# --- a trader's counter-offer (docs/referral.md) ---


def referred(customer, trader, market, stake: str = "150.00") -> Bet:
    customer_limits_set(customer=customer, stake_factor=Decimal("0.01"), sport_limits={}, by=trader)
    bet = place(customer, market, stake)
    assert bet.referred_limit == Decimal("100.00")
    return bet


def test_a_punter_taking_a_lower_stake_gets_the_rest_of_the_stake_back(customer, trader, market):
    bet = referred(customer, trader, market)
    offered = referral_offer(bet_id=bet.id, stake=Decimal("100.00"), price=None, by=trader, reason="our limit")
    assert (offered.offer_stake, offered.offer_price, offered.offer_return) == (
        Decimal("100.00"),
        None,
        Decimal("210.00"),
    )
    assert offered.accept_at is not None
    assert offered.offered_at is not None
    assert offered.accept_at - offered.offered_at == timedelta(seconds=OFFER_WINDOW_S)
    entry = AuditEntry.objects.get(kind=AuditEntry.Kind.REFERRAL_OFFER, object_id=str(bet.id))
    assert (entry.after["stake"], entry.before["stake"], entry.reason) == ("100.00", "150.00", "our limit")
    assert balance(customer) == Decimal("850.00")

    taken = offer_answer(user=customer, bet_id=bet.id, accept=True)
    assert (taken.status, taken.stake, taken.potential_return) == (
        Bet.Status.ACCEPTED,
        Decimal("100.00"),
        Decimal("210.00"),
    )
    assert balance(customer) == Decimal("900.00")
    assert LedgerEntry.objects.get(bet=bet, kind=LedgerEntry.Kind.STAKE_RETURN).amount == Decimal("50.00")
    placed = events(bet)[-1]
    assert (placed.type, placed.stake, placed.potential_return) == ("placed", Decimal("100.00"), Decimal("210.00"))
    # Settled later, the book holds exactly the new stake: paid from it, nothing left held.
    stored = Bet.objects.get(id=bet.id)
    assert (stored.stake, stored.offer_stake) == (Decimal("100.00"), Decimal("100.00"))


def test_a_punter_taking_another_price_on_a_single_gets_it_on_the_leg(customer, trader, market):
    bet = referred(customer, trader, market)
    referral_offer(bet_id=bet.id, stake=None, price=Decimal("1.80"), by=trader)
    taken = offer_answer(user=customer, bet_id=bet.id, accept=True)
    assert (taken.status, taken.stake, taken.odds, taken.potential_return) == (
        Bet.Status.ACCEPTED,
        Decimal("150.00"),
        Decimal("1.80"),
        Decimal("270.00"),
    )
    assert taken.legs.get().price == Decimal("1.80")
    assert not LedgerEntry.objects.filter(bet=bet, kind=LedgerEntry.Kind.STAKE_RETURN).exists()
    assert [leg.price for leg in events(bet)[-1].legs] == [Decimal("1.80")]
    assert balance(customer) == Decimal("850.00")


def test_an_offer_goes_on_the_bets_topic_for_the_ticker_with_its_terms_and_deadline(customer, trader, market):
    bet = referred(customer, trader, market)
    offered_bet = referral_offer(bet_id=bet.id, stake=Decimal("50.00"), price=Decimal("1.80"), by=trader)
    offered = events(bet)[-1]
    assert (offered.type, offered.event_id) == ("offered", f"{bet.id}:offered")
    assert offered.reason == "offered £50.00 at 1.80, returns £90.00"
    assert offered_bet.accept_at is not None
    assert offered.until == int(offered_bet.accept_at.timestamp() * 1000)
    assert (offered.stake, offered.potential_return) == (bet.stake, bet.potential_return), "the bet as it stands"


def test_a_punter_turning_an_offer_down_gets_the_whole_stake_back(customer, trader, market):
    bet = referred(customer, trader, market)
    referral_offer(bet_id=bet.id, stake=Decimal("50.00"), price=None, by=trader)
    turned = offer_answer(user=customer, bet_id=bet.id, accept=False)
    assert (turned.status, turned.reject_code, turned.stake) == (
        Bet.Status.REJECTED,
        "offer_declined",
        Decimal("150.00"),
    )
    assert turned.reject_message == "You turned down the trader's offer, so the bet was not placed."
    assert balance(customer) == Decimal("1000.00")
    assert events(bet)[-1].type == "rejected"


def test_an_offer_not_answered_in_time_lapses_and_a_late_answer_is_refused(customer, trader, market):
    bet = referred(customer, trader, market)
    referral_offer(bet_id=bet.id, stake=Decimal("50.00"), price=None, by=trader)
    Bet.objects.filter(id=bet.id).update(accept_at=timezone.now() - timedelta(milliseconds=1))
    with pytest.raises(OfferRefused) as late:
        offer_answer(user=customer, bet_id=bet.id, accept=True)
    assert late.value.code == "offer_expired"
    assert bets_delay_resolve().rejected == 1
    bet.refresh_from_db()
    assert (bet.status, bet.reject_code, bet.stake) == (Bet.Status.REJECTED, "offer_expired", Decimal("150.00"))
    assert balance(customer) == Decimal("1000.00")
    with pytest.raises(OfferRefused) as after:
        offer_answer(user=customer, bet_id=bet.id, accept=True)
    assert after.value.code == "no_offer"


def test_while_an_offer_waits_the_trader_cannot_decide_or_offer_again(customer, trader, market):
    bet = referred(customer, trader, market)
    referral_offer(bet_id=bet.id, stake=Decimal("50.00"), price=None, by=trader)
    with pytest.raises(ReferralRefused, match="offer waiting"):
        referral_decide(bet_id=bet.id, accept=True, by=trader)
    with pytest.raises(ReferralRefused, match="offer waiting"):
        referral_offer(bet_id=bet.id, stake=Decimal("40.00"), price=None, by=trader)
    assert Bet.objects.get(id=bet.id).offer_stake == Decimal("50.00")


def test_an_offer_out_of_bounds_is_refused_and_changes_nothing(customer, trader, market):
    bet = referred(customer, trader, market)
    for stake, price in [(None, None), ("150.00", None), ("0.05", None), (None, "2.10"), (None, "0.50")]:
        with pytest.raises(ReferralRefused, match="an offer is a lower stake"):
            referral_offer(
                bet_id=bet.id,
                stake=Decimal(stake) if stake else None,
                price=Decimal(price) if price else None,
                by=trader,
            )
    stored = Bet.objects.get(id=bet.id)
    assert (stored.offered_at, stored.status) == (None, Bet.Status.PENDING)
    assert not AuditEntry.objects.filter(kind=AuditEntry.Kind.REFERRAL_OFFER).exists()


def test_only_the_bets_punter_answers_and_only_an_offer(customer, trader, market):
    bet = referred(customer, trader, market)
    with pytest.raises(OfferRefused) as nothing:
        offer_answer(user=customer, bet_id=bet.id, accept=True)
    assert nothing.value.code == "no_offer"
    referral_offer(bet_id=bet.id, stake=Decimal("50.00"), price=None, by=trader)
    stranger = user_create(balance="10.00")
    with pytest.raises(Bet.DoesNotExist):
        offer_answer(user=stranger, bet_id=bet.id, accept=True)
    assert Bet.objects.get(id=bet.id).status == Bet.Status.PENDING


def test_an_offer_taken_after_its_market_suspended_is_refused_with_the_stake_back(
    customer, trader, market, django_capture_on_commit_callbacks
):
    bet = referred(customer, trader, market)
    referral_offer(bet_id=bet.id, stake=Decimal("50.00"), price=None, by=trader)
    with django_capture_on_commit_callbacks(execute=False):
        market_suspend(market=market)
    taken = offer_answer(user=customer, bet_id=bet.id, accept=True)
    assert (taken.status, taken.reject_code, taken.stake) == (
        Bet.Status.REJECTED,
        "market_suspended",
        Decimal("150.00"),
    )
    assert balance(customer) == Decimal("1000.00")
    assert not LedgerEntry.objects.filter(bet=bet, kind=LedgerEntry.Kind.STAKE_RETURN).exists()


def test_the_offer_reaches_the_punters_sockets_and_the_api(customer, trader, market, redis_client, client):
    bet = referred(customer, trader, market)
    listener = redis_client.pubsub()
    listener.subscribe(keys.punter_channel(customer.id))
    assert listener.get_message(timeout=5)["type"] == "subscribe"
    referral_offer(bet_id=bet.id, stake=Decimal("60.00"), price=Decimal("2.00"), by=trader)
    message = listener.get_message(timeout=5)
    listener.close()
    frame = orjson.loads(message["data"])
    assert frame["type"] == "bet.offered"
    assert frame["bet"] | {"until": 0, "seconds": 0} == {
        "id": bet.id,
        "stake": "60.00",
        "price": "2.00",
        "potential_return": "120.00",
        "until": 0,
        "seconds": 0,
    }
    assert 0 < frame["bet"]["seconds"] <= OFFER_WINDOW_S
    client.force_login(customer)
    [open_bet] = client.get("/api/bets?state=open").json()["bets"]
    assert open_bet["offer"] == {
        "stake": "60.00",
        "price": "2.00",
        "potential_return": "120.00",
        "until": frame["bet"]["until"],
    }
    answered = client.post(f"/api/bets/{bet.id}/offer", data={"v": 1, "accept": True}, content_type="application/json")
    assert answered.status_code == 200
    assert (answered.json()["bet"]["status"], answered.json()["bet"]["stake"]) == ("accepted", "60.00")
    again = client.post(f"/api/bets/{bet.id}/offer", data={"v": 1, "accept": False}, content_type="application/json")
    assert (again.status_code, again.json()["error"]["code"]) == (409, "no_offer")


def test_the_wager_limit_counts_the_stake_a_lower_offer_kept(customer, trader, market):
    """The stake given back by a lower offer is not wagered: the window of the placement
    statement and the wallet page's (``limit_window``) both count the stake kept."""
    from odds.betting.selectors.wallet import limit_window
    from odds.betting.services.wallet import wallet_limit_set

    wallet_limit_set(user=customer, kind="wager", period="day", amount=Decimal("160.00"))
    bet = referred(customer, trader, market)
    referral_offer(bet_id=bet.id, stake=Decimal("100.00"), price=None, by=trader)
    offer_answer(user=customer, bet_id=bet.id, accept=True)
    window = limit_window(wallet=Wallet.objects.get(user=customer), kind="wager", period="day", now=timezone.now())
    assert window.counted == Decimal("100.00")
    # 100 wagered of 160: a stake of 60 fits, 60.01 does not.
    customer_limits_set(customer=customer, stake_factor=None, sport_limits={}, by=trader)
    assert place(customer, market, "60.00").status == Bet.Status.ACCEPTED
    with pytest.raises(BetInvalid) as over:
        place(customer, market, "0.10")
    assert over.value.code == "over_wager_limit"
