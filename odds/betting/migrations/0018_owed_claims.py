"""What a corrected result's claw-back leaves owed: the wallet's ``owed`` total and one
``OwedClaim`` per bet, recovered from the wallet's next credits (docs/resettlement.md)."""

from decimal import Decimal

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("betting", "0017_resettle_in_limits"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="OwedClaim",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("amount", models.DecimalField(decimal_places=2, help_text="What was left owed.", max_digits=14)),
                ("outstanding", models.DecimalField(decimal_places=2, help_text="What is still owed.", max_digits=14)),
                ("reference", models.CharField(help_text="The resettlement's entry reference.", max_length=64)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "recovered_at",
                    models.DateTimeField(blank=True, help_text="When the last of it was recovered.", null=True),
                ),
            ],
            options={
                "db_table": "odds_owedclaim",
                "ordering": ["id"],
            },
        ),
        migrations.AddField(
            model_name="wallet",
            name="owed",
            field=models.DecimalField(
                db_default=Decimal("0.00"), decimal_places=2, default=Decimal("0.00"), max_digits=14
            ),
        ),
        migrations.AddConstraint(
            model_name="wallet",
            constraint=models.CheckConstraint(condition=models.Q(("owed__gte", 0)), name="wallet_owed_not_negative"),
        ),
        migrations.AddField(
            model_name="owedclaim",
            name="bet",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT, related_name="owed_claims", to="betting.bet"
            ),
        ),
        migrations.AddField(
            model_name="owedclaim",
            name="wallet",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT, related_name="owed_claims", to="betting.wallet"
            ),
        ),
        migrations.AddIndex(
            model_name="owedclaim",
            index=models.Index(
                condition=models.Q(("outstanding__gt", 0)), fields=["wallet", "id"], name="owed_claim_open"
            ),
        ),
        migrations.AddConstraint(
            model_name="owedclaim",
            constraint=models.CheckConstraint(condition=models.Q(("amount__gt", 0)), name="owed_claim_amount_positive"),
        ),
        migrations.AddConstraint(
            model_name="owedclaim",
            constraint=models.CheckConstraint(
                condition=models.Q(("outstanding__gte", 0), ("outstanding__lte", models.F("amount"))),
                name="owed_claim_outstanding_in_amount",
            ),
        ),
        migrations.AddConstraint(
            model_name="owedclaim",
            constraint=models.UniqueConstraint(fields=("reference",), name="owed_claim_once_per_reference"),
        ),
    ]
