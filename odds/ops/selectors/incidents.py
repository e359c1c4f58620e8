"""Reads for the on-call page and the lag dashboard: incidents, and the alerts Prometheus
evaluates now (firing, and pending: over their threshold but not yet for their whole ``for``)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from django.conf import settings
from django.db.models import QuerySet

from odds.ops.models import Incident

PROMETHEUS_TIMEOUT_S = 1.5


def incidents_unresolved() -> QuerySet[Incident]:
    """Open and acknowledged incidents, pages first, newest first."""
    return (
        Incident.objects.filter(status__in=Incident.UNRESOLVED)
        .select_related("acknowledged_by")
        .order_by("severity", "-starts_at", "-id")
    )


def incidents_resolved_recent(*, limit: int = 20) -> list[Incident]:
    """The most recently resolved incidents, with who resolved them (none: Alertmanager did)."""
    return list(
        Incident.objects.filter(status=Incident.Status.RESOLVED)
        .select_related("acknowledged_by", "resolved_by")
        .order_by("-resolved_at", "-id")[:limit]
    )


def alerts_now() -> dict[str, Any]:
    """The alerts Prometheus holds now, firing and pending, each with its name, state, severity,
    summary, labels and since when; ``available`` false (with the error) when Prometheus does
    not answer or none is configured (``PROMETHEUS_URL``)."""
    base = str(getattr(settings, "PROMETHEUS_URL", "") or "")
    if base in ("", "off"):
        return {"available": False, "error": "no Prometheus is configured (PROMETHEUS_URL)", "alerts": []}
    try:
        with urllib.request.urlopen(f"{base.rstrip('/')}/api/v1/alerts", timeout=PROMETHEUS_TIMEOUT_S) as answer:  # noqa: S310 - the configured Prometheus
            found = json.load(answer)["data"]["alerts"]
    except (urllib.error.URLError, OSError, ValueError, KeyError) as exc:
        return {"available": False, "error": f"Prometheus at {base} did not answer: {exc}", "alerts": []}
    alerts = [
        {
            "name": alert["labels"].get("alertname", ""),
            "state": alert.get("state", ""),
            "severity": alert["labels"].get("severity", ""),
            "summary": alert.get("annotations", {}).get("summary", ""),
            "labels": alert["labels"],
            "active_at": alert.get("activeAt"),
        }
        for alert in found
    ]
    alerts.sort(key=lambda a: (a["state"] != "firing", a["severity"] != "page", a["name"]))
    return {"available": True, "error": None, "alerts": alerts}
