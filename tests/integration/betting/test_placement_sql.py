"""The placement functions in the database are the versioned files (odds/betting/sql/), and the
leg verdicts the placement statement reads are the Python rule's, case for case."""

from __future__ import annotations

import pytest
from django.db import connection

from odds.betting.models import LegVerdict
from odds.betting.sql import CURRENT, DIRECTORY, function_body, sql_file
from reducers import betting

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.mark.parametrize(("name", "file"), sorted(CURRENT.items()))
def test_the_installed_function_is_its_current_file(name, file):
    with connection.cursor() as cursor:
        cursor.execute("SELECT prosrc FROM pg_proc WHERE proname = %s", [name])
        installed = [row[0] for row in cursor.fetchall()]
    # One function of the name (a new signature drops the old one), its body the file's.
    assert installed == [function_body(sql_file(file))]


def test_every_version_file_is_one_whole_function():
    for file in sorted(p.name for p in DIRECTORY.glob("*.sql")):
        text = sql_file(file)
        assert text.count("$$") == 2, file
        assert "CREATE OR REPLACE FUNCTION" in text, file


def test_the_leg_verdicts_table_holds_every_case_of_the_rule():
    stored = {
        (v.event_status, v.market_status, v.selection_status, v.live): (v.code, v.message)
        for v in LegVerdict.objects.all()
    }
    expected = {
        (event, market, selection, live): (verdict.code, verdict.message)
        for event, market, selection, live, verdict in betting.leg_verdicts()
    }
    assert stored == expected


def test_the_rule_covers_every_status_the_catalogue_gives():
    from odds.catalogue.models import Event, Market, Selection

    assert set(betting.EVENT_STATUSES) == set(Event.Status.values)
    assert set(betting.MARKET_STATUSES) == set(Market.Status.values)
    assert set(betting.SELECTION_STATUSES) == set(Selection.Status.values)


def test_a_punter_without_a_wallet_gets_one_in_the_books_currency_and_no_bet(services, redis_client):
    """The placement statement opens a missing wallet itself, in the database's default currency
    (the book's) with nothing owed, and refuses the bet for want of funds."""
    import uuid
    from decimal import Decimal

    from django.contrib.auth.models import User

    from odds.betting.models import Bet, Wallet
    from odds.betting.services.bets import LegRequest, bet_place
    from reducers.rules import BOOK_CURRENCY
    from tests.factories import market_create

    market = market_create(prices=("2.10", "3.40", "3.50"))
    selection = market.selections.order_by("display_order")[0]
    user = User.objects.create_user(username=f"walletless-{uuid.uuid4().hex[:8]}", password="pw-for-tests")
    assert not Wallet.objects.filter(user=user).exists()
    placement = bet_place(
        user=user,
        idempotency_key=uuid.uuid4().hex,
        stake=Decimal("5.00"),
        legs=[LegRequest(selection_id=selection.id, price_seen=selection.price)],
    )
    assert placement.bet.status == Bet.Status.REJECTED
    assert placement.bet.reject_code == "insufficient_funds"
    wallet = Wallet.objects.get(user=user)
    assert (wallet.currency, wallet.balance, wallet.owed) == (BOOK_CURRENCY, Decimal("0.00"), Decimal("0.00"))
