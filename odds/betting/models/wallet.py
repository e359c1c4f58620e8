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

from reducers import limits, rules

# The reference of an entry that recovers an owed claw-back: ``recover-<credit entry>-<claim>``.
RECOVERY_PREFIX = "recover-"


class Wallet(models.Model):
    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="wallet")
    # The database's default as well: ``sb_bet_place`` opens a missing wallet in it.
    currency = models.CharField(max_length=3, default=rules.BOOK_CURRENCY, db_default=rules.BOOK_CURRENCY)
    balance = models.DecimalField(max_digits=14, decimal_places=2, default=Decimal("0.00"))
    # A time-out or self-exclusion the punter chose: no bets, cash-outs or deposits before
    # ``excluded_until``. Read by ``sb_bet_place`` from the row it locks anyway, so enforcing it
    # costs placement nothing.
    exclusion = models.CharField(max_length=16, blank=True, db_default="", help_text="time_out or self_exclusion")
    excluded_until = models.DateTimeField(null=True, blank=True)
    # A signed-up punter whose email is not verified yet browses and deposits but places no bet;
    # read by ``sb_bet_place`` from the row it locks. False for every account opened otherwise.
    email_unverified = models.BooleanField(default=False, db_default=False)
    # Whether the punter has set a loss or wager limit (``WalletLimit``): read by ``sb_bet_place``
    # from the row it locks, so a punter without one pays nothing for the rule. Set with the first
    # such limit, never cleared (a limit is raised, not removed).
    bet_limits = models.BooleanField(default=False, db_default=False)
    # Whether traders have given the customer a stake limit (``odds.trading.models.CustomerLimit``
    # or ``CustomerSportLimit``): read by ``sb_bet_place`` from the row it locks, so a customer
    # without one pays nothing for the referral rule. Set with the first limit, kept after.
    customer_limits = models.BooleanField(default=False, db_default=False)
    # What the punter owes the book: the part of a corrected result's claw-back the balance could
    # not give (a balance never goes below zero). The sum of the wallet's open ``OwedClaim`` rows,
    # kept on the row every money path locks, so a credit to a wallet that owes nothing reads no
    # more rows. While it is above zero the balance is zero: every credit is taken first.
    owed = models.DecimalField(max_digits=14, decimal_places=2, default=Decimal("0.00"), db_default=Decimal("0.00"))
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "odds_wallet"
        ordering = ["user__username"]
        constraints = [
            models.CheckConstraint(condition=models.Q(balance__gte=0), name="wallet_balance_not_negative"),
            models.CheckConstraint(condition=models.Q(owed__gte=0), name="wallet_owed_not_negative"),
        ]

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
        # The part of a referred bet's held stake that a trader's lower offer gives back when the
        # punter takes it (docs/referral.md).
        STAKE_RETURN = "stake_return", "Stake part returned"
        # What a corrected result moves for a settled bet (docs/resettlement.md): the difference
        # between what it paid and what it pays now, or its stake held again.
        RESETTLE = "resettle", "Resettlement"

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
            # fails here rather than paying twice. Entries with a reference (a resettlement's, a
            # bet's settlement after one opened it again) are once per reference instead.
            models.UniqueConstraint(
                fields=["bet", "kind"],
                condition=models.Q(bet__isnull=False, reference=""),
                name="ledger_once_per_bet_and_kind",
            ),
            models.UniqueConstraint(
                fields=["wallet", "kind", "reference"],
                condition=~models.Q(reference=""),
                name="ledger_reference_unique",
            ),
        ]
        indexes = [
            models.Index(fields=["wallet", "-id"], name="ledger_wallet_recent"),
            # What a rolling window of the wallet holds (the sums of its limits), read from the
            # index alone.
            models.Index(
                fields=["wallet", "created_at"],
                include=["kind", "amount", "debit", "credit"],
                name="ledger_wallet_time",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} {self.amount} ({self.debit} → {self.credit})"

    @property
    def label(self) -> str:
        """The entry's kind in the punter's words: a resettlement entry that recovers what a
        corrected result left owed says so."""
        if self.kind == self.Kind.RESETTLE and self.reference.startswith(RECOVERY_PREFIX):
            return "Owed recovered"
        return self.get_kind_display()

    @property
    def wallet_delta(self) -> Decimal:
        """The change of the wallet's balance this entry made (zero for book-internal moves)."""
        if self.credit == self.Account.WALLET:
            return self.amount
        if self.debit == self.Account.WALLET:
            return -self.amount
        return Decimal("0.00")


class OwedClaim(models.Model):
    """What a corrected result clawed back from a bet and the punter's balance could not give
    (docs/resettlement.md, "What is owed"). ``outstanding`` falls as later credits to the wallet
    (payouts, refunds, cash-outs, deposits) are taken to recover it, oldest claim first; each
    recovery is a ``resettle`` entry wallet → house against the claim's bet. Never deleted."""

    wallet = models.ForeignKey(Wallet, on_delete=models.PROTECT, related_name="owed_claims")
    bet = models.ForeignKey("betting.Bet", on_delete=models.PROTECT, related_name="owed_claims")
    amount = models.DecimalField(max_digits=14, decimal_places=2, help_text="What was left owed.")
    outstanding = models.DecimalField(max_digits=14, decimal_places=2, help_text="What is still owed.")
    reference = models.CharField(max_length=64, help_text="The resettlement's entry reference.")
    created_at = models.DateTimeField(auto_now_add=True)
    recovered_at = models.DateTimeField(null=True, blank=True, help_text="When the last of it was recovered.")

    class Meta:
        db_table = "odds_owedclaim"
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(condition=models.Q(amount__gt=0), name="owed_claim_amount_positive"),
            models.CheckConstraint(
                condition=models.Q(outstanding__gte=0, outstanding__lte=models.F("amount")),
                name="owed_claim_outstanding_in_amount",
            ),
            models.UniqueConstraint(fields=["reference"], name="owed_claim_once_per_reference"),
        ]
        indexes = [
            models.Index(fields=["wallet", "id"], condition=models.Q(outstanding__gt=0), name="owed_claim_open"),
        ]

    def __str__(self) -> str:
        return f"owed {self.outstanding} of {self.amount} (bet {self.bet_id})"


