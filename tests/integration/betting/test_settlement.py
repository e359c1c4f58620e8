"""Settlement of resulted markets: singles, accumulators leg by leg, void, idempotence."""

from __future__ import annotations

import io
from decimal import Decimal

import pytest
from django.core.management import CommandError, call_command

from odds.betting.models import Bet, LedgerEntry, Wallet
from odds.betting.selectors.bets import wallet_ledger_balance
from odds.betting.selectors.settlement import markets_awaiting_settlement
from odds.betting.services.settlement import market_bets_settle
from odds.catalogue.models import Market
from odds.catalogue.services.markets import MarketStateError, market_result
from odds.models import OutboxMessage
from odds.tasks import market_settle
from reducers import topics
from reducers.schemas import decode_bet_event
from tests.factories import market_create
from tests.integration.betting.helpers import bet_accepted, selections_of

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def balance(user) -> Decimal:
    return Wallet.objects.get(user=user).balance


def result_and_settle(market: Market, winner) -> None:
    market_result(market=market, winners=[winner.id])
    market_bets_settle(market_id=market.id)


def test_winning_single_is_paid_stake_times_price(punter, market):
    home, _, _ = selections_of(market)
    bet = bet_accepted(punter, home, stake="10.00")
    result_and_settle(market, home)
    bet.refresh_from_db()
    assert (bet.status, bet.payout) == (Bet.Status.WON, Decimal("21.00"))
    assert balance(punter) == Decimal("111.00")


def test_losing_single_is_closed_and_its_stake_goes_to_the_house(punter, market):
    home, draw, _ = selections_of(market)
    bet = bet_accepted(punter, home, stake="10.00")
    result_and_settle(market, draw)
    bet.refresh_from_db()
    assert (bet.status, bet.payout) == (Bet.Status.LOST, Decimal("0.00"))
    assert balance(punter) == Decimal("90.00")
    release = bet.entries.get(kind=LedgerEntry.Kind.STAKE_RELEASE)
    assert (release.debit, release.credit, release.amount) == ("bets_held", "house", Decimal("10.00"))


def test_voided_market_refunds_the_stake(punter, market):
    home, _, _ = selections_of(market)
    bet = bet_accepted(punter, home, stake="10.00")
    market_result(market=market, winners=None)
    market_bets_settle(market_id=market.id)
    bet.refresh_from_db()
    assert (bet.status, bet.payout) == (Bet.Status.VOID, Decimal("10.00"))
    assert balance(punter) == Decimal("100.00")


def test_accumulator_stays_open_while_a_leg_is_undecided(punter, market):
    other = market_create(prices=("1.50", "4.00", "6.00"))
    bet = bet_accepted(punter, selections_of(market)[0], selections_of(other)[0], stake="10.00")
    result_and_settle(market, selections_of(market)[0])
    bet.refresh_from_db()
    assert bet.status == Bet.Status.ACCEPTED
    assert [leg.result for leg in bet.legs.all()] == ["won", "undecided"]


def test_accumulator_is_won_when_every_leg_won(punter, market):
    other = market_create(prices=("1.50", "4.00", "6.00"))
    bet = bet_accepted(punter, selections_of(market)[0], selections_of(other)[0], stake="10.00")
    result_and_settle(market, selections_of(market)[0])
    result_and_settle(other, selections_of(other)[0])
    bet.refresh_from_db()
    assert (bet.status, bet.payout) == (Bet.Status.WON, Decimal("31.50"))
    assert balance(punter) == Decimal("121.50")


def test_accumulator_counts_a_void_leg_at_price_one(punter, market):
    other = market_create(prices=("1.50", "4.00", "6.00"))
    bet = bet_accepted(punter, selections_of(market)[0], selections_of(other)[0], stake="10.00")
    result_and_settle(market, selections_of(market)[0])
    market_result(market=other, winners=None)
    market_bets_settle(market_id=other.id)
    bet.refresh_from_db()
    assert (bet.status, bet.payout) == (Bet.Status.WON, Decimal("21.00"))


