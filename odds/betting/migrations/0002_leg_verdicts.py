"""The leg verdicts (the database's copy of ``reducers.betting.leg_verdict``) and the third
version of ``sb_bet_place``, which reads them and takes the price policy as the moves it accepts
(odds/betting/sql/sb_bet_place.v3.sql)."""

from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps

from odds.betting.sql import sql_file

PLACE_V2_SIGNATURE = "sb_bet_place(integer, text, text, text, numeric, jsonb, numeric, text)"
PLACE_V3_SIGNATURE = "sb_bet_place(integer, text, text, text, integer[], numeric, jsonb, numeric, text)"


def verdicts_fill(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    from odds.betting.services.verdicts import leg_verdicts_sync

    leg_verdicts_sync(model=apps.get_model("betting", "LegVerdict"))


class Migration(migrations.Migration):
    dependencies = [
        ("betting", "0001_initial"),
    ]

    operations = [
        migrations.CreateModel(
            name="LegVerdict",
            fields=[
                (
                    "pk",
                    models.CompositePrimaryKey(
                        "event_status",
                        "market_status",
                        "selection_status",
                        "live",
                        blank=True,
                        editable=False,
                        primary_key=True,
                        serialize=False,
                    ),
                ),
                ("event_status", models.CharField(max_length=16)),
                ("market_status", models.CharField(max_length=16)),
                ("selection_status", models.CharField(max_length=16)),
                ("live", models.CharField(blank=True, max_length=32)),
                ("code", models.CharField(blank=True, max_length=32)),
                ("message", models.CharField(blank=True, max_length=255)),
            ],
            options={
                "verbose_name": "leg verdict",
            },
        ),
        migrations.RunPython(verdicts_fill, migrations.RunPython.noop),
        # A new argument: the second version is dropped, not replaced (it would stay as an overload).
        migrations.RunSQL(
            [f"DROP FUNCTION {PLACE_V2_SIGNATURE}", sql_file("sb_bet_place.v3.sql")],
            reverse_sql=[f"DROP FUNCTION {PLACE_V3_SIGNATURE}", sql_file("sb_bet_place.v2.sql")],
        ),
    ]
