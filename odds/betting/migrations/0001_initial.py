"""The bets and wallets move to the betting app. State only: the tables keep their names (``odds_*``) and
their rows; nothing in the database changes."""

from decimal import Decimal

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("odds", "0007_wallet_limits_exclusion"),
        ("catalogue", "0001_initial"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="Bet",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("idempotency_key", models.CharField(max_length=64)),
                        (
                            "request_fingerprint",
                            models.CharField(
                                help_text="Hash of the request, to refuse a key reused for a different bet.",
                                max_length=64,
                            ),
                        ),
                        (
                            "kind",
                            models.CharField(
                                choices=[("single", "Single"), ("accumulator", "Accumulator")], max_length=16
                            ),
                        ),
                        (
                            "status",
                            models.CharField(
                                choices=[
                                    ("pending", "Pending"),
                                    ("accepted", "Accepted"),
                                    ("rejected", "Rejected"),
                                    ("won", "Won"),
                                    ("lost", "Lost"),
                                    ("void", "Void"),
                                    ("cashed_out", "Cashed out"),
                                ],
                                default="pending",
                                max_length=16,
                            ),
                        ),
                        (
                            "price_policy",
                            models.CharField(
                                choices=[
                                    ("none", "Accept no price change"),
                                    ("any", "Accept any price change"),
                                    ("better", "Accept better prices only"),
                                ],
                                default="none",
                                max_length=8,
                            ),
                        ),
                        ("stake", models.DecimalField(decimal_places=2, max_digits=12)),
                        (
                            "odds",
                            models.DecimalField(
                                decimal_places=2, help_text="Combined decimal odds accepted.", max_digits=14
                            ),
                        ),
                        ("potential_return", models.DecimalField(decimal_places=2, max_digits=14)),
                        (
                            "payout",
                            models.DecimalField(
                                decimal_places=2,
                                default=Decimal("0.00"),
                                help_text="Paid at settlement or cash-out.",
                                max_digits=14,
                            ),
                        ),
                        ("reject_code", models.CharField(blank=True, max_length=32)),
                        ("reject_message", models.CharField(blank=True, max_length=255)),
                        ("placed_at", models.DateTimeField(auto_now_add=True, db_index=True)),
                        (
                            "accept_at",
                            models.DateTimeField(
                                blank=True,
                                help_text="A bet held by the in-play delay is decided at this time.",
                                null=True,
                            ),
                        ),
                        ("settled_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "user",
                            models.ForeignKey(
                                db_index=False,
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="bets",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                    ],
                    options={
                        "db_table": "odds_bet",
                        "ordering": ["-placed_at", "-id"],
                    },
                ),
                migrations.CreateModel(
                    name="BetLeg",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        (
                            "price",
                            models.DecimalField(
                                decimal_places=2,
                                help_text="Price accepted (for a rejected bet: the price at rejection).",
                                max_digits=7,
                            ),
                        ),
                        (
                            "price_seen",
                            models.DecimalField(
                                decimal_places=2, help_text="Price the punter saw on the slip.", max_digits=7
                            ),
                        ),
                        (
                            "result",
                            models.CharField(
                                choices=[
                                    ("undecided", "Undecided"),
                                    ("won", "Won"),
                                    ("lost", "Lost"),
                                    ("void", "Void"),
                                ],
                                default="undecided",
                                max_length=16,
                            ),
                        ),
                        ("position", models.PositiveSmallIntegerField(default=0)),
                        (
                            "bet",
                            models.ForeignKey(
                                db_index=False,
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="legs",
                                to="betting.bet",
                            ),
                        ),
                        (
                            "event",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="bet_legs",
                                to="catalogue.event",
                            ),
                        ),
                        (
                            "market",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="bet_legs",
                                to="catalogue.market",
                            ),
                        ),
                        (
                            "selection",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="bet_legs",
                                to="catalogue.selection",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "odds_betleg",
                        "ordering": ["bet", "position"],
                    },
                ),
                migrations.CreateModel(
                    name="Wallet",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("currency", models.CharField(default="GBP", max_length=3)),
                        ("balance", models.DecimalField(decimal_places=2, default=Decimal("0.00"), max_digits=14)),
                        (
                            "exclusion",
                            models.CharField(blank=True, help_text="time_out or self_exclusion", max_length=16),
                        ),
                        ("excluded_until", models.DateTimeField(blank=True, null=True)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("updated_at", models.DateTimeField(auto_now=True)),
                        (
                            "user",
                            models.OneToOneField(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="wallet",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                    ],
                    options={
                        "db_table": "odds_wallet",
                        "ordering": ["user__username"],
                    },
                ),
                migrations.CreateModel(
                    name="LedgerEntry",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        (
                            "kind",
                            models.CharField(
                                choices=[
                                    ("deposit", "Deposit"),
                                    ("withdrawal", "Withdrawal"),
                                    ("stake", "Stake held"),
                                    ("stake_release", "Stake to house"),
                                    ("payout", "Payout"),
                                    ("refund", "Refund"),
                                    ("cash_out", "Cash-out"),
                                ],
                                max_length=16,
                            ),
                        ),
                        (
                            "debit",
                            models.CharField(
                                choices=[
                                    ("wallet", "Wallet"),
                                    ("cash", "Cash"),
                                    ("bets_held", "Bets held"),
                                    ("house", "House"),
                                ],
                                max_length=16,
                            ),
                        ),
                        (
                            "credit",
                            models.CharField(
                                choices=[
                                    ("wallet", "Wallet"),
                                    ("cash", "Cash"),
                                    ("bets_held", "Bets held"),
                                    ("house", "House"),
                                ],
                                max_length=16,
                            ),
                        ),
                        ("amount", models.DecimalField(decimal_places=2, max_digits=14)),
                        (
                            "balance_after",
                            models.DecimalField(
                                decimal_places=2,
                                help_text="The wallet's balance once this entry was posted.",
                                max_digits=14,
                            ),
                        ),
                        (
                            "reference",
                            models.CharField(
                                blank=True, help_text="External reference, e.g. a payment id.", max_length=64
                            ),
                        ),
                        ("created_at", models.DateTimeField(auto_now_add=True, db_index=True)),
                        (
                            "bet",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="entries",
                                to="betting.bet",
                            ),
                        ),
                        (
                            "wallet",
                            models.ForeignKey(
                                db_index=False,
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="entries",
                                to="betting.wallet",
                            ),
                        ),
                    ],
                    options={
                        "verbose_name_plural": "ledger entries",
                        "db_table": "odds_ledgerentry",
                        "ordering": ["-id"],
                    },
                ),
                migrations.CreateModel(
                    name="DepositLimit",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        (
                            "period",
                            models.CharField(
                                choices=[("day", "Daily"), ("week", "Weekly"), ("month", "Monthly")], max_length=8
                            ),
                        ),
                        ("amount", models.DecimalField(decimal_places=2, max_digits=14)),
                        ("pending_amount", models.DecimalField(blank=True, decimal_places=2, max_digits=14, null=True)),
                        ("pending_from", models.DateTimeField(blank=True, null=True)),
                        ("updated_at", models.DateTimeField(auto_now=True)),
                        (
                            "wallet",
                            models.ForeignKey(
                                db_index=False,
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="deposit_limits",
                                to="betting.wallet",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "odds_depositlimit",
                        "ordering": ["wallet", "period"],
                    },
                ),
                migrations.AddIndex(
                    model_name="bet",
                    index=models.Index(
                        condition=models.Q(("status", "pending")), fields=["accept_at"], name="bet_pending_due"
                    ),
                ),
                migrations.AddConstraint(
                    model_name="bet",
                    constraint=models.UniqueConstraint(
                        fields=("user", "idempotency_key"), name="bet_idempotency_key_per_user"
                    ),
                ),
                migrations.AddConstraint(
                    model_name="bet",
                    constraint=models.CheckConstraint(condition=models.Q(("stake__gt", 0)), name="bet_stake_positive"),
                ),
                migrations.AddConstraint(
                    model_name="bet",
                    constraint=models.CheckConstraint(
                        condition=models.Q(("payout__gte", 0)), name="bet_payout_not_negative"
                    ),
                ),
                migrations.AddIndex(
                    model_name="betleg",
                    index=models.Index(fields=["market", "result"], name="bet_leg_market_result"),
                ),
                migrations.AddConstraint(
                    model_name="betleg",
                    constraint=models.UniqueConstraint(fields=("bet", "event"), name="bet_leg_one_per_event"),
                ),
                migrations.AddConstraint(
                    model_name="betleg",
                    constraint=models.CheckConstraint(
                        condition=models.Q(("price__gte", Decimal("1.01"))), name="bet_leg_price_min"
                    ),
                ),
                migrations.AddConstraint(
                    model_name="wallet",
                    constraint=models.CheckConstraint(
                        condition=models.Q(("balance__gte", 0)), name="wallet_balance_not_negative"
                    ),
                ),
                migrations.AddIndex(
                    model_name="ledgerentry",
                    index=models.Index(fields=["wallet", "-id"], name="ledger_wallet_recent"),
                ),
                migrations.AddConstraint(
                    model_name="ledgerentry",
                    constraint=models.CheckConstraint(
                        condition=models.Q(("amount__gt", 0)), name="ledger_amount_positive"
                    ),
                ),
                migrations.AddConstraint(
                    model_name="ledgerentry",
                    constraint=models.CheckConstraint(
                        condition=models.Q(("debit", models.F("credit")), _negated=True), name="ledger_two_accounts"
                    ),
                ),
                migrations.AddConstraint(
                    model_name="ledgerentry",
                    constraint=models.UniqueConstraint(
                        condition=models.Q(("bet__isnull", False)),
                        fields=("bet", "kind"),
                        name="ledger_once_per_bet_and_kind",
                    ),
                ),
                migrations.AddConstraint(
                    model_name="ledgerentry",
                    constraint=models.UniqueConstraint(
                        condition=models.Q(("reference", ""), _negated=True),
                        fields=("wallet", "kind", "reference"),
                        name="ledger_reference_unique",
                    ),
                ),
                migrations.AddConstraint(
                    model_name="depositlimit",
                    constraint=models.UniqueConstraint(
                        fields=("wallet", "period"), name="deposit_limit_once_per_period"
                    ),
                ),
                migrations.AddConstraint(
                    model_name="depositlimit",
                    constraint=models.CheckConstraint(
                        condition=models.Q(("amount__gt", 0)), name="deposit_limit_positive"
                    ),
                ),
            ],
        ),
    ]