def test_accumulator_is_lost_when_one_leg_loses_even_with_legs_undecided(punter, market):
    other = market_create(prices=("1.50", "4.00", "6.00"))
    bet = bet_accepted(punter, selections_of(market)[0], selections_of(other)[0], stake="10.00")
    result_and_settle(market, selections_of(market)[1])
    bet.refresh_from_db()
    assert bet.status == Bet.Status.LOST


def test_settling_twice_pays_once(punter, market):
    home, _, _ = selections_of(market)
    bet_accepted(punter, home, stake="10.00")
    result_and_settle(market, home)
    market_bets_settle(market_id=market.id)
    market_settle.apply(args=[market.id])
    assert balance(punter) == Decimal("111.00")
    assert LedgerEntry.objects.filter(kind=LedgerEntry.Kind.PAYOUT, wallet__user=punter).count() == 1


def test_ledger_sums_match_the_balance_after_settlement(punter, market):
    home, draw, away = selections_of(market)
    for selection in (home, draw, away):
        bet_accepted(punter, selection, stake="5.00")
    result_and_settle(market, away)
    wallet = Wallet.objects.get(user=punter)
    assert wallet.balance == Decimal("102.50")
    assert wallet_ledger_balance(wallet=wallet) == wallet.balance


def test_settlement_marks_the_market_settled(punter, market):
    bet_accepted(punter, selections_of(market)[0])
    result_and_settle(market, selections_of(market)[0])
    market.refresh_from_db()
    assert market.status == Market.Status.SETTLED


def test_settled_market_queues_a_tombstone_for_the_markets_topic(market):
    result_and_settle(market, selections_of(market)[0])
    last = OutboxMessage.objects.filter(topic=topics.markets(), key=str(market.id).encode()).latest("id")
    assert last.value is None


def test_settled_bet_queues_its_settled_event(punter, market):
    bet = bet_accepted(punter, selections_of(market)[0])
    result_and_settle(market, selections_of(market)[0])
    message = OutboxMessage.objects.filter(topic=topics.bets(), key=str(bet.id).encode()).latest("id")
    assert message.value is not None
    assert decode_bet_event(bytes(message.value)).event_id == f"{bet.id}:settled"


def test_a_market_without_results_is_not_settled(punter, market):
    bet = bet_accepted(punter, selections_of(market)[0])
    Market.objects.filter(id=market.id).update(status=Market.Status.CLOSED)
    summary = market_bets_settle(market_id=market.id)
    bet.refresh_from_db()
    assert (summary.bets_seen, bet.status) == (0, Bet.Status.ACCEPTED)


def test_resulting_a_market_settles_its_bets_after_commit(
    punter, market, celery_inline, kafka_topics, django_capture_on_commit_callbacks
):
    home, _, _ = selections_of(market)
    bet = bet_accepted(punter, home)
    with django_capture_on_commit_callbacks(execute=True):
        market_result(market=market, winners=[home.id])
    bet.refresh_from_db()
    assert bet.status == Bet.Status.WON


def test_sweep_finds_resulted_markets_whose_settlement_was_lost(punter, market):
    bet_accepted(punter, selections_of(market)[0])
    market_result(market=market, winners=[selections_of(market)[0].id])
    assert market.id in markets_awaiting_settlement()


def test_a_resulted_market_cannot_be_resulted_again(punter, market):
    home, draw, _ = selections_of(market)
    market_result(market=market, winners=[home.id])
    with pytest.raises(MarketStateError, match="already resulted"):
        market_result(market=market, winners=[draw.id])


def test_reconcile_wallets_passes_when_every_balance_matches_its_ledger(punter, market):
    bet_accepted(punter, selections_of(market)[0])
    result_and_settle(market, selections_of(market)[0])
    out = io.StringIO()
    call_command("reconcile_wallets", stdout=out)
    assert "wallets match their ledger" in out.getvalue()


