"""The desk's exchange-rate page: who may set a rate, what is refused and why, the history kept
(rows and the audit log), and the rates mirrored into Redis for the books."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import reverse

from odds.audit.models import AuditEntry
from odds.betting.models import Bet
from odds.betting.services.bets import LegRequest, bet_place
from odds.core.roles import OPERATORS, TRADERS
from odds.trading.models import ExchangeRate
from store import keys
from store.liability import BookStore
from tests.factories import live_state_write, market_create, staff_sign_in, user_create

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def _staff_of(role: str) -> Client:
    user = user_create(balance="0")
    type(user).objects.filter(id=user.id).update(is_staff=True)
    user.refresh_from_db()
    user.groups.add(Group.objects.get(name=role))
    client = Client()
    staff_sign_in(client, user)
    return client


@pytest.fixture
def operator_client(services):
    return _staff_of(OPERATORS)


def test_a_fresh_install_has_the_default_rates_and_the_book_currency_at_one(staff_client):
    response = staff_client.get(reverse("trading-rates"))
    assert response.status_code == 200
    page = response.content.decode()
    assert "£1 = £1" in page
    assert "€1 = £0.85" in page
    assert "$1 = £0.79" in page


def test_an_operator_sets_a_rate_kept_with_its_history_in_the_audit_log_and_in_redis(
    operator_client, redis_client, django_capture_on_commit_callbacks
):
    url = reverse("trading-rates")
    with django_capture_on_commit_callbacks(execute=True):
        response = operator_client.post(url, {"currency": "EUR", "rate": "0.8612", "note": "morning fix"})
    assert response.status_code == 302
    assert list(ExchangeRate.objects.filter(currency="EUR").values_list("rate", flat=True)[:2]) == [
        Decimal("0.861200"),
        Decimal("0.850000"),
    ]
    entry = AuditEntry.objects.get(kind=AuditEntry.Kind.RATE_SET)
    assert (entry.object_id, entry.before, entry.after, entry.reason) == (
        "EUR",
        {"rate": "0.850000"},
        {"rate": "0.861200"},
        "morning fix",
    )
    assert redis_client.hgetall(keys.exchange_rates()) == {b"GBP": b"1000000", b"EUR": b"861200", b"USD": b"790000"}
    page = operator_client.get(url).content.decode()
    assert "€1 = £0.8612" in page
    assert "morning fix" in page


def test_a_trader_sees_the_rates_but_may_not_set_one(services):
    trader = _staff_of(TRADERS)
    assert trader.get(reverse("trading-rates")).status_code == 200
    assert trader.post(reverse("trading-rates"), {"currency": "EUR", "rate": "0.9"}).status_code == 403
    assert not ExchangeRate.objects.filter(rate=Decimal("0.9")).exists()


def test_setting_a_rate_needs_the_second_factor(services):
    user = user_create(balance="0", staff=True)
    client = Client()
    client.force_login(user)
    response = client.post(reverse("trading-rates"), {"currency": "EUR", "rate": "0.9"})
    assert response.status_code == 302
    assert not ExchangeRate.objects.filter(rate=Decimal("0.9")).exists()


def test_a_rate_form_without_the_csrf_token_is_refused(services):
    client = Client(enforce_csrf_checks=True)
    staff_sign_in(client, user_create(balance="0", staff=True))
    assert client.post(reverse("trading-rates"), {"currency": "EUR", "rate": "0.9"}).status_code == 403


@pytest.mark.parametrize(
    ("posted", "says"),
    [
        ({"currency": "EUR", "rate": "-1"}, "greater than or equal to 0"),
        ({"currency": "EUR", "rate": "0"}, "a rate is a positive number"),
        ({"currency": "EUR", "rate": "5000"}, "a rate lies between 0.001 and 1000"),
        ({"currency": "EUR", "rate": "0.8500001"}, "at most 6 decimal places"),
        ({"currency": "EUR", "rate": "abc"}, "Enter a number"),
        ({"currency": "GBP", "rate": "1.2"}, "Select a valid choice"),
        ({"currency": "JPY", "rate": "0.005"}, "Select a valid choice"),
    ],
)
def test_a_bad_rate_is_refused_with_the_reason_and_nothing_changes(staff_client, posted, says):
    before = ExchangeRate.objects.count()
    response = staff_client.post(reverse("trading-rates"), posted)
    assert response.status_code == 400
    assert says in response.content.decode()
    assert ExchangeRate.objects.count() == before


def _bet(market, *, currency: str, stake: str) -> Bet:
    home = market.selections.order_by("display_order")[0]
    return bet_place(
        user=user_create(balance="100.00", currency=currency),
        idempotency_key=f"fx-{market.id}-{currency}-{stake}",
        stake=Decimal(stake),
        legs=[LegRequest(selection_id=home.id, price_seen=home.price)],
    ).bet


def test_a_settle_confirmation_adds_pounds_and_euros_up_in_pounds_and_shows_each(
    staff_client, kafka_topics, redis_client
):
    BookStore(redis_client).rates_set({"GBP": 1_000_000, "EUR": 850_000, "USD": 790_000})
    market = market_create()
    live_state_write(redis_client, market, prices=("2.10", "3.40", "3.50"))
    _bet(market, currency="GBP", stake="10.00")
    _bet(market, currency="EUR", stake="20.00")
    home = market.selections.order_by("display_order")[0]
    body = staff_client.get(
        reverse("trading-market-result-confirm", kwargs={"market_id": market.id}), {"winner": home.id}
    ).content.decode()
    # €20.00 at 0.85 is £17.00; the payout €42.00 is £35.70.
    assert 'data-impact="stake">£27.00 <span class="hint" data-impact="stake-currencies">(£10.00 + €20.00)<' in body
    assert 'data-impact="payout">£56.70 <span class="hint" data-impact="payout-currencies">(£21.00 + €42.00)<' in body


def test_the_event_page_and_the_void_message_show_a_bet_in_its_own_currency(staff_client, kafka_topics, redis_client):
    market = market_create()
    live_state_write(redis_client, market, prices=("2.10", "3.40", "3.50"))
    bet = _bet(market, currency="EUR", stake="20.00")
    page = staff_client.get(reverse("trading-event", kwargs={"event_id": market.event_id})).content.decode()
    assert '<td class="num">€20.00</td>' in page
    assert '<td class="num">€42.00</td>' in page
    response = staff_client.post(
        reverse("trading-bet-void", kwargs={"bet_id": bet.id}), {"reason": "error"}, follow=True
    )
    assert f"Voided bet {bet.id}; €20.00 returned to" in response.content.decode()
