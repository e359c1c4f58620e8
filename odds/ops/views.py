"""Operator pages and endpoints: the lag dashboard (/ops/lag), the on-call page (/ops/oncall),
the dead letters (/ops/dead-letters), Prometheus metrics (/metrics), Alertmanager's webhook
(/ops/alerts/webhook) and the health detail (/healthz/detail).

Their routes are ``odds/ops/urls.py``.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import secrets
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST
from prometheus_client import CONTENT_TYPE_LATEST
from pydantic import ValidationError

from odds.core.health import health_report
from odds.core.metrics_prometheus import metrics_exposition
from odds.core.staff import staff_page
from odds.ops.models import Incident
from odds.ops.schemas import AlertmanagerNotification
from odds.ops.selectors.backups import backups_overview
from odds.ops.selectors.dead_letters import DeadLetterRecord, dead_letter_actions_recent, dead_letters_select
from odds.ops.selectors.incidents import alerts_now, incidents_resolved_recent, incidents_unresolved
from odds.ops.selectors.ops import DEAD_LETTER_SOURCES, RANGES, dead_letter_shown, dead_letters_recent
from odds.ops.services.dead_letters import (
    DeadLettersConflict,
    NothingChosen,
    dead_letters_discard,
    dead_letters_replay,
)
from odds.ops.services.incidents import IncidentClosed, incident_acknowledge, incident_resolve, incidents_record
from reducers.dead_letters import MAX_REPLAYS, SOURCES

# Each source's topic, where a replay sends its dead letters.
DEAD_LETTER_TOPICS_OF = {name: source.topic() for name, source in SOURCES.items()}


@staff_page
def lag_page(request: HttpRequest) -> HttpResponse:
    context = {
        "page": "lag",
        "ranges": list(RANGES),
        "sample_s": settings.OPS_SAMPLE_INTERVAL_S,
        "stale_s": round(settings.OPS_REPORT_STALE_S),
    }
    return render(request, "odds/ops/lag.html", context)


DEAD_LETTERS_SHOWN = 100
PREVIEW_SHOWN = 50


@dataclasses.dataclass(frozen=True)
class SelectionForm:
    """A dead-letter selection as the page's form gives it."""

    source: str
    reason: str | None
    since: datetime | None
    until: datetime | None
    ends: dict[int, int] | None

    def query(self) -> str:
        return urlencode(
            {
                "source": self.source,
                "reason": self.reason or "",
                "since": _form_time(self.since),
                "until": _form_time(self.until),
                "preview": "1",
            }
        )


def _form_time(moment: datetime | None) -> str:
    return "" if moment is None else moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M")


def selection_form(data: Mapping[str, str]) -> SelectionForm:
    """The selection in ``data`` (a query string or a form); ``ValueError`` names what is wrong.
    Times are UTC, as the page shows them (``YYYY-MM-DDTHH:MM``); ``ends`` is ``partition:offset``
    pairs separated by commas, as the preview wrote them."""
    source = data.get("source", "")
    if source not in DEAD_LETTER_SOURCES:
        raise ValueError(f"choose the topic of the dead letters (one of {', '.join(DEAD_LETTER_SOURCES)})")
    moments: dict[str, datetime | None] = {}
    for name in ("since", "until"):
        raw = data.get(name, "").strip()
        try:
            moments[name] = datetime.fromisoformat(raw).replace(tzinfo=UTC) if raw else None
        except ValueError:
            raise ValueError(f"{name} must be a date and time (YYYY-MM-DDTHH:MM, UTC), got {raw!r}") from None
    if moments["since"] and moments["until"] and moments["since"] > moments["until"]:
        raise ValueError("since must come before until")
    ends: dict[int, int] | None = None
    if data.get("ends"):
        try:
            ends = {int(p): int(o) for p, _, o in (pair.partition(":") for pair in data["ends"].split(","))}
        except ValueError:
            raise ValueError("the preview's ends are malformed: preview again") from None
    return SelectionForm(source, data.get("reason") or None, moments["since"], moments["until"], ends)