def test_reconcile_wallets_fails_on_a_balance_changed_outside_the_ledger(punter):
    Wallet.objects.filter(user=punter).update(balance=Decimal("5000.00"))
    with pytest.raises(CommandError, match="1 wallet"):
        call_command("reconcile_wallets", stdout=io.StringIO())


def _punter_news(redis_client, punter):
    from store import keys

    pubsub = redis_client.pubsub()
    pubsub.subscribe(keys.punter_channel(punter.id))
    assert pubsub.get_message(timeout=2)["type"] == "subscribe"
    return pubsub


def _next_message(pubsub) -> dict | None:
    import orjson

    message = pubsub.get_message(timeout=2)
    return None if message is None else orjson.loads(message["data"])


def test_a_settled_bet_is_announced_to_its_punter_after_commit(
    punter, market, redis_client, django_capture_on_commit_callbacks
):
    home, _, _ = selections_of(market)
    bet = bet_accepted(punter, home, stake="10.00")
    news = _punter_news(redis_client, punter)
    with django_capture_on_commit_callbacks(execute=False) as pending:
        result_and_settle(market, home)
    assert _next_message(news) is None  # nothing before the commit
    for callback in pending:
        callback()
    assert _next_message(news) == {
        "type": "bet.settled",
        "v": 1,
        "bet": {"id": bet.id, "status": "won", "title": home.name, "stake": "10.00", "payout": "21.00"},
        "wallet": {"currency": "GBP", "balance": "111.00"},
    }


def test_a_voided_bet_is_announced_with_its_stake_back(
    punter, market, redis_client, django_capture_on_commit_callbacks
):
    home, _, _ = selections_of(market)
    bet = bet_accepted(punter, home, stake="10.00")
    news = _punter_news(redis_client, punter)
    with django_capture_on_commit_callbacks(execute=True):
        market_result(market=market, winners=None)
        market_bets_settle(market_id=market.id)
    message = _next_message(news)
    assert message is not None
    assert (message["bet"]["id"], message["bet"]["status"], message["bet"]["payout"]) == (bet.id, "void", "10.00")


def test_a_won_leg_of_an_open_accumulator_is_announced_to_its_punter(
    punter, market, redis_client, django_capture_on_commit_callbacks
):
    other = market_create(prices=("1.50", "4.00", "6.00"))
    home = selections_of(market)[0]
    bet = bet_accepted(punter, home, selections_of(other)[0], stake="10.00")
    news = _punter_news(redis_client, punter)
    with django_capture_on_commit_callbacks(execute=True):
        result_and_settle(market, home)
    assert _next_message(news) == {
        "type": "bet.legs",
        "v": 1,
        "bet": {"id": bet.id, "legs": [{"selection_id": home.id, "result": "won"}]},
    }


def test_the_rest_quote_of_an_accumulator_with_a_won_leg_is_the_streamed_views_value(punter, market):
    from odds.betting.selectors.bets import bet_cash_out_quote
    from reducers.subscriptions import spec_from_json
    from reducers.views import bets_summary

    other = market_create(prices=("1.50", "4.00", "6.00"))
    home, live = selections_of(market)[0], selections_of(other)[0]
    bet = bet_accepted(punter, home, live, stake="10.00")
    result_and_settle(market, home)
    bet.refresh_from_db()
    quote = bet_cash_out_quote(bet=bet)
    assert quote is not None
    legs = [
        {"selection_id": leg.selection_id, "market_id": leg.market_id, "price": str(leg.price), "result": leg.result}
        for leg in bet.legs.all()
    ]
    spec = spec_from_json({"view": "bets", "bets": [{"bet_id": bet.id, "stake": "10.00", "legs": legs}]})
    closed = {"market_id": market.id, "status": "closed", "tradable": False, "selections": []}
    open_ = {
        "market_id": other.id,
        "status": "open",
        "tradable": True,
        "selections": [{"id": live.id, "price": str(live.price), "status": "active"}],
    }
    assert bets_summary(spec, {market.id: closed, other.id: open_}) == [{"bet_id": bet.id, "cash_out": str(quote)}]
