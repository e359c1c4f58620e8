"""The metric samples move to the ops app. State only: the tables keep their names (``odds_*``) and
their rows; nothing in the database changes."""

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
                    name="MetricSample",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        (
                            "slot",
                            models.BigIntegerField(
                                help_text="Epoch seconds divided by the sampling interval.", unique=True
                            ),
                        ),
                        ("ts", models.DateTimeField(db_index=True)),
                        ("values", models.JSONField(default=dict)),
                    ],
                    options={
                        "db_table": "odds_metricsample",
                        "ordering": ["ts"],
                    },
                ),
            ],
        ),
    ]
