"""The punter's own pages and payments: never kept by a cache, their filters' dates checked, and a
payment's request id bound to its amount."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from odds.betting.models import LedgerEntry, Wallet
from tests.integration.security.conftest import logged_in

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.mark.parametrize("path", ["/wallet/", "/my-bets/"])
def test_a_punters_own_page_is_never_stored_by_a_cache_or_the_browser(punter, path):
    response = logged_in(punter).get(path)
    assert response.status_code == 200
    directives = {d.strip() for d in response["Cache-Control"].split(",")}
    assert {"private", "no-store"} <= directives


@pytest.mark.parametrize(
    "query",
    [
        "to=9999-12-31",
        "from=9999-12-31",
        "from=0001-01-01&tz=Pacific/Kiritimati",
        "to=0001-01-01&tz=America/Los_Angeles",
    ],
)
def test_a_ledger_filter_date_beyond_what_dates_hold_is_left_out_with_a_word(punter, query):
    response = logged_in(punter).get(f"/wallet/?{query}")
    assert response.status_code == 200
    assert "must be between 1970-01-01 and 9998-12-31" in response.content.decode()


@pytest.mark.parametrize("kind", ["deposits", "withdrawals"])
def test_a_request_id_reused_with_another_amount_is_refused_and_pays_nothing(punter, kind):
    client = logged_in(punter)

    def pay(amount: str):
        body = {"v": 1, "amount": amount, "request_id": f"reused-{kind}"}
        return client.post(f"/api/wallet/{kind}", data=json.dumps(body), content_type="application/json")

    assert pay("20.00").status_code == 201
    balance = Wallet.objects.get(user=punter).balance
    refused = pay("30.00")
    assert refused.status_code == 409
    error = refused.json()["error"]
    assert (error["code"], error["field"]) == ("request_id_reused", "request_id")
    assert "20.00" in error["message"]
    assert Wallet.objects.get(user=punter).balance == balance
    # The same request again still answers the first payment.
    again = pay("20.00")
    assert (again.status_code, again.json()["created"]) == (200, False)
    assert LedgerEntry.objects.filter(wallet__user=punter, reference=f"reused-{kind}").count() == 1
    assert abs(Decimal(again.json()["entry"]["amount"])) == Decimal("20.00")
