"""Deposit limits, time-outs and self-exclusion; withdrawals in the ledger.

``sb_bet_place`` refuses a bet while the punter's time-out or self-exclusion runs (its second
version, odds/betting/sql/sb_bet_place.v2.sql)."""

import django.db.models.deletion
from django.db import migrations, models

from odds.betting.sql import sql_file


class Migration(migrations.Migration):
    dependencies = [
        ("odds", "0006_fewer_indexes_per_bet"),
    ]

    operations = [
        migrations.AddField(
            model_name="wallet",
            name="excluded_until",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="wallet",
            name="exclusion",
            field=models.CharField(blank=True, help_text="time_out or self_exclusion", max_length=16),
        ),
        migrations.AlterField(
            model_name="ledgerentry",
            name="kind",
            field=models.CharField(
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
        migrations.CreateModel(
            name="DepositLimit",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
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
                        to="odds.wallet",
                    ),
                ),
            ],
            options={
                "ordering": ["wallet", "period"],
                "constraints": [
                    models.UniqueConstraint(fields=("wallet", "period"), name="deposit_limit_once_per_period"),
                    models.CheckConstraint(condition=models.Q(("amount__gt", 0)), name="deposit_limit_positive"),
                ],
            },
        ),
        migrations.RunSQL([sql_file("sb_bet_place.v2.sql")], reverse_sql=[sql_file("sb_bet_place.v1.sql")]),
    ]
