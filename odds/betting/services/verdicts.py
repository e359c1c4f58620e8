"""The leg verdicts table, filled from the one rule (``reducers.betting.leg_verdict``)."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from reducers import betting


def leg_verdicts_sync(*, model: Any = None, using: str = "default") -> int:
    """Write every case of ``leg_verdict`` into the table ``sb_bet_place`` reads, replacing what
    it held; returns the number of cases. Run after every ``migrate`` (and by the migration that
    creates the table, with its historical ``model``), so the database never spells a rule of its own."""
    from odds.betting.models import LegVerdict

    target = model or LegVerdict
    rows = [
        target(
            event_status=event,
            market_status=market,
            selection_status=selection,
            live=live,
            code=verdict.code,
            message=verdict.message,
        )
        for event, market, selection, live, verdict in betting.leg_verdicts()
    ]
    with transaction.atomic(using=using):
        target.objects.using(using).all().delete()
        target.objects.using(using).bulk_create(rows)
    return len(rows)
