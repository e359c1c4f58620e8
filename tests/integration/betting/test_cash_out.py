"""GET /api/bets with live cash-out quotes, POST /api/bets/<id>/cash-out (the quote seen, or the
quote it moved to within the punter's tolerance), GET /api/wallet."""

from __future__ import annotations

from decimal import Decimal

import pytest

from odds.betting.models import Bet, LedgerEntry, Wallet
from odds.betting.services.settlement import market_bets_settle
from odds.catalogue.services.markets import market_result
from odds.models import OutboxMessage
from reducers import topics
from reducers.schemas import decode_bet_event
from tests.factories import live_state_write, market_create, user_create
from tests.integration.betting.helpers import bet_accepted, error_of, selections_of

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

# A single of 10.00 at 2.10 with its price live at 1.50 is quoted 21.00 / 1.50 less 5 % = 13.30, the
# quote the punter confirms below. The price then shortens to 1.40 (21.00 / 1.40 less 5 % = 14.25,
# a higher quote) or drifts to 1.60 (21.00 / 1.60 less 5 % = 12.46, a lower one).
SEEN = ("1.50", "4.00", "6.00")
HIGHER = ("1.40", "4.00", "6.00")
LOWER = ("1.60", "4.00", "6.00")
# Tolerance sent with the cash-out: ``None`` leaves the field out (the default, ``better``).
BETTER = [pytest.param("better", id="better"), pytest.param(None, id="default")]


def cash_out(api, bet: Bet, quote: str, accept: str | None):
    body = {"v": 1, "quote": quote} if accept is None else {"v": 1, "quote": quote, "accept": accept}
    return api.post_json(f"/api/bets/{bet.id}/cash-out", body)


def money_of(punter, bet: Bet) -> tuple[str, Decimal, list[str], list[str]]:
    """The bet's status, the punter's balance, the bet's ledger entries and its events in the outbox."""
    bet.refresh_from_db()
    messages = OutboxMessage.objects.filter(topic=topics.bets(), key=str(bet.id).encode()).order_by("id")
    events = [decode_bet_event(bytes(m.value)).type for m in messages if m.value is not None]
    entries = sorted(bet.entries.values_list("kind", flat=True))
    return bet.status, Wallet.objects.get(user=punter).balance, entries, events


UNTOUCHED = (Bet.Status.ACCEPTED, Decimal("90.00"), [LedgerEntry.Kind.STAKE], ["placed"])


def test_open_bet_lists_its_live_cash_out_quote(api, punter, market, redis_client):
    bet = bet_accepted(punter, selections_of(market)[0], stake="10.00")
    live_state_write(redis_client, market, prices=("1.50", "4.00", "6.00"))
    listed = api.get("/api/bets").json()["bets"]
    # Fair value 21.00 / 1.50 = 14.00, less the 5 % margin = 13.30.
    assert [(b["id"], b["cash_out"]) for b in listed] == [(bet.id, {"available": True, "quote": "13.30"})]


def test_cash_out_is_unavailable_while_the_market_is_suspended(api, punter, market, redis_client):
    bet_accepted(punter, selections_of(market)[0])
    live_state_write(redis_client, market, prices=("1.50", "4.00", "6.00"), status="suspended")
    listed = api.get("/api/bets").json()["bets"]
    assert listed[0]["cash_out"] == {"available": False, "quote": None}


def test_bet_list_filters_open_and_settled_bets(api, punter, market):
    other = market_create()
    open_bet = bet_accepted(punter, selections_of(other)[0])
    settled = bet_accepted(punter, selections_of(market)[0])
    market_result(market=market, winners=[selections_of(market)[0].id])
    market_bets_settle(market_id=market.id)
    open_ids = [b["id"] for b in api.get("/api/bets?state=open").json()["bets"]]
    settled_ids = [b["id"] for b in api.get("/api/bets?state=settled").json()["bets"]]
    assert (open_ids, settled_ids) == ([open_bet.id], [settled.id])


def test_bet_list_shows_prices_in_the_requested_format(api, punter, market):
    bet_accepted(punter, selections_of(market)[0])
    listed = api.get("/api/bets?format=fractional").json()["bets"]
    assert (listed[0]["odds_display"], listed[0]["legs"][0]["price_display"]) == ("11/10", "11/10")


def test_bet_list_with_an_unknown_format_gets_a_400_naming_it(api):
    assert error_of(api.get("/api/bets?format=roman")) == (400, "invalid", "format")


def test_bet_list_shows_only_the_punters_own_bets(api, market):
    bet_accepted(user_create(), selections_of(market)[0])
    assert api.get("/api/bets").json()["bets"] == []


@pytest.mark.parametrize("accept", ["exact", "better", "any", None])
def test_cash_out_at_the_quote_seen_pays_it_and_closes_the_bet(api, punter, market, redis_client, accept):
    bet = bet_accepted(punter, selections_of(market)[0], stake="10.00")
    live_state_write(redis_client, market, prices=SEEN)
    response = cash_out(api, bet, "13.30", accept)
    assert response.status_code == 200, response.json()
    assert (response.json()["bet"]["status"], response.json()["bet"]["payout"]) == ("cashed_out", "13.30")
    assert Wallet.objects.get(user=punter).balance == Decimal("103.30")


