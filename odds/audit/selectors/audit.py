"""Reading the audit log: the staff page's filters and its CSV export."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

import orjson
from django.db.models import QuerySet
from django.utils import timezone

from odds.audit.models import AuditEntry


@dataclass(frozen=True)
class AuditFilters:
    """Who (username, exact), what kind, which object (``type`` or ``type:id``, e.g. ``market:12``)
    and the days from and to (inclusive, the site's time zone)."""

    actor: str = ""
    kind: str = ""
    object: str = ""
    since: date | None = None
    until: date | None = None


def _day_start(day: date) -> datetime:
    return timezone.make_aware(datetime.combine(day, time.min))


def audit_entries(*, filters: AuditFilters) -> QuerySet[AuditEntry]:
    """The rows matching ``filters``, newest first."""
    rows = AuditEntry.objects.all()
    if filters.actor:
        rows = rows.filter(actor=filters.actor)
    if filters.kind:
        rows = rows.filter(kind=filters.kind)
    if filters.object:
        object_type, _, object_id = filters.object.partition(":")
        rows = rows.filter(object_type=object_type.strip().lower())
        if object_id.strip():
            rows = rows.filter(object_id=object_id.strip())
    if filters.since is not None:
        rows = rows.filter(at__gte=_day_start(filters.since))
    if filters.until is not None:
        rows = rows.filter(at__lt=_day_start(filters.until + timedelta(days=1)))
    return rows.order_by("-at", "-id")


def audit_actors() -> list[str]:
    """Everyone who has a row, for the page's filter."""
    return list(AuditEntry.objects.order_by("actor").values_list("actor", flat=True).distinct())


CSV_COLUMNS = ("id", "at", "actor", "kind", "object_type", "object_id", "object", "before", "after", "reason")


def _cell(text: str) -> str:
    # A cell a spreadsheet would run as a formula (=, +, -, @) is quoted as text.
    return f"'{text}" if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def audit_csv_lines(*, entries: Iterable[AuditEntry]) -> Iterator[str]:
    """The rows as CSV lines (a header first), before and after as JSON, times in ISO 8601 UTC."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)

    def line(values: Iterable[str]) -> str:
        buffer.seek(0)
        buffer.truncate()
        writer.writerow([_cell(v) for v in values])
        return buffer.getvalue()

    yield line(CSV_COLUMNS)
    for entry in entries:
        yield line(
            (
                str(entry.id),
                entry.at.astimezone(UTC).isoformat(),
                entry.actor,
                entry.kind,
                entry.object_type,
                entry.object_id,
                entry.object_label,
                orjson.dumps(entry.before, option=orjson.OPT_SORT_KEYS).decode(),
                orjson.dumps(entry.after, option=orjson.OPT_SORT_KEYS).decode(),
                entry.reason,
            )
        )