@staff_page
def dead_letters_page(request: HttpRequest) -> HttpResponse:
    """The newest dead letters of every reducer topic, filtered by source topic and reason; with
    ``preview``, the dead letters a replay or discard of the selection would handle."""
    source = request.GET.get("source") or None
    reason = request.GET.get("reason") or None
    context: dict[str, Any] = {
        "page": "dead-letters",
        "sources": list(DEAD_LETTER_SOURCES),
        "source": source,
        "reason": reason,
        "since": request.GET.get("since", ""),
        "until": request.GET.get("until", ""),
        "shown": DEAD_LETTERS_SHOWN,
        "preview_shown": PREVIEW_SHOWN,
        "max_replays": MAX_REPLAYS,
        "actions": dead_letter_actions_recent(limit=20),
    }
    if source is not None and source not in DEAD_LETTER_SOURCES:
        context["error"] = f"There is no dead-letter topic for “{source}”. Choose one of the list."
        return render(request, "odds/ops/dead_letters.html", context, status=400)
    if request.GET.get("preview"):
        try:
            chosen = selection_form(request.GET)
        except ValueError as exc:
            context["error"] = f"Nothing to preview: {exc}."
            return render(request, "odds/ops/dead_letters.html", context, status=400)
        selection = dead_letters_select(
            source=chosen.source, reason=chosen.reason, since=chosen.since, until=chosen.until
        )
        context["preview"] = {
            "selection": selection,
            "records": [_shown_record(chosen.source, r) for r in selection.records[:PREVIEW_SHOWN]],
            "ends": ",".join(f"{p}:{o}" for p, o in sorted(selection.ends.items())),
            "target": DEAD_LETTER_TOPICS_OF[chosen.source],
        }
    found = dead_letters_recent(source=source, reason=reason, limit=DEAD_LETTERS_SHOWN)
    return render(request, "odds/ops/dead_letters.html", {**context, **found})


@staff_page
def backups_page(request: HttpRequest) -> HttpResponse:
    """PostgreSQL's newest backup and its WAL archive, each against its objective."""
    return render(request, "odds/ops/backups.html", {"page": "backups", **backups_overview()})


def _shown_record(source: str, record: DeadLetterRecord) -> dict[str, Any]:
    return {
        "place": f"{record.topic}/{record.partition}/{record.offset}",
        "when": record.when,
        "reason": record.reason,
        "detail": record.detail,
        "key": (record.key or b"").decode("utf-8", errors="replace")[:200],
        "value": dead_letter_shown(source, record.value),
        "first": record.failure,
        "refusal": record.refusal,
    }


@staff_page
@require_POST
def dead_letters_act(request: HttpRequest) -> HttpResponse:
    """Replay the previewed selection to its source topic, or discard it, with a note."""
    try:
        chosen = selection_form(request.POST)
    except ValueError as exc:
        messages.error(request, f"Nothing was done: {exc}.")
        return redirect("ops-dead-letters")
    action, note = request.POST.get("action", ""), request.POST.get("note", "").strip()
    back = f"{reverse('ops-dead-letters')}?{chosen.query()}"
    if action not in ("replay", "discard"):
        messages.error(request, "Nothing was done: choose to replay or to discard.")
        return redirect(back)
    if not note:
        messages.error(request, f"Nothing was done: say why you {action} these dead letters.")
        return redirect(back)
    act = dead_letters_replay if action == "replay" else dead_letters_discard
    try:
        done = act(
            source=chosen.source,
            reason=chosen.reason,
            since=chosen.since,
            until=chosen.until,
            ends=chosen.ends,
            note=note,
            by=request.user,  # type: ignore[arg-type]
        )
    except (NothingChosen, DeadLettersConflict) as exc:
        messages.error(request, f"Nothing was done: {exc}.")
        return redirect(back)
    verb = "Replayed" if action == "replay" else "Discarded"
    where = f" to {DEAD_LETTER_TOPICS_OF[chosen.source]}" if action == "replay" else ""
    refused = f"; {done.refused} left alone (replayed {MAX_REPLAYS} times already)" if done.refused else ""
    failed = f"; {done.error}" if done.error else ""
    level = messages.warning if done.error else messages.success
    level(
        request,
        f"{verb} {done.handled} {chosen.source} dead letter{'s' if done.handled != 1 else ''}{where}{refused}{failed}.",
    )
    return redirect(reverse("ops-dead-letters") + f"?source={chosen.source}")


@staff_page
def oncall_page(request: HttpRequest) -> HttpResponse:
    """Open incidents (acknowledge, resolve) and the recently resolved, with who and when, beside
    the alerts Prometheus holds now."""
    context = {
        "page": "oncall",
        "incidents": list(incidents_unresolved()),
        "resolved": incidents_resolved_recent(limit=20),
        "alerts": alerts_now(),
    }
    return render(request, "odds/ops/oncall.html", context)