def test_cash_out_posts_stake_release_and_cash_out_entries(api, punter, market, redis_client):
    bet = bet_accepted(punter, selections_of(market)[0], stake="10.00")
    live_state_write(redis_client, market, prices=SEEN)
    api.post_json(f"/api/bets/{bet.id}/cash-out", {"quote": "13.30"})
    kinds = sorted(bet.entries.values_list("kind", flat=True))
    assert kinds == sorted([LedgerEntry.Kind.STAKE, LedgerEntry.Kind.STAKE_RELEASE, LedgerEntry.Kind.CASH_OUT])


@pytest.mark.parametrize("accept", BETTER)
def test_a_higher_quote_is_paid_at_the_higher_quote_under_better(api, punter, market, redis_client, accept):
    bet = bet_accepted(punter, selections_of(market)[0], stake="10.00")
    live_state_write(redis_client, market, prices=HIGHER)
    response = cash_out(api, bet, "13.30", accept)
    assert (response.status_code, response.json()["bet"]["payout"]) == (200, "14.25")
    assert bet.entries.get(kind=LedgerEntry.Kind.CASH_OUT).amount == Decimal("14.25")
    assert money_of(punter, bet) == (
        Bet.Status.CASHED_OUT,
        Decimal("104.25"),
        sorted([LedgerEntry.Kind.STAKE, LedgerEntry.Kind.STAKE_RELEASE, LedgerEntry.Kind.CASH_OUT]),
        ["placed", "cashed_out"],
    )


@pytest.mark.parametrize("accept", BETTER)
def test_a_lower_quote_is_refused_with_it_under_better_and_moves_no_money(api, punter, market, redis_client, accept):
    bet = bet_accepted(punter, selections_of(market)[0], stake="10.00")
    live_state_write(redis_client, market, prices=LOWER)
    response = cash_out(api, bet, "13.30", accept)
    assert (error_of(response), response.json()["error"]["quote"]) == ((409, "quote_changed", "quote"), "12.46")
    assert money_of(punter, bet) == UNTOUCHED


@pytest.mark.parametrize(("prices", "current"), [(HIGHER, "14.25"), (LOWER, "12.46")], ids=["higher", "lower"])
def test_exact_refuses_a_quote_that_moved_either_way(api, punter, market, redis_client, prices, current):
    bet = bet_accepted(punter, selections_of(market)[0], stake="10.00")
    live_state_write(redis_client, market, prices=prices)
    response = cash_out(api, bet, "13.30", "exact")
    assert (error_of(response), response.json()["error"]["quote"]) == ((409, "quote_changed", "quote"), current)
    assert money_of(punter, bet) == UNTOUCHED


def test_any_pays_a_lower_quote_at_the_lower_quote(api, punter, market, redis_client):
    bet = bet_accepted(punter, selections_of(market)[0], stake="10.00")
    live_state_write(redis_client, market, prices=LOWER)
    response = cash_out(api, bet, "13.30", "any")
    assert (response.status_code, response.json()["bet"]["payout"]) == (200, "12.46")
    assert money_of(punter, bet)[:2] == (Bet.Status.CASHED_OUT, Decimal("102.46"))


@pytest.mark.parametrize("accept", ["none", "Better", "", 1, None, ["any"]])
def test_an_unknown_tolerance_gets_a_400_naming_accept(api, punter, market, redis_client, accept):
    bet = bet_accepted(punter, selections_of(market)[0], stake="10.00")
    live_state_write(redis_client, market, prices=SEEN)
    response = api.post_json(f"/api/bets/{bet.id}/cash-out", {"v": 1, "quote": "13.30", "accept": accept})
    assert error_of(response) == (400, "invalid", "accept")
    assert money_of(punter, bet) == UNTOUCHED


def test_cash_out_of_a_suspended_market_is_unavailable(api, punter, market, redis_client):
    bet = bet_accepted(punter, selections_of(market)[0])
    live_state_write(redis_client, market, prices=("1.50", "4.00", "6.00"), status="suspended")
    response = api.post_json(f"/api/bets/{bet.id}/cash-out", {"quote": "13.30"})
    assert error_of(response) == (409, "cash_out_unavailable", "quote")


def test_cash_out_of_a_settled_bet_is_unavailable(api, punter, market):
    bet = bet_accepted(punter, selections_of(market)[0])
    market_result(market=market, winners=[selections_of(market)[1].id])
    market_bets_settle(market_id=market.id)
    response = api.post_json(f"/api/bets/{bet.id}/cash-out", {"quote": "1.00"})
    assert error_of(response) == (409, "cash_out_unavailable", "quote")


def test_cash_out_of_another_punters_bet_is_404(api, market):
    bet = bet_accepted(user_create(), selections_of(market)[0])
    response = api.post_json(f"/api/bets/{bet.id}/cash-out", {"quote": "13.30"})
    assert error_of(response)[:2] == (404, "not_found")


def test_cash_out_without_a_quote_gets_a_400_naming_it(api, punter, market):
    bet = bet_accepted(punter, selections_of(market)[0])
    assert error_of(api.post_json(f"/api/bets/{bet.id}/cash-out", {})) == (400, "required", "quote")


def test_wallet_shows_the_balance_and_recent_ledger(api, punter, market):
    bet = bet_accepted(punter, selections_of(market)[0], stake="10.00")
    body = api.get("/api/wallet").json()
    assert body["wallet"] == {"currency": "GBP", "balance": "90.00"}
    assert [(e["kind"], e["amount"], e["balance_after"], e["bet_id"]) for e in body["ledger"]] == [
        ("stake", "-10.00", "90.00", bet.id),
        ("deposit", "100.00", "100.00", None),
    ]


def test_wallet_of_an_anonymous_user_is_401(client):
    assert error_of(client.get("/api/wallet"))[:2] == (401, "not_authenticated")
