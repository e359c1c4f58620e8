"""The trading desk's own records: the exchange rates the operator sets, and customers' stake
limits.

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
from reducers.trading import STAKE_FACTOR_MAX, STAKE_FACTOR_MIN, STAKE_FACTOR_PLACES


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


class CustomerLimit(models.Model):
    """A customer's stake factor, set by traders: a bet above ``stake_factor`` times the market's
    maximum stake is referred to a trader (``reducers.trading``; docs/referral.md). A customer with
    no row, or an empty factor, is held to the market's maximum only."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, primary_key=True, related_name="customer_limit"
    )
    stake_factor = models.DecimalField(max_digits=4, decimal_places=STAKE_FACTOR_PLACES, null=True, blank=True)
    set_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    set_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(stake_factor__isnull=True)
                | models.Q(stake_factor__gte=STAKE_FACTOR_MIN, stake_factor__lte=STAKE_FACTOR_MAX),
                name="customer_stake_factor_within_bounds",
            ),
        ]
        permissions = [("set_customer_limits", "Can set customers' stake limits and decide referred bets")]

    def __str__(self) -> str:
        return f"{self.user}: stake factor {self.stake_factor}"


class CustomerSportLimit(models.Model):
    """The largest stake a customer places on a sport without a referral (in the customer's wallet
    currency)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="sport_limits")
    sport = models.ForeignKey("catalogue.Sport", on_delete=models.PROTECT, related_name="+")
    max_stake = models.DecimalField(max_digits=12, decimal_places=2)
    set_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    set_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["user", "sport"]
        constraints = [
            models.UniqueConstraint(fields=["user", "sport"], name="customer_sport_limit_once"),
            models.CheckConstraint(condition=models.Q(max_stake__gt=0), name="customer_sport_limit_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.user} {self.sport}: {self.max_stake}"
