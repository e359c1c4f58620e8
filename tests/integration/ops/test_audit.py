"""The audit log: every staff action is one row committed with it, PostgreSQL refuses to change
or delete a row, and the staff page filters the rows and exports them as CSV."""

from __future__ import annotations

import csv
import io
from datetime import timedelta
from decimal import Decimal

import pytest
from django.contrib.auth.models import Group
from django.db import connection, transaction
from django.db.utils import DatabaseError
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from odds.audit.models import AuditEntry
from odds.audit.services.audit import audit_record
from odds.audit.sql import CURRENT, sql_file
from odds.betting.models import Bet
from odds.catalogue.models import Market
from odds.catalogue.services.markets import (
    MarketStateError,
    market_resume,
    market_suspend,
    markets_status_set,
    selection_price_set,
)
from odds.core.roles import OPERATORS, roles_sync
from tests.factories import live_state_write, market_create, sign_in, user_create
from tests.integration.betting.helpers import bet_accepted, selections_of

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def _entry(staff) -> AuditEntry:
    with transaction.atomic():
        entry = audit_record(by=staff, kind=AuditEntry.Kind.MARKET_SUSPEND, object_type="market", object_id=1)
    assert entry is not None
    return entry


def test_postgresql_refuses_a_raw_update_of_an_audit_row(staff):
    entry = _entry(staff)
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("UPDATE audit_auditentry SET actor = 'someone else' WHERE id = %s", [entry.id])
    assert AuditEntry.objects.get(id=entry.id).actor == staff.username


def test_postgresql_refuses_a_raw_delete_of_an_audit_row(staff):
    entry = _entry(staff)
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("DELETE FROM audit_auditentry WHERE id = %s", [entry.id])
    assert AuditEntry.objects.filter(id=entry.id).exists()


def test_the_installed_trigger_function_is_its_current_file():
    (name, file), *_ = CURRENT.items()
    with connection.cursor() as cursor:
        cursor.execute("SELECT prosrc FROM pg_proc WHERE proname = %s", [name])
        installed = [row[0] for row in cursor.fetchall()]
    text = sql_file(file)
    assert installed == [text.split("$$")[1]]


def test_a_price_override_records_the_live_price_it_replaced_and_the_new_one(staff, redis_client):
    market = market_create(prices=("2.10", "3.40", "3.50"))
    live_state_write(redis_client, market, prices=("2.30", "3.40", "3.50"))
    home = selections_of(market)[0]
    selection_price_set(selection=home, price=Decimal("2.50"), by=staff, reason="team news")
    (entry,) = AuditEntry.objects.filter(kind=AuditEntry.Kind.PRICE_SET)
    assert (entry.actor, entry.object_type, entry.object_id) == (staff.username, "selection", str(home.id))
    assert (entry.before, entry.after, entry.reason) == ({"price": "2.30"}, {"price": "2.50"}, "team news")


def test_suspend_and_resume_by_staff_are_recorded_with_the_status_before_and_after(staff, redis_client):
    market = market_create()
    market_suspend(market=market, by=staff)
    market_resume(market=market, by=staff)
    rows = list(AuditEntry.objects.order_by("id").values_list("kind", "before__status", "after__status"))
    assert rows == [("market_suspend", "open", "suspended"), ("market_resume", "suspended", "open")]


def test_a_repeated_suspend_that_changes_nothing_records_nothing(staff, redis_client):
    market = market_create()
    market_suspend(market=market, by=staff)
    market_suspend(market=market, by=staff)
    assert AuditEntry.objects.count() == 1


def test_the_feeds_changes_are_not_staff_actions(staff, redis_client):
    market = market_create()
    markets_status_set(market_ids=[market.id], status="suspended", only_from=["open"], reason="goal", by="feed")
    markets_status_set(market_ids=[market.id], status="open", only_from=["suspended"], by="feed")
    assert AuditEntry.objects.count() == 0


def test_the_row_rolls_back_with_its_action(staff, redis_client):
    market = market_create()

    class Later(Exception):
        pass

    def suspend_then_fail() -> None:
        with transaction.atomic():
            market_suspend(market=market, by=staff)
            raise Later  # the action's transaction fails after the change

    with pytest.raises(Later):
        suspend_then_fail()
    assert (Market.objects.get(id=market.id).status, AuditEntry.objects.count()) == ("open", 0)


