"""Deposit limits, time-outs and self-exclusion; withdrawals in the ledger."""

import importlib

import django.db.models.deletion
from django.db import migrations, models

# ``sb_bet_place`` of 0005, refusing a bet while the punter's time-out or self-exclusion runs. The
# check reads the wallet row the function locks first anyway: no extra round trip per bet.
_PREVIOUS = importlib.import_module("odds.migrations.0005_bet_place_function").BET_PLACE
# After the idempotency key's lookup (a retry of a bet placed before the break still answers it),
# before the legs are read.
_BEFORE_LEGS = "\n    FOR v_leg IN\n"
_EXCLUDED = """
    SELECT excluded_until, exclusion INTO v_excluded_until, v_exclusion FROM odds_wallet WHERE id = v_wallet_id;
    IF v_excluded_until IS NOT NULL AND v_excluded_until > v_now THEN
        RETURN jsonb_build_object(
            'outcome', 'excluded', 'exclusion', v_exclusion,
            'until', (extract(epoch FROM v_excluded_until) * 1000000)::bigint
        );
    END IF;
"""
assert _PREVIOUS.count(_BEFORE_LEGS) == 1
BET_PLACE = _PREVIOUS.replace(_BEFORE_LEGS, _EXCLUDED + _BEFORE_LEGS).replace(
    "    v_balance numeric;\n", "    v_balance numeric;\n    v_excluded_until timestamptz;\n    v_exclusion text;\n", 1
)


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
        migrations.RunSQL([BET_PLACE], reverse_sql=[_PREVIOUS]),
    ]
