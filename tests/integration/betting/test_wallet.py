"""The punter's wallet: deposits and withdrawals, deposit limits, time-outs and self-exclusion,
through the services, the API, and the placement endpoint uvicorn serves."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from django.test import override_settings
from django.utils import timezone

from odds.betting.models import Bet, LedgerEntry, Wallet, WalletLimit
from odds.betting.selectors.wallet import wallet_limits_view
from odds.betting.services.bets import BetInvalid, CashOutRejected, LegRequest, bet_cash_out, bet_place
from odds.betting.services.settlement import bet_settle
from odds.betting.services.wallet import (
    Break,
    PaymentRefused,
    wallet_break_take,
    wallet_limit_set,
    wallet_payment_deposit,
    wallet_withdraw,
)
from odds.catalogue.services.markets import market_result
from tests.factories import market_create, user_create
from tests.integration.betting.helpers import bet_accepted, bet_body, error_of, first_selection, selections_of
from tests.integration.betting.test_placement_endpoint import post, session_of

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def _balance(user) -> Decimal:
    return Wallet.objects.get(user=user).balance


# --- services ---------------------------------------------------------------------------------


def test_a_deposit_is_one_ledger_entry_and_a_repeat_of_its_request_pays_once(punter):
    first = wallet_payment_deposit(user=punter, amount=Decimal("25.50"), request_id="req-1")
    again = wallet_payment_deposit(user=punter, amount=Decimal("25.50"), request_id="req-1")
    assert (first.created, again.created, again.entry.id) == (True, False, first.entry.id)
    assert _balance(punter) == Decimal("125.50")
    assert first.entry.balance_after == Decimal("125.50")
    assert LedgerEntry.objects.filter(wallet__user=punter, reference="req-1").count() == 1


@pytest.mark.parametrize(
    ("amount", "words"),
    [("0", "above zero"), ("-5", "above zero"), ("1.005", "two decimal places"), ("0.50", "smallest")],
)
def test_a_deposit_of_a_bad_amount_is_refused_in_words(punter, amount, words):
    with pytest.raises(PaymentRefused) as refused:
        wallet_payment_deposit(user=punter, amount=Decimal(amount), request_id="bad")
    assert words in refused.value.message
    assert _balance(punter) == Decimal("100.00")


def test_a_withdrawal_never_exceeds_the_balance(punter):
    with pytest.raises(PaymentRefused) as refused:
        wallet_withdraw(user=punter, amount=Decimal("100.01"), request_id="w-1")
    assert "£100.00" in refused.value.message
    payment = wallet_withdraw(user=punter, amount=Decimal("100.00"), request_id="w-2")
    assert (payment.entry.kind, payment.entry.wallet_delta, _balance(punter)) == (
        LedgerEntry.Kind.WITHDRAWAL,
        Decimal("-100.00"),
        Decimal("0.00"),
    )
    assert wallet_withdraw(user=punter, amount=Decimal("100.00"), request_id="w-2").created is False
    assert _balance(punter) == Decimal("0.00")


def test_a_deposit_over_the_limit_is_refused_saying_how_much_is_left(punter):
    # The punter's first £100 today counts: £50 is left of £150.
    wallet_limit_set(user=punter, kind="deposit", period="day", amount=Decimal("150.00"))
    wallet_payment_deposit(user=punter, amount=Decimal("30.00"), request_id="d-1")
    with pytest.raises(PaymentRefused) as refused:
        wallet_payment_deposit(user=punter, amount=Decimal("20.01"), request_id="d-2")
    assert refused.value.code == "over_deposit_limit"
    assert "£20.00 more" in refused.value.message
    wallet_payment_deposit(user=punter, amount=Decimal("20.00"), request_id="d-3")
    assert _balance(punter) == Decimal("150.00")


def test_a_lower_limit_applies_at_once_and_a_higher_one_after_the_cooling_off(services):
    punter = user_create(balance="0")
    wallet_limit_set(user=punter, kind="deposit", period="week", amount=Decimal("100.00"))
    lowered = wallet_limit_set(user=punter, kind="deposit", period="week", amount=Decimal("40.00"))
    assert (lowered.amount, lowered.pending_amount) == (Decimal("40.00"), None)

    raised = wallet_limit_set(user=punter, kind="deposit", period="week", amount=Decimal("500.00"))
    assert (raised.amount, raised.pending_amount) == (Decimal("40.00"), Decimal("500.00"))
    assert raised.pending_from is not None
    assert timedelta(hours=23, minutes=59) < raised.pending_from - timezone.now() <= timedelta(hours=24)
    with pytest.raises(
        PaymentRefused, match=r"above your weekly deposit limit of £40\.00: you can deposit £40\.00 more"
    ):
        wallet_payment_deposit(user=punter, amount=Decimal("41.00"), request_id="r-1")

    WalletLimit.objects.filter(pk=raised.pk).update(pending_from=timezone.now() - timedelta(seconds=1))
    wallet_payment_deposit(user=punter, amount=Decimal("41.00"), request_id="r-2")
    assert _balance(punter) == Decimal("41.00")
    # The page shows the raise as the limit in force, with what is left of it.
    deposits = wallet_limits_view(wallet=Wallet.objects.get(user=punter), now=timezone.now())[0]
    weekly = next(limit for limit in deposits.limits if limit.period == "week")
    assert (deposits.kind, weekly.amount, weekly.left, weekly.pending_amount) == (
        "deposit",
        Decimal("500.00"),
        Decimal("459.00"),
        None,
    )


@override_settings(DEPOSIT_LIMIT_COOLING_OFF_S=3600)
def test_the_cooling_off_is_a_setting(punter):
    wallet_limit_set(user=punter, kind="deposit", period="month", amount=Decimal("10.00"))
    raised = wallet_limit_set(user=punter, kind="deposit", period="month", amount=Decimal("20.00"))
    assert raised.pending_from is not None
    assert raised.pending_from - timezone.now() <= timedelta(hours=1)


def test_a_break_refuses_deposits_and_cannot_be_shortened(punter):
    long = wallet_break_take(user=punter, length=Break.EXCLUDE_6M)
    until = long.excluded_until
    assert until is not None
    short = wallet_break_take(user=punter, length=Break.TIME_OUT_24H)
    assert (short.excluded_until, short.exclusion) == (until, "self_exclusion")
    with pytest.raises(PaymentRefused) as refused:
        wallet_payment_deposit(user=punter, amount=Decimal("10.00"), request_id="x")
    assert refused.value.code == "excluded"
    assert "self-exclusion runs until" in refused.value.message
    # Taking money out stays possible.
    assert wallet_withdraw(user=punter, amount=Decimal("10.00"), request_id="out").created


def test_a_time_out_refuses_bets_and_cash_out_through_the_services(punter, market):
    open_bet = bet_accepted(punter, first_selection(market))
    wallet_break_take(user=punter, length=Break.TIME_OUT_7D)
    with pytest.raises(BetInvalid) as refused:
        bet_place(
            user=punter,
            idempotency_key="during-break",
            stake=Decimal("5.00"),
            legs=[LegRequest(selection_id=first_selection(market).id, price_seen=Decimal("2.10"))],
        )
    assert refused.value.code == "excluded"
    assert "break from betting runs until" in refused.value.message
    with pytest.raises(CashOutRejected) as no_cash_out:
        bet_cash_out(user=punter, bet_id=open_bet.id, quote_seen=Decimal("1.00"), policy="any")
    assert no_cash_out.value.code == "excluded"
    assert Bet.objects.filter(user=punter).count() == 1


def test_a_break_that_ended_lets_bets_through(punter, market):
    wallet_break_take(user=punter, length=Break.TIME_OUT_24H)
    Wallet.objects.filter(user=punter).update(excluded_until=timezone.now() - timedelta(seconds=1))
    assert bet_accepted(punter, first_selection(market)).status == Bet.Status.ACCEPTED


# --- API --------------------------------------------------------------------------------------


def test_the_deposit_api_pays_once_per_request_id(api, punter):
    body = {"v": 1, "amount": "12.34", "request_id": "form-1"}
    first = api.post_json("/api/wallet/deposits", body)
    again = api.post_json("/api/wallet/deposits", body)
    assert (first.status_code, again.status_code) == (201, 200), first.content
    assert first.json()["wallet"]["balance"] == "112.34"
    assert again.json()["entry"]["id"] == first.json()["entry"]["id"]
    assert _balance(punter) == Decimal("112.34")


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"v": 1, "amount": "abc", "request_id": "a"}, (400, "invalid", "amount")),
        ({"v": 1, "amount": "1.234", "request_id": "a"}, (400, "invalid", "amount")),
        ({"v": 1, "amount": "0", "request_id": "a"}, (400, "invalid", "amount")),
        ({"v": 1, "amount": "5.00"}, (400, "required", "request_id")),
    ],
)
def test_the_deposit_api_refuses_bad_input(api, punter, body, expected):
    response = api.post_json("/api/wallet/deposits", body)
    assert error_of(response) == expected
    assert _balance(punter) == Decimal("100.00")


def test_the_withdrawal_api_refuses_more_than_the_balance(api, punter):
    response = api.post_json("/api/wallet/withdrawals", {"v": 1, "amount": "150.00", "request_id": "w"})
    assert error_of(response) == (400, "insufficient_funds", "amount")
    ok = api.post_json("/api/wallet/withdrawals", {"v": 1, "amount": "40.00", "request_id": "w2"})
    assert ok.status_code == 201
    assert _balance(punter) == Decimal("60.00")


def test_the_limit_api_sets_and_the_deposit_api_enforces(client, api, punter):
    response = client.put(
        "/api/wallet/limits/day", data='{"v": 1, "amount": "130.00"}', content_type="application/json"
    )
    assert response.status_code == 200, response.content
    assert response.json()["limit"]["amount"] == "130.00"
    raised = client.put("/api/wallet/limits/day", data='{"v": 1, "amount": "190"}', content_type="application/json")
    assert raised.json()["limit"]["pending_amount"] == "190.00"
    over = api.post_json("/api/wallet/deposits", {"v": 1, "amount": "31.00", "request_id": "o"})
    assert error_of(over) == (400, "over_deposit_limit", "amount")
    assert "£30.00 more" in over.json()["error"]["message"]
    unknown = client.put("/api/wallet/limits/year", data='{"v": 1, "amount": "1"}', content_type="application/json")
    assert error_of(unknown) == (400, "invalid", "period")
    odd = client.put("/api/wallet/limits/null,null", data='{"v": 1, "amount": "1"}', content_type="application/json")
    assert error_of(odd) == (400, "invalid", "period")


def test_the_break_api_refuses_deposits_and_bets_with_a_403_that_says_until_when(api, punter, market):
    placed = bet_accepted(punter, first_selection(market))
    response = api.post_json("/api/wallet/break", {"v": 1, "length": "time_out_24h"})
    assert response.status_code == 200, response.content
    assert response.json()["break"]["exclusion"] == "time_out"
    deposit = api.post_json("/api/wallet/deposits", {"v": 1, "amount": "5.00", "request_id": "b"})
    assert error_of(deposit) == (403, "excluded", "account")
    bet = api.post_json("/api/bets", bet_body((first_selection(market).id, "2.10")))
    assert error_of(bet) == (403, "excluded", "account")
    assert "runs until" in bet.json()["error"]["message"]
    cash_out = api.post_json(f"/api/bets/{placed.id}/cash-out", {"v": 1, "quote": "1.00", "accept": "any"})
    assert error_of(cash_out) == (403, "excluded", "account")
    assert Bet.objects.get(id=placed.id).status == Bet.Status.ACCEPTED
    assert Bet.objects.filter(user=punter).count() == 1
    unknown = api.post_json("/api/wallet/break", {"v": 1, "length": "forever"})
    assert error_of(unknown) == (400, "invalid", "length")


def test_the_wallet_page_lists_and_filters_the_ledger(api, punter, market):
    bet_accepted(punter, first_selection(market))
    wallet_payment_deposit(user=punter, amount=Decimal("7.00"), request_id="p-1")
    page = api.get("/wallet/")
    assert page.status_code == 200
    text = page.content.decode()
    assert "+£7.00" in text
    assert "Stake held" in text
    assert "£100.00" in text
    deposits = api.get("/wallet/?kind=deposit").content.decode()
    assert "+£7.00" in deposits
    assert "Stake held" not in deposits.split("<tbody>")[1]
    future = api.get("/wallet/?from=2999-01-01").content.decode()
    assert "No entries match these filters" in future
    bad = api.get("/wallet/?from=yesterday").content.decode()
    assert "is not a date" in bad


def test_the_statement_shows_what_moved_the_punters_money_and_no_book_internal_rows(api, punter, market):
    selections = selections_of(market)
    bet = bet_accepted(punter, selections[0])
    market_result(market=market, winners=[selections[1].id])
    bet_settle(bet_id=bet.id)
    assert LedgerEntry.objects.filter(bet=bet, kind=LedgerEntry.Kind.STAKE_RELEASE).exists()
    text = api.get("/wallet/").content.decode()
    rows = text.split("<tbody>")[1].split("</tbody>")[0]
    assert "Stake held" in rows
    assert "Stake to house" not in rows
    assert "£0.00</td>" not in rows
    assert 'value="stake_release"' not in text


# --- the placement endpoint uvicorn serves ----------------------------------------------------


def test_the_placement_endpoint_refuses_a_bet_during_a_time_out(asgi_server, services, redis_client):
    punter = user_create(balance="100.00")
    session = session_of(punter)
    home = selections_of(market_create())[0]
    placed = post(asgi_server, bet_body((home.id, "2.10")), session=session)
    assert placed[0] == 201, placed[2]

    wallet_break_take(user=punter, length=Break.TIME_OUT_24H)
    status, _, body = post(asgi_server, bet_body((home.id, "2.10")), session=session)

    assert (status, body["error"]["code"]) == (403, "excluded"), body
    assert "break from betting runs until" in body["error"]["message"]
    assert Bet.objects.filter(user=punter).count() == 1
    assert _balance(punter) == Decimal("90.00")


def test_the_statement_pages_through_every_entry(api, punter):
    for n in range(30):
        wallet_payment_deposit(user=punter, amount=Decimal("1.00"), request_id=f"many-{n}")
    first = api.get("/wallet/?kind=deposit").content.decode()
    assert first.count('<tr data-kind="deposit">') == 25
    assert "Page 1 of 2" in first
    assert "page=2" in first
    assert "kind=deposit" in first.split('aria-label="Statement pages"')[1]
    second = api.get("/wallet/?kind=deposit&page=2").content.decode()
    # 31 deposits: the first £100 and the 30 of £1.
    assert second.count('<tr data-kind="deposit">') == 6
    assert "£100.00" in second


def test_the_date_filter_counts_days_in_the_punters_time_zone(api, punter):
    entry = LedgerEntry.objects.get(wallet__user=punter)
    # 23:30 UTC on 1 June is already 2 June in Tokyo.
    LedgerEntry.objects.filter(pk=entry.pk).update(created_at=datetime(2026, 6, 1, 23, 30, tzinfo=UTC))
    in_utc = api.get("/wallet/?from=2026-06-01&to=2026-06-01").content.decode()
    in_tokyo = api.get("/wallet/?from=2026-06-01&to=2026-06-01&tz=Asia/Tokyo").content.decode()
    assert '<tr data-kind="deposit">' in in_utc
    assert '<tr data-kind="deposit">' not in in_tokyo
    assert '<tr data-kind="deposit">' in api.get("/wallet/?from=2026-06-02&tz=Asia/Tokyo").content.decode()
    # A zone that does not exist is ignored rather than refused.
    assert api.get("/wallet/?from=2026-06-01&to=2026-06-01&tz=../../etc").status_code == 200


def _page_currency(response) -> str:
    import re

    found = re.search(rb'<body[^>]* data-currency="([^"]*)"', response.content)
    assert found is not None, response.content[:400]
    return found.group(1).decode()


def test_pages_name_the_punters_wallet_currency_read_once_per_login(client, services):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from odds.betting.context_processors import WALLET_CURRENCY_KEY

    assert _page_currency(client.get("/")) == "GBP"  # before login: the book's
    client.force_login(user_create(currency="EUR"))
    assert _page_currency(client.get("/")) == "EUR"
    assert client.session[WALLET_CURRENCY_KEY] == "EUR"
    first = client.get("/")
    with CaptureQueriesContext(connection) as counted:
        again = client.get("/")
    assert _page_currency(again) == _page_currency(first) == "EUR"
    assert not [q for q in counted.captured_queries if "odds_wallet" in q["sql"]]
