"""Punters' wallets and the double-entry ledger behind every balance change.

Each ``LedgerEntry`` moves one amount from a debit account to a credit account, so every entry
balances by construction. The accounts are the punter's wallet and three book accounts:

- ``cash``: money entering or leaving the platform (deposits, withdrawals);
- ``bets_held``: stakes of open bets, held until the bet is settled, cashed out or voided;
- ``house``: the book's own money (a settled stake becomes the house's; payouts come from it).

``Wallet.balance`` is the running total of the wallet account, updated in the same transaction
as the entry under a row lock on the wallet; ``wallet_reconcile`` recomputes it from the ledger.
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import ClassVar

from django.conf import settings
from django.db import models


class Wallet(models.Model):
    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="wallet")
    currency = models.CharField(max_length=3, default="GBP")
    balance = models.DecimalField(max_digits=14, decimal_places=2, default=Decimal("0.00"))
    # A time-out or self-exclusion the punter chose: no bets, cash-outs or deposits before
    # ``excluded_until``. Read by ``sb_bet_place`` from the row it locks anyway, so enforcing it
    # costs placement nothing.
    exclusion = models.CharField(max_length=16, blank=True, help_text="time_out or self_exclusion")
    excluded_until = models.DateTimeField(null=True, blank=True)
    # A signed-up punter whose email is not verified yet browses and deposits but places no bet;
    # read by ``sb_bet_place`` from the row it locks. False for every account opened otherwise.
    email_unverified = models.BooleanField(default=False, db_default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "odds_wallet"
        ordering = ["user__username"]
        constraints = [models.CheckConstraint(condition=models.Q(balance__gte=0), name="wallet_balance_not_negative")]

    def __str__(self) -> str:
        return f"{self.user} {self.currency} {self.balance}"


class LedgerEntry(models.Model):
    class Kind(models.TextChoices):
        DEPOSIT = "deposit"
        WITHDRAWAL = "withdrawal"
        STAKE = "stake", "Stake held"
        STAKE_RELEASE = "stake_release", "Stake to house"
        PAYOUT = "payout"
        REFUND = "refund"
        CASH_OUT = "cash_out", "Cash-out"

    class Account(models.TextChoices):
        WALLET = "wallet"
        CASH = "cash"
        BETS_HELD = "bets_held", "Bets held"
        HOUSE = "house"

    # Found by wallet through ``ledger_wallet_recent`` (wallet first).
    wallet = models.ForeignKey(Wallet, on_delete=models.PROTECT, related_name="entries", db_index=False)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    debit = models.CharField(max_length=16, choices=Account.choices)
    credit = models.CharField(max_length=16, choices=Account.choices)
    amount = models.DecimalField(max_digits=14, decimal_places=2)
    balance_after = models.DecimalField(
        max_digits=14, decimal_places=2, help_text="The wallet's balance once this entry was posted."
    )
    bet = models.ForeignKey("betting.Bet", on_delete=models.PROTECT, null=True, blank=True, related_name="entries")
    reference = models.CharField(max_length=64, blank=True, help_text="External reference, e.g. a payment id.")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        db_table = "odds_ledgerentry"
        ordering = ["-id"]
        verbose_name_plural = "ledger entries"
        constraints = [
            models.CheckConstraint(condition=models.Q(amount__gt=0), name="ledger_amount_positive"),
            models.CheckConstraint(condition=~models.Q(debit=models.F("credit")), name="ledger_two_accounts"),
            # A bet can hold, release, pay or refund its stake once: settlement that runs twice
            # fails here rather than paying twice.
            models.UniqueConstraint(
                fields=["bet", "kind"], condition=models.Q(bet__isnull=False), name="ledger_once_per_bet_and_kind"
            ),
            models.UniqueConstraint(
                fields=["wallet", "kind", "reference"],
                condition=~models.Q(reference=""),
                name="ledger_reference_unique",
            ),
        ]
        indexes = [models.Index(fields=["wallet", "-id"], name="ledger_wallet_recent")]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} {self.amount} ({self.debit} → {self.credit})"

    @property
    def wallet_delta(self) -> Decimal:
        """The change of the wallet's balance this entry made (zero for book-internal moves)."""
        if self.credit == self.Account.WALLET:
            return self.amount
        if self.debit == self.Account.WALLET:
            return -self.amount
        return Decimal("0.00")


class DepositLimit(models.Model):
    """A punter's limit on deposits over a rolling period (the last 24 hours, 7 days, 30 days).

    A lower limit applies at once; a higher one only from ``pending_from`` (a cooling-off period
    later): until then ``amount`` still applies and ``pending_amount`` waits.
    """

    class Period(models.TextChoices):
        DAY = "day", "Daily"
        WEEK = "week", "Weekly"
        MONTH = "month", "Monthly"

    # The rolling window each period counts deposits over.
    LENGTHS: ClassVar[dict[str, timedelta]] = {
        Period.DAY: timedelta(days=1),
        Period.WEEK: timedelta(days=7),
        Period.MONTH: timedelta(days=30),
    }

    wallet = models.ForeignKey(Wallet, on_delete=models.PROTECT, related_name="deposit_limits", db_index=False)
    period = models.CharField(max_length=8, choices=Period.choices)
    amount = models.DecimalField(max_digits=14, decimal_places=2)
    pending_amount = models.DecimalField(max_digits=14, decimal_places=2, null=True, blank=True)
    pending_from = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "odds_depositlimit"
        ordering = ["wallet", "period"]
        constraints = [
            models.UniqueConstraint(fields=["wallet", "period"], name="deposit_limit_once_per_period"),
            models.CheckConstraint(condition=models.Q(amount__gt=0), name="deposit_limit_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.get_period_display()} deposit limit {self.amount}"
