"""The audit log's table, and the trigger that makes it append-only."""

import django.utils.timezone
from django.db import migrations, models

from odds.audit.sql import sql_file

TRIGGER = "audit_append_only"


class Migration(migrations.Migration):
    initial = True

    dependencies = []

    operations = [
        migrations.CreateModel(
            name="AuditEntry",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("at", models.DateTimeField(db_index=True, default=django.utils.timezone.now)),
                ("actor", models.CharField(db_index=True, help_text="The staff member's username.", max_length=150)),
                ("actor_id", models.BigIntegerField(blank=True, null=True)),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("price_set", "Price set"),
                            ("market_suspend", "Market suspended"),
                            ("market_resume", "Market resumed"),
                            ("event_suspend", "Event suspended"),
                            ("event_resume", "Event resumed"),
                            ("competition_suspend", "Competition suspended"),
                            ("competition_resume", "Competition resumed"),
                            ("market_result", "Market resulted"),
                            ("settlement_request", "Settlement run again"),
                            ("bet_void", "Bet voided"),
                            ("admin_add", "Added in the admin"),
                            ("admin_change", "Changed in the admin"),
                            ("admin_delete", "Deleted in the admin"),
                        ],
                        db_index=True,
                        max_length=32,
                    ),
                ),
                (
                    "object_type",
                    models.CharField(help_text="market, selection, event, competition, bet, …", max_length=32),
                ),
                ("object_id", models.CharField(max_length=64)),
                ("object_label", models.CharField(blank=True, max_length=255)),
                ("before", models.JSONField(blank=True, default=dict)),
                ("after", models.JSONField(blank=True, default=dict)),
                ("reason", models.TextField(blank=True)),
            ],
            options={
                "verbose_name": "audit entry",
                "verbose_name_plural": "audit log",
                "ordering": ["-at", "-id"],
                "indexes": [models.Index(fields=["object_type", "object_id"], name="audit_object")],
            },
        ),
        # PostgreSQL itself refuses to change or remove a row (odds/audit/sql/sb_audit_append_only.v1.sql).
        migrations.RunSQL(
            [
                sql_file("sb_audit_append_only.v1.sql"),
                f"CREATE TRIGGER {TRIGGER} BEFORE UPDATE OR DELETE ON audit_auditentry"
                " FOR EACH ROW EXECUTE FUNCTION sb_audit_append_only()",
            ],
            reverse_sql=[
                f"DROP TRIGGER IF EXISTS {TRIGGER} ON audit_auditentry",
                "DROP FUNCTION IF EXISTS sb_audit_append_only()",
            ],
        ),
    ]
