"""The metrics history: one sample per beat interval in PostgreSQL, pruned after the retention."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.utils import timezone

from odds.core.metrics import metrics_snapshot, snapshot_series
from odds.ops.models import MetricSample


def sample_interval_s() -> int:
    return int(getattr(settings, "OPS_SAMPLE_INTERVAL_S", 5))


def metrics_sample_record(*, now_s: float | None = None) -> tuple[MetricSample, bool]:
    """Take a snapshot and keep it for its slot. A second run in the same slot keeps the first
    sample (idempotent); returns the row and whether it was created."""
    now_s = now_s if now_s is not None else time.time()
    slot = int(now_s // sample_interval_s())
    existing = MetricSample.objects.filter(slot=slot).first()
    if existing is not None:
        return existing, False
    snapshot = metrics_snapshot(now_ms=int(now_s * 1000))
    return MetricSample.objects.get_or_create(
        slot=slot,
        defaults={"ts": datetime.fromtimestamp(now_s, tz=UTC), "values": snapshot_series(snapshot)},
    )


def metrics_prune(*, now: datetime | None = None, keep: timedelta | None = None) -> int:
    """Delete samples older than the retention (``OPS_METRICS_RETENTION_HOURS``); returns how many."""
    now = now or timezone.now()
    keep = keep or timedelta(hours=float(getattr(settings, "OPS_METRICS_RETENTION_HOURS", 168)))
    deleted, _ = MetricSample.objects.filter(ts__lt=now - keep).delete()
    return deleted
