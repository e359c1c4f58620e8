"""Incidents: Alertmanager's notifications turned into the on-call page's rows, and an
operator's acknowledgement or resolution of one."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from odds.ops.models import Incident
from odds.ops.schemas import AlertmanagerAlert, AlertmanagerNotification


class IncidentClosed(Exception):
    """The incident is resolved already: there is nothing to acknowledge or resolve."""


@dataclass
class IncidentsRecorded:
    """What one notification changed, by incident id."""

    opened: list[int] = field(default_factory=list)
    updated: list[int] = field(default_factory=list)
    resolved: list[int] = field(default_factory=list)


def _ended(alert: AlertmanagerAlert, now: datetime) -> datetime:
    # A resolved alert's endsAt is when it stopped firing; a zero time (year 1) means unknown.
    return alert.ends_at if alert.ends_at is not None and alert.ends_at.year > 1 else now


def incidents_record(*, notification: AlertmanagerNotification, now: datetime | None = None) -> IncidentsRecorded:
    """Open an incident for each alert that starts firing, count a repeated notification of one
    already open, and resolve it when Alertmanager reports its alert resolved. A firing is one
    incident (its fingerprint and ``startsAt``): an alert that fires again later is a new one.
    An incident an operator resolved stays resolved while its alert still fires."""
    now = now or timezone.now()
    outcome = IncidentsRecorded()
    for alert in notification.alerts:
        with transaction.atomic():
            incident, created = Incident.objects.select_for_update().get_or_create(
                fingerprint=alert.fingerprint,
                starts_at=alert.starts_at,
                defaults={
                    "alertname": alert.name,
                    "severity": alert.labels.get("severity", ""),
                    "summary": alert.annotations.get("summary", ""),
                    "labels": alert.labels,
                    "annotations": alert.annotations,
                    "notified_at": now,
                },
            )
            if alert.status == "firing":
                if created:
                    outcome.opened.append(incident.pk)
                    continue
                incident.notifications += 1
                incident.notified_at = now
                incident.summary = alert.annotations.get("summary", incident.summary)
                incident.annotations = alert.annotations
                incident.save(update_fields=["notifications", "notified_at", "summary", "annotations"])
                outcome.updated.append(incident.pk)
                continue
            incident.ends_at = incident.ends_at or _ended(alert, now)
            incident.notified_at = now
            if incident.status != Incident.Status.RESOLVED:
                incident.status = Incident.Status.RESOLVED
                incident.resolved_at = now
                outcome.resolved.append(incident.pk)
            incident.save(update_fields=["ends_at", "notified_at", "status", "resolved_at"])
    return outcome


def incident_acknowledge(*, incident_id: int, by: User, now: datetime | None = None) -> Incident:
    """Say someone is on it: who and when. Acknowledging twice keeps the first."""
    with transaction.atomic():
        incident = Incident.objects.select_for_update().get(pk=incident_id)
        if incident.status == Incident.Status.RESOLVED:
            raise IncidentClosed(f"incident {incident_id} is resolved already")
        if incident.status == Incident.Status.OPEN:
            incident.status = Incident.Status.ACKNOWLEDGED
            incident.acknowledged_by = by
            incident.acknowledged_at = now or timezone.now()
            incident.save(update_fields=["status", "acknowledged_by", "acknowledged_at"])
        return incident


def incident_resolve(*, incident_id: int, by: User, note: str, now: datetime | None = None) -> Incident:
    """Close it by hand, with a note of what was done: who and when."""
    with transaction.atomic():
        incident = Incident.objects.select_for_update().get(pk=incident_id)
        if incident.status == Incident.Status.RESOLVED:
            raise IncidentClosed(f"incident {incident_id} is resolved already")
        incident.status = Incident.Status.RESOLVED
        incident.resolved_by = by
        incident.resolved_at = now or timezone.now()
        incident.resolved_note = note.strip()[:2000]
        incident.save(update_fields=["status", "resolved_by", "resolved_at", "resolved_note"])
        return incident
