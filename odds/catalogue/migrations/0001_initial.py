"""The catalogue's models move to the catalogue app. State only: the tables keep their names (``odds_*``) and
their rows; nothing in the database changes."""

from decimal import Decimal

import django.core.validators
import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("odds", "0007_wallet_limits_exclusion"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="Competition",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("name", models.CharField(max_length=128)),
                        ("country", models.CharField(blank=True, max_length=64)),
                    ],
                    options={
                        "db_table": "odds_competition",
                        "ordering": ["sport", "name"],
                    },
                ),
                migrations.CreateModel(
                    name="Sport",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("slug", models.SlugField(unique=True)),
                        ("name", models.CharField(max_length=64)),
                        ("display_order", models.PositiveSmallIntegerField(default=0)),
                        (
                            "in_play_delay_s",
                            models.PositiveSmallIntegerField(
                                default=5,
                                help_text="Bets on in-play events are held this long, then accepted only if the market was not suspended and the price did not move against the punter's policy. 0 accepts them at once.",
                                validators=[django.core.validators.MaxValueValidator(30)],
                                verbose_name="in-play bet delay (s)",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "odds_sport",
                        "ordering": ["display_order", "name"],
                    },
                ),
                migrations.CreateModel(
                    name="Event",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("home", models.CharField(max_length=128)),
                        ("away", models.CharField(max_length=128)),
                        ("starts_at", models.DateTimeField(db_index=True)),
                        (
                            "status",
                            models.CharField(
                                choices=[
                                    ("scheduled", "Scheduled"),
                                    ("in_play", "In Play"),
                                    ("finished", "Finished"),
                                    ("cancelled", "Cancelled"),
                                ],
                                db_index=True,
                                default="scheduled",
                                max_length=16,
                            ),
                        ),
                        ("home_score", models.PositiveSmallIntegerField(default=0)),
                        ("away_score", models.PositiveSmallIntegerField(default=0)),
                        ("clock", models.CharField(blank=True, max_length=16)),
                        (
                            "competition",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="events",
                                to="catalogue.competition",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "odds_event",
                        "ordering": ["starts_at", "id"],
                    },
                ),
                migrations.CreateModel(
                    name="Market",
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
                                    ("match_result", "Match result (1X2)"),
                                    ("over_under", "Total goals over/under"),
                                    ("btts", "Both teams to score"),
                                    ("handicap", "Handicap"),
                                    ("match_winner", "Match winner"),
                                ],
                                max_length=32,
                            ),
                        ),
                        ("name", models.CharField(max_length=128)),
                        ("line", models.DecimalField(blank=True, decimal_places=2, max_digits=6, null=True)),
                        (
                            "status",
                            models.CharField(
                                choices=[
                                    ("open", "Open"),
                                    ("suspended", "Suspended"),
                                    ("closed", "Closed"),
                                    ("settled", "Settled"),
                                ],
                                db_index=True,
                                default="open",
                                max_length=16,
                            ),
                        ),
                        ("version", models.PositiveIntegerField(default=1, help_text="Increases on every change.")),
                        (
                            "suspended_at",
                            models.DateTimeField(
                                blank=True,
                                help_text="When the market was last suspended (bets held by the in-play delay check it).",
                                null=True,
                            ),
                        ),
                        ("display_order", models.PositiveSmallIntegerField(default=0)),
                        (
                            "event",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="markets",
                                to="catalogue.event",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "odds_market",
                        "ordering": ["event", "display_order", "id"],
                    },
                ),
                migrations.AddField(
                    model_name="competition",
                    name="sport",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT, related_name="competitions", to="catalogue.sport"
                    ),
                ),
                migrations.CreateModel(
                    name="Selection",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("name", models.CharField(max_length=128)),
                        (
                            "price",
                            models.DecimalField(
                                decimal_places=2,
                                max_digits=7,
                                validators=[django.core.validators.MinValueValidator(Decimal("1.01"))],
                            ),
                        ),
                        (
                            "status",
                            models.CharField(
                                choices=[("active", "Active"), ("suspended", "Suspended"), ("removed", "Removed")],
                                default="active",
                                max_length=16,
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
                        ("display_order", models.PositiveSmallIntegerField(default=0)),
                        (
                            "market",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="selections",
                                to="catalogue.market",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "odds_selection",
                        "ordering": ["market", "display_order", "id"],
                        "constraints": [
                            models.CheckConstraint(
                                condition=models.Q(("price__gte", Decimal("1.01"))), name="selection_price_min"
                            )
                        ],
                    },
                ),
                migrations.AddConstraint(
                    model_name="competition",
                    constraint=models.UniqueConstraint(fields=("sport", "name"), name="competition_unique_per_sport"),
                ),
            ],
        ),
    ]
