"""The trading desk's own records: the exchange rates the operator sets.

Markets' prices are free of currency; a punter's money is in their wallet's currency. The desk adds
every wallet's amounts up in the book's currency (``reducers.rules.BOOK_CURRENCY``) at these rates
(docs/liability.md). Each change is a new row (the newest row of a currency is its rate) and an
entry in the audit log, so every rate the desk ever used stays on record.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from reducers.rates import MAX_RATE, MIN_RATE, RATE_PLACES
from reducers.rules import CURRENCY_SYMBOLS


class ExchangeRate(models.Model):
    """What one unit of ``currency`` is worth in the book's currency, from ``set_at`` on."""

    currency = models.CharField(max_length=3, choices=[(c, c) for c in CURRENCY_SYMBOLS])
    rate = models.DecimalField(max_digits=6 + RATE_PLACES, decimal_places=RATE_PLACES)
    set_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    set_at = models.DateTimeField(default=timezone.now)
    note = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["-set_at", "-id"]
        indexes = [models.Index(fields=["currency", "-set_at", "-id"], name="rate_currency_latest")]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(rate__gte=MIN_RATE, rate__lte=MAX_RATE), name="rate_within_bounds"
            ),
        ]
        permissions = [("set_exchange_rate", "Can set the exchange rates the desk converts at")]

    def __str__(self) -> str:
        return f"{self.currency} {self.rate} from {self.set_at:%Y-%m-%d %H:%M}"