@staff_page
@require_POST
def incident_acknowledge_view(request: HttpRequest, incident_id: int) -> HttpResponse:
    try:
        incident = incident_acknowledge(incident_id=incident_id, by=request.user)  # type: ignore[arg-type]
    except Incident.DoesNotExist:
        messages.error(request, f"There is no incident {incident_id}.")
    except IncidentClosed:
        messages.warning(request, f"Incident {incident_id} is resolved already; nothing to acknowledge.")
    else:
        messages.success(request, f"{incident.alertname}: acknowledged by you.")
    return redirect("ops-oncall")


@staff_page
@require_POST
def incident_resolve_view(request: HttpRequest, incident_id: int) -> HttpResponse:
    note = request.POST.get("note", "").strip()
    if not note:
        messages.error(request, "Say what was done before resolving an incident.")
        return redirect("ops-oncall")
    try:
        incident = incident_resolve(incident_id=incident_id, by=request.user, note=note)  # type: ignore[arg-type]
    except Incident.DoesNotExist:
        messages.error(request, f"There is no incident {incident_id}.")
    except IncidentClosed:
        messages.warning(request, f"Incident {incident_id} is resolved already.")
    else:
        messages.success(request, f"{incident.alertname}: resolved by you.")
    return redirect("ops-oncall")


def metrics_token() -> str:
    return str(settings.METRICS_TOKEN)


def _loopback(request: HttpRequest) -> bool:
    try:
        return ipaddress.ip_address(request.META.get("REMOTE_ADDR", "")).is_loopback
    except ValueError:
        return False


def _refused(request: HttpRequest, *, token: str, setting: str, realm: str) -> HttpResponse | None:
    """None when the caller may go on: it sent ``Authorization: Bearer <token>``, or no token is
    configured and it is a loopback client, in development only (in production a reverse proxy on
    the same host makes every client loopback, so the token is required there)."""
    if not token and settings.METRICS_TOKEN_REQUIRED:
        return HttpResponse(f"{setting} is not configured\n", status=403, content_type="text/plain")
    if token:
        given = request.headers.get("Authorization", "")
        if not secrets.compare_digest(given.encode(), f"Bearer {token}".encode()):
            response = HttpResponse("bearer token required\n", status=401, content_type="text/plain")
            response["WWW-Authenticate"] = f'Bearer realm="{realm}"'
            return response
    elif not _loopback(request):
        return HttpResponse(f"set {setting} to call this from other hosts\n", status=403, content_type="text/plain")
    return None


@never_cache
@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    """Prometheus scrape target: ``Authorization: Bearer $METRICS_TOKEN``; with no token
    configured only loopback clients are answered, in development only."""
    refused = _refused(request, token=metrics_token(), setting="METRICS_TOKEN", realm="metrics")
    if refused is not None:
        return refused
    return HttpResponse(metrics_exposition(), content_type=CONTENT_TYPE_LATEST)


@csrf_exempt
@never_cache
@require_POST
def alerts_webhook(request: HttpRequest) -> HttpResponse:
    """Alertmanager's webhook receiver (infra/monitoring/alertmanager.yml.in):
    ``Authorization: Bearer $ALERTS_WEBHOOK_TOKEN``, or loopback in development. Each alert opens,
    updates or resolves an incident of the on-call page."""
    refused = _refused(
        request, token=str(settings.ALERTS_WEBHOOK_TOKEN), setting="ALERTS_WEBHOOK_TOKEN", realm="alerts"
    )
    if refused is not None:
        return refused
    try:
        notification = AlertmanagerNotification.model_validate_json(request.body)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "body"
        return JsonResponse({"error": "invalid_notification", "message": f"{where}: {first['msg']}"}, status=400)
    outcome = incidents_record(notification=notification)
    return JsonResponse({"opened": outcome.opened, "updated": outcome.updated, "resolved": outcome.resolved})


@never_cache
@require_GET
def healthz_detail(request: HttpRequest) -> HttpResponse:
    """``/healthz`` with what each check found (errors, heartbeat ages, sizes, latencies), checked
    afresh: for staff, and for monitoring with ``METRICS_TOKEN`` (as ``/metrics``)."""
    if not (request.user.is_authenticated and request.user.is_staff):
        refused = _refused(request, token=metrics_token(), setting="METRICS_TOKEN", realm="health")
        if refused is not None:
            return refused
    report = health_report()
    return JsonResponse(report, status=200 if report["ok"] else 503)
