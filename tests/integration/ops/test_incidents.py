"""Incidents from Alertmanager's webhook (/ops/alerts/webhook) on the on-call page (/ops/oncall):
a firing alert opens one, its repeats are counted on it, its resolution resolves it; an operator
acknowledges and resolves one, and the page says who and when."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bench.harness import free_port
from odds.ops.models import Incident

pytestmark = [pytest.mark.django_db]

STARTS = "2026-11-28T05:00:00.123Z"


def notification(status: str = "firing", *, ends: str = "0001-01-01T00:00:00Z", **labels: str) -> dict[str, Any]:
    alert_labels = {"alertname": "ReducerLagOverObjective", "severity": "page", "query": "prices", **labels}
    return {
        "version": "4",
        "groupKey": '{}:{alertname="ReducerLagOverObjective"}',
        "truncatedAlerts": 0,
        "status": status,
        "receiver": "oncall",
        "groupLabels": {"alertname": "ReducerLagOverObjective"},
        "commonLabels": alert_labels,
        "commonAnnotations": {},
        "externalURL": "http://127.0.0.1:9093",
        "alerts": [
            {
                "status": status,
                "labels": alert_labels,
                "annotations": {"summary": "Reducer query prices is 14 s behind", "runbook": "docs/runbooks.md#x"},
                "startsAt": STARTS,
                "endsAt": ends,
                "generatorURL": "http://127.0.0.1:9090/graph",
                "fingerprint": "4f1c2a9d8e7b6c5a",
            }
        ],
    }


def post(client, body: Any, **headers: str):
    raw = body if isinstance(body, str) else json.dumps(body)
    return client.post(
        "/ops/alerts/webhook", data=raw, content_type="application/json", REMOTE_ADDR="127.0.0.1", **headers
    )


@pytest.fixture(autouse=True)
def no_tokens(settings):
    settings.ALERTS_WEBHOOK_TOKEN = ""
    # Nothing listens there: the page says the alerts cannot be read, and shows the incidents.
    settings.PROMETHEUS_URL = f"http://127.0.0.1:{free_port()}"


def test_a_firing_alert_opens_one_incident_and_its_repeats_are_counted_on_it(client):
    first = post(client, notification())
    assert first.status_code == 200
    (incident,) = Incident.objects.all()
    assert first.json()["opened"] == [incident.pk]
    assert (incident.alertname, incident.severity, incident.status) == ("ReducerLagOverObjective", "page", "open")
    assert incident.labels["query"] == "prices"
    assert incident.summary == "Reducer query prices is 14 s behind"
    again = post(client, notification())
    assert again.json()["updated"] == [incident.pk]
    incident.refresh_from_db()
    assert incident.notifications == 2
    assert Incident.objects.count() == 1


def test_the_alert_resolving_resolves_its_incident_as_alertmanagers_doing(client):
    post(client, notification())
    resolved = post(client, notification("resolved", ends="2026-11-28T05:03:00Z"))
    (incident,) = Incident.objects.all()
    assert resolved.json()["resolved"] == [incident.pk]
    assert incident.status == "resolved"
    assert incident.resolved_by is None
    assert incident.ends_at is not None
    assert incident.ends_at.isoformat() == "2026-11-28T05:03:00+00:00"


def test_the_same_alert_firing_again_later_is_a_new_incident(client):
    post(client, notification())
    post(client, notification("resolved", ends="2026-11-28T05:03:00Z"))
    later = notification()
    later["alerts"][0]["startsAt"] = "2026-11-28T06:00:00Z"
    post(client, later)
    assert list(Incident.objects.order_by("id").values_list("status", flat=True)) == ["resolved", "open"]


def test_an_invalid_notification_is_refused_with_where_it_is_wrong(client):
    body = notification()
    del body["alerts"][0]["fingerprint"]
    answer = post(client, body)
    assert answer.status_code == 400
    assert answer.json()["error"] == "invalid_notification"
    assert "fingerprint" in answer.json()["message"]
    assert post(client, "not json").status_code == 400
    assert not Incident.objects.exists()


def test_without_a_token_only_loopback_may_post_and_with_one_only_its_bearer(client, settings):
    remote = client.post(
        "/ops/alerts/webhook", data=json.dumps(notification()), content_type="application/json", REMOTE_ADDR="10.1.2.3"
    )
    assert remote.status_code == 403
    settings.ALERTS_WEBHOOK_TOKEN = "am-secret"
    assert post(client, notification()).status_code == 401
    assert post(client, notification(), HTTP_AUTHORIZATION="Bearer wrong").status_code == 401
    assert post(client, notification(), HTTP_AUTHORIZATION="Bearer am-secret").status_code == 200


def test_an_operator_acknowledges_then_resolves_with_a_note_and_the_page_says_who_and_when(client, staff_client, staff):
    post(client, notification())
    incident = Incident.objects.get()
    page = staff_client.get("/ops/oncall").content.decode()
    assert f'data-incident="{incident.pk}" data-status="open"' in page

    staff_client.post(f"/ops/oncall/{incident.pk}/acknowledge")
    incident.refresh_from_db()
    assert (incident.status, incident.acknowledged_by) == ("acknowledged", staff)
    assert incident.acknowledged_at is not None
    assert f"by {staff.username} at" in staff_client.get("/ops/oncall").content.decode()

    refused = staff_client.post(f"/ops/oncall/{incident.pk}/resolve", {"note": "  "}, follow=True)
    assert "Say what was done" in refused.content.decode()
    incident.refresh_from_db()
    assert incident.status == "acknowledged"

    staff_client.post(f"/ops/oncall/{incident.pk}/resolve", {"note": "restarted the reducers"})
    incident.refresh_from_db()
    assert (incident.status, incident.resolved_by, incident.resolved_note) == (
        "resolved",
        staff,
        "restarted the reducers",
    )
    page = staff_client.get("/ops/oncall").content.decode()
    assert "No open incidents." in page
    assert f"{staff.username}: restarted the reducers" in page


def test_a_resolved_incident_is_neither_acknowledged_nor_resolved_again(client, staff_client):
    post(client, notification())
    post(client, notification("resolved", ends="2026-11-28T05:03:00Z"))
    incident = Incident.objects.get()
    answer = staff_client.post(f"/ops/oncall/{incident.pk}/acknowledge", follow=True)
    assert "resolved already" in answer.content.decode()
    incident.refresh_from_db()
    assert incident.acknowledged_by is None
    page = staff_client.get("/ops/oncall").content.decode()
    assert "Alertmanager (the alert resolved)" in page


def test_the_page_shows_the_alerts_prometheus_cannot_be_asked_for(staff_client):
    page = staff_client.get("/ops/oncall").content.decode()
    assert "did not answer" in page
