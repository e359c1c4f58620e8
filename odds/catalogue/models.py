"""The sportsbook catalogue: Sport → Competition → Event → Market → Selection."""

from __future__ import annotations

from decimal import Decimal

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from reducers import market_kinds, suspensions

# Seconds a bet on an in-play event is held before it is accepted, unless its sport says otherwise:
# long enough that a punter watching a faster picture than the trader cannot beat a goal.
IN_PLAY_DELAY_DEFAULT_S = 5
IN_PLAY_DELAY_MAX_S = 30


class Sport(models.Model):
    slug = models.SlugField(unique=True)
    name = models.CharField(max_length=64)
    display_order = models.PositiveSmallIntegerField(default=0)
    in_play_delay_s = models.PositiveSmallIntegerField(
        "in-play bet delay (s)",
        default=IN_PLAY_DELAY_DEFAULT_S,
        validators=[MaxValueValidator(IN_PLAY_DELAY_MAX_S)],
        help_text="Bets on in-play events are held this long, then accepted only if the market was not "
        "suspended and the price did not move against the punter's policy. 0 accepts them at once.",
    )

    class Meta:
        db_table = "odds_sport"
        ordering = ["display_order", "name"]

    def __str__(self) -> str:
        return self.name


class Competition(models.Model):
    sport = models.ForeignKey(Sport, on_delete=models.PROTECT, related_name="competitions")
    name = models.CharField(max_length=128)
    country = models.CharField(max_length=64, blank=True)

    class Meta:
        db_table = "odds_competition"
        ordering = ["sport", "name"]
        constraints = [models.UniqueConstraint(fields=["sport", "name"], name="competition_unique_per_sport")]

    def __str__(self) -> str:
        return self.name


class Event(models.Model):
    class Status(models.TextChoices):
        SCHEDULED = "scheduled"
        IN_PLAY = "in_play"
        FINISHED = "finished"
        CANCELLED = "cancelled"

    competition = models.ForeignKey(Competition, on_delete=models.PROTECT, related_name="events")
    home = models.CharField(max_length=128)
    away = models.CharField(max_length=128)
    starts_at = models.DateTimeField(db_index=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.SCHEDULED, db_index=True)
    home_score = models.PositiveSmallIntegerField(default=0)
    away_score = models.PositiveSmallIntegerField(default=0)
    clock = models.CharField(max_length=16, blank=True)

    class Meta:
        db_table = "odds_event"
        ordering = ["starts_at", "id"]

    def __str__(self) -> str:
        return self.name

    @property
    def name(self) -> str:
        return f"{self.home} v {self.away}"


class Market(models.Model):
    class Status(models.TextChoices):
        OPEN = "open"
        SUSPENDED = "suspended"
        CLOSED = "closed"
        SETTLED = "settled"

    event = models.ForeignKey(Event, on_delete=models.PROTECT, related_name="markets")
    # The kinds are declared once, in reducers/market_kinds.py.
    kind = models.CharField(max_length=32, choices=market_kinds.CHOICES)
    name = models.CharField(max_length=128)
    line = models.DecimalField(max_digits=6, decimal_places=2, null=True, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN, db_index=True)
    version = models.PositiveIntegerField(default=1, help_text="Increases on every change.")
    suspended_at = models.DateTimeField(
        null=True, blank=True, help_text="When the market was last suspended (bets held by the in-play delay check it)."
    )
    # Why the market is suspended now and who or what did it (the reasons: reducers/suspensions.py);
    # blank while it trades.
    suspension_reason = models.CharField(max_length=16, choices=suspensions.CHOICES, blank=True)
    suspended_by = models.CharField(max_length=150, blank=True)
    # The book's margin on this market as a trader set it (0.0500: an overround of 105 % per
    # winner); empty, the pricing model's own. The feed prices every book of the market with it.
    margin = models.DecimalField(
        max_digits=5,
        decimal_places=4,
        null=True,
        blank=True,
        help_text="The margin a trader set (0.05 = 5 %); empty: the pricing model's default.",
    )
    display_order = models.PositiveSmallIntegerField(default=0)

    class Meta:
        db_table = "odds_market"
        ordering = ["event", "display_order", "id"]
        # Beyond the model's own: what a trader does to a market (odds.core.staff, odds.core.roles).
        permissions = [
            ("trade_market", "Can suspend, resume and price markets"),
            ("result_market", "Can result and settle markets"),
        ]

    def __str__(self) -> str:
        return f"{self.event} — {self.name}"


class Selection(models.Model):
    class Status(models.TextChoices):
        ACTIVE = "active"
        SUSPENDED = "suspended"
        REMOVED = "removed"

    class Result(models.TextChoices):
        UNDECIDED = "undecided"
        WON = "won"
        LOST = "lost"
        VOID = "void"

    market = models.ForeignKey(Market, on_delete=models.PROTECT, related_name="selections")
    name = models.CharField(max_length=128)
    price = models.DecimalField(max_digits=7, decimal_places=2, validators=[MinValueValidator(Decimal("1.01"))])
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    result = models.CharField(max_length=16, choices=Result.choices, default=Result.UNDECIDED)
    display_order = models.PositiveSmallIntegerField(default=0)

    class Meta:
        db_table = "odds_selection"
        ordering = ["market", "display_order", "id"]
        constraints = [
            models.CheckConstraint(condition=models.Q(price__gte=Decimal("1.01")), name="selection_price_min")
        ]

    def __str__(self) -> str:
        return f"{self.name} @ {self.price}"
