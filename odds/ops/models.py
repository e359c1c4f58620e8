"""Operations history: samples of the platform's figures, taken by Celery beat."""

from __future__ import annotations

from django.db import models


class MetricSample(models.Model):
    """The dashboard's figures at one moment, flattened to named numbers
    (``odds.core.metrics.snapshot_series``). One row per sampling slot: a task that runs
    twice for the same slot writes one row."""

    slot = models.BigIntegerField(unique=True, help_text="Epoch seconds divided by the sampling interval.")
    ts = models.DateTimeField(db_index=True)
    values = models.JSONField(default=dict)

    class Meta:
        db_table = "odds_metricsample"
        ordering = ["ts"]

    def __str__(self) -> str:
        return f"sample {self.ts:%Y-%m-%d %H:%M:%S}"