def test_a_refused_action_leaves_no_row(staff, redis_client):
    market = market_create(status=Market.Status.CLOSED)
    with pytest.raises(MarketStateError):
        selection_price_set(selection=selections_of(market)[0], price=Decimal("2.00"), by=staff)
    assert AuditEntry.objects.count() == 0


def test_a_result_is_recorded_with_its_winners(staff_client, staff, redis_client):
    market = market_create()
    home = selections_of(market)[0]
    url = reverse("trading-market-result", kwargs={"market_id": market.id})
    assert staff_client.post(url, {"winner": str(home.id), "confirm": "yes"}).status_code == 302
    (entry,) = AuditEntry.objects.filter(kind=AuditEntry.Kind.MARKET_RESULT)
    assert entry.after == {"status": "closed", "won": ["Home"], "void": []}
    assert entry.object_id == str(market.id)


def test_a_void_in_the_admin_is_recorded_with_its_reason(staff_client, staff, punter):
    bet = bet_accepted(punter, selections_of(market_create())[0])
    body = {"action": "void", "_selected_action": [str(bet.id)], "confirm": "yes", "reason": "palpable error"}
    staff_client.post("/admin/betting/bet/", body, follow=True)
    assert Bet.objects.get(id=bet.id).void_reason == "palpable error"
    (entry,) = AuditEntry.objects.filter(kind=AuditEntry.Kind.BET_VOID)
    assert (entry.object_id, entry.reason, entry.after["refunded"]) == (str(bet.id), "palpable error", "10.00")


def test_an_admin_edit_of_an_event_records_the_fields_before_and_after(staff_client, staff):
    event = market_create().event
    url = reverse("admin:catalogue_event_change", args=[event.id])
    form = {
        "competition": event.competition_id,
        "home": "Renamed FC",
        "away": event.away,
        "starts_at_0": timezone.localtime(event.starts_at).strftime("%Y-%m-%d"),
        "starts_at_1": timezone.localtime(event.starts_at).strftime("%H:%M:%S"),
        "status": event.status,
        "home_score": event.home_score,
        "away_score": event.away_score,
        "clock": event.clock,
    }
    response = staff_client.post(url, form)
    assert response.status_code == 302, response.content[:2000]
    (entry,) = AuditEntry.objects.filter(kind=AuditEntry.Kind.ADMIN_CHANGE)
    assert (entry.object_type, entry.before["home"], entry.after["home"]) == ("event", event.home, "Renamed FC")


def test_the_page_filters_by_who_kind_object_and_days(staff_client, staff, redis_client):
    first, second = market_create(), market_create()
    other = user_create(balance="0", staff=True)
    market_suspend(market=first, by=staff)
    market_suspend(market=second, by=other)
    market_resume(market=second, by=other)
    page = staff_client.get(reverse("trading-audit"), {"actor": other.username, "kind": "market_resume"})
    assert page.status_code == 200
    assert page.content.count(b"data-audit=") == 1
    page = staff_client.get(reverse("trading-audit"), {"object": f"market:{first.id}"})
    assert page.content.count(b"data-audit=") == 1
    tomorrow = (timezone.localdate() + timedelta(days=1)).isoformat()
    page = staff_client.get(reverse("trading-audit"), {"since": tomorrow})
    assert page.content.count(b"data-audit=") == 0
    page = staff_client.get(reverse("trading-audit"), {"until": timezone.localdate().isoformat()})
    assert page.content.count(b"data-audit=") == 3


def test_the_csv_export_holds_the_filtered_rows(staff_client, staff, redis_client):
    market = market_create()
    market_suspend(market=market, by=staff, note="=cmd|' /C calc'!A0")
    market_resume(market=market, by=staff)
    response = staff_client.get(reverse("trading-audit-csv"), {"kind": "market_suspend"})
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert [(r["actor"], r["kind"], r["object_id"]) for r in rows] == [
        (staff.username, "market_suspend", str(market.id))
    ]
    # A cell a spreadsheet would run as a formula is exported as text.
    assert rows[0]["reason"].startswith("'=")
    assert '"status": "suspended"' in rows[0]["after"] or '"status":"suspended"' in rows[0]["after"]


def test_operators_read_the_log_and_staff_without_a_role_do_not(services):
    roles_sync()
    user = user_create(balance="0")
    user.is_staff = True
    user.save()
    client = Client()
    sign_in(client, user)
    assert client.get(reverse("trading-audit")).status_code == 403
    assert client.get(reverse("trading-audit-csv")).status_code == 403
    user.groups.add(Group.objects.get(name=OPERATORS))
    assert client.get(reverse("trading-audit")).status_code == 200
