"""The leg verdicts: the database's copy of ``reducers.betting.leg_verdict``, for ``sb_bet_place``."""

from __future__ import annotations

from django.db import models


class LegVerdict(models.Model):
    """Whether a leg can be backed, for one combination of its event's, market's and selection's
    catalogue statuses and the live state's reason: ``code`` empty when it can, else the reject
    code and its ``message``. Written only by ``leg_verdicts_sync`` from the Python rule, after
    every ``migrate``; the placement statement reads it instead of spelling the rule again."""

    pk = models.CompositePrimaryKey("event_status", "market_status", "selection_status", "live")
    event_status = models.CharField(max_length=16)
    market_status = models.CharField(max_length=16)
    selection_status = models.CharField(max_length=16)
    live = models.CharField(max_length=32, blank=True)
    code = models.CharField(max_length=32, blank=True)
    message = models.CharField(max_length=255, blank=True)

    class Meta:
        verbose_name = "leg verdict"

    def __str__(self) -> str:
        statuses = f"{self.event_status}/{self.market_status}/{self.selection_status}/{self.live or '-'}"
        return f"{statuses}: {self.code or 'backable'}"
