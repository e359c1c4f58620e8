"""Bets: singles and accumulators, with the price accepted for every leg."""

from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.db import models

from odds.catalogue.models import Event, Market, Selection


class Bet(models.Model):
    class Kind(models.TextChoices):
        SINGLE = "single"
        ACCUMULATOR = "accumulator"

    class Status(models.TextChoices):
        PENDING = "pending"
        ACCEPTED = "accepted"
        REJECTED = "rejected"
        WON = "won"
        LOST = "lost"
        VOID = "void"
        CASHED_OUT = "cashed_out", "Cashed out"

    class PricePolicy(models.TextChoices):
        NONE = "none", "Accept no price change"
        ANY = "any", "Accept any price change"
        BETTER = "better", "Accept better prices only"

    OPEN_STATUSES = (Status.PENDING, Status.ACCEPTED)
    SETTLED_STATUSES = (Status.WON, Status.LOST, Status.VOID, Status.CASHED_OUT)

    # Found by user through the idempotency constraint's index (user first): no index of its own,
    # one less to write per bet.
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="bets", db_index=False)
    idempotency_key = models.CharField(max_length=64)
    request_fingerprint = models.CharField(
        max_length=64, help_text="Hash of the request, to refuse a key reused for a different bet."
    )
    kind = models.CharField(max_length=16, choices=Kind.choices)
    # Few distinct values: an index would not be used for them; pending bets have a partial one.
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    price_policy = models.CharField(max_length=8, choices=PricePolicy.choices, default=PricePolicy.NONE)
    stake = models.DecimalField(max_digits=12, decimal_places=2)
    odds = models.DecimalField(max_digits=14, decimal_places=2, help_text="Combined decimal odds accepted.")
    potential_return = models.DecimalField(max_digits=14, decimal_places=2)
    payout = models.DecimalField(
        max_digits=14, decimal_places=2, default=Decimal("0.00"), help_text="Paid at settlement or cash-out."
    )
    reject_code = models.CharField(max_length=32, blank=True)
    reject_message = models.CharField(max_length=255, blank=True)
    # A default in the database too: the placement statement (odds/betting/sql) inserts bets
    # naming only its own columns.
    void_reason = models.CharField(
        max_length=255, blank=True, default="", db_default="", help_text="Why a trader voided the bet, for the punter."
    )
    placed_at = models.DateTimeField(auto_now_add=True, db_index=True)
    accept_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="A bet held by the in-play delay, or referred to a trader, is decided by this time.",
    )
    # A bet above the customer's stake limit is referred to a trader (docs/referral.md): the limit
    # it went over; null for every other bet. Defaults in the database too: the placement
    # statement names only its own columns.
    referred_limit = models.DecimalField(
        max_digits=12,
        decimal_places=2,
        null=True,
        blank=True,
        help_text="The customer's limit a referred bet was over.",
    )
    # A trader's counter-offer on a referred bet (docs/referral.md): a lower stake or, on a single,
    # another price, and what it returns; the punter takes it or turns it down by ``accept_at``.
    # Null while no offer stands.
    offer_stake = models.DecimalField(max_digits=12, decimal_places=2, null=True, blank=True)
    offer_price = models.DecimalField(max_digits=7, decimal_places=2, null=True, blank=True)
    offer_return = models.DecimalField(max_digits=14, decimal_places=2, null=True, blank=True)
    offered_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The trader who accepted or declined a referred bet.",
    )
    settled_at = models.DateTimeField(null=True, blank=True)
    # How many times a resettlement opened the bet again after it had settled (a lost accumulator
    # whose corrected leg no longer loses, docs/resettlement.md): its later settlement entries
    # are told apart from the first ones by this count (``bet_entry_reference``).
    reopened = models.PositiveSmallIntegerField(default=0, db_default=0)

    class Meta:
        db_table = "odds_bet"
        ordering = ["-placed_at", "-id"]
        permissions = [("void_bet", "Can void bets (the stake goes back)")]
        constraints = [
            models.UniqueConstraint(fields=["user", "idempotency_key"], name="bet_idempotency_key_per_user"),
            models.CheckConstraint(condition=models.Q(stake__gt=0), name="bet_stake_positive"),
            models.CheckConstraint(condition=models.Q(payout__gte=0), name="bet_payout_not_negative"),
        ]
        indexes = [
            models.Index(fields=["accept_at"], condition=models.Q(status="pending"), name="bet_pending_due"),
        ]

    def __str__(self) -> str:
        return f"#{self.pk} {self.get_kind_display()} {self.stake} @ {self.odds} ({self.status})"

    @property
    def is_open(self) -> bool:
        return self.status in self.OPEN_STATUSES


class BetLeg(models.Model):
    class Result(models.TextChoices):
        UNDECIDED = "undecided"
        WON = "won"
        LOST = "lost"
        VOID = "void"

    # Found by bet through the one-leg-per-event constraint's index (bet first).
    bet = models.ForeignKey(Bet, on_delete=models.CASCADE, related_name="legs", db_index=False)
    selection = models.ForeignKey(Selection, on_delete=models.PROTECT, related_name="bet_legs")
    # Denormalised from the selection so that "one leg per event" is a database constraint and
    # settlement finds a market's legs without joins.
    market = models.ForeignKey(Market, on_delete=models.PROTECT, related_name="bet_legs")
    event = models.ForeignKey(Event, on_delete=models.PROTECT, related_name="bet_legs")
    price = models.DecimalField(
        max_digits=7, decimal_places=2, help_text="Price accepted (for a rejected bet: the price at rejection)."
    )
    price_seen = models.DecimalField(max_digits=7, decimal_places=2, help_text="Price the punter saw on the slip.")
    result = models.CharField(max_length=16, choices=Result.choices, default=Result.UNDECIDED)
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        db_table = "odds_betleg"
        ordering = ["bet", "position"]
        constraints = [
            models.UniqueConstraint(fields=["bet", "event"], name="bet_leg_one_per_event"),
            models.CheckConstraint(condition=models.Q(price__gte=Decimal("1.01")), name="bet_leg_price_min"),
        ]
        indexes = [models.Index(fields=["market", "result"], name="bet_leg_market_result")]

    def __str__(self) -> str:
        return f"{self.selection.name} @ {self.price}"