class WalletLimit(models.Model):
    """A punter's limit on their deposits, wagers or losses over a rolling period (the last 24
    hours, 7 days, 30 days): the rule is ``reducers.limits``'s.

    A lower limit applies at once; a higher one only from ``pending_from`` (a cooling-off period
    later): until then ``amount`` still applies and ``pending_amount`` waits. Loss and wager
    limits are enforced by ``sb_bet_place``, which looks for them only when the wallet's
    ``bet_limits`` says there are some.
    """

    # The kinds and periods of ``reducers.limits`` (tests/unit/test_limits.py keeps them equal).
    class Kind(models.TextChoices):
        DEPOSIT = "deposit", "Deposit"
        LOSS = "loss", "Loss"
        WAGER = "wager", "Wager"

    class Period(models.TextChoices):
        DAY = "day", "Daily"
        WEEK = "week", "Weekly"
        MONTH = "month", "Monthly"

    # The rolling window each period counts over.
    LENGTHS: ClassVar[dict[str, timedelta]] = limits.PERIOD_LENGTHS

    wallet = models.ForeignKey(Wallet, on_delete=models.PROTECT, related_name="limits", db_index=False)
    kind = models.CharField(max_length=8, choices=Kind.choices, default="deposit")
    period = models.CharField(max_length=8, choices=Period.choices)
    amount = models.DecimalField(max_digits=14, decimal_places=2)
    pending_amount = models.DecimalField(max_digits=14, decimal_places=2, null=True, blank=True)
    pending_from = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "odds_walletlimit"
        ordering = ["wallet", "kind", "period"]
        constraints = [
            # Also the index by which the placement statement finds a wallet's limits.
            models.UniqueConstraint(fields=["wallet", "kind", "period"], name="wallet_limit_once_per_kind_and_period"),
            models.CheckConstraint(condition=models.Q(amount__gt=0), name="wallet_limit_positive"),
            models.CheckConstraint(
                condition=models.Q(pending_amount__isnull=True) | models.Q(pending_amount__gt=0),
                name="wallet_limit_pending_positive",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_period_display()} {self.kind} limit {self.amount}"

    @property
    def terms(self) -> limits.LimitTerms:
        return limits.LimitTerms(amount=self.amount, pending_amount=self.pending_amount, pending_from=self.pending_from)
