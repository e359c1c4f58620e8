"""The catalogue, bets and wallets, and metric samples now belong to their domain apps
(``odds.catalogue``, ``odds.betting``, ``odds.ops``): removed from this app's state only, as
those apps' first migrations add them; the tables and rows stay as they are."""

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps

MOVED = {
    "catalogue": ("sport", "competition", "event", "market", "selection"),
    "betting": ("bet", "betleg", "wallet", "ledgerentry", "depositlimit"),
    "ops": ("metricsample",),
}


def content_types_follow(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    """The moved models keep their content types (and so their permissions and the admin's
    history) under their new app labels."""
    content_type = apps.get_model("contenttypes", "ContentType")
    for label, names in MOVED.items():
        for name in names:
            if not content_type.objects.filter(app_label=label, model=name).exists():
                content_type.objects.filter(app_label="odds", model=name).update(app_label=label)


def content_types_return(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    content_type = apps.get_model("contenttypes", "ContentType")
    for label, names in MOVED.items():
        content_type.objects.filter(app_label=label, model__in=names).update(app_label="odds")


class Migration(migrations.Migration):
    dependencies = [
        ("catalogue", "0001_initial"),
        ("betting", "0001_initial"),
        ("ops", "0001_initial"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("odds", "0007_wallet_limits_exclusion"),
    ]

    operations = [
        migrations.RunPython(content_types_follow, content_types_return),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveField(
                    model_name="bet",
                    name="user",
                ),
                migrations.RemoveField(
                    model_name="betleg",
                    name="bet",
                ),
                migrations.RemoveField(
                    model_name="ledgerentry",
                    name="bet",
                ),
                migrations.RemoveField(
                    model_name="betleg",
                    name="event",
                ),
                migrations.RemoveField(
                    model_name="betleg",
                    name="market",
                ),
                migrations.RemoveField(
                    model_name="betleg",
                    name="selection",
                ),
                migrations.RemoveField(
                    model_name="competition",
                    name="sport",
                ),
                migrations.RemoveField(
                    model_name="event",
                    name="competition",
                ),
                migrations.RemoveField(
                    model_name="depositlimit",
                    name="wallet",
                ),
                migrations.RemoveField(
                    model_name="market",
                    name="event",
                ),
                migrations.RemoveField(
                    model_name="ledgerentry",
                    name="wallet",
                ),
                migrations.RemoveField(
                    model_name="selection",
                    name="market",
                ),
                migrations.DeleteModel(
                    name="MetricSample",
                ),
                migrations.RemoveField(
                    model_name="wallet",
                    name="user",
                ),
                migrations.DeleteModel(
                    name="Bet",
                ),
                migrations.DeleteModel(
                    name="BetLeg",
                ),
                migrations.DeleteModel(
                    name="Sport",
                ),
                migrations.DeleteModel(
                    name="Competition",
                ),
                migrations.DeleteModel(
                    name="DepositLimit",
                ),
                migrations.DeleteModel(
                    name="Event",
                ),
                migrations.DeleteModel(
                    name="LedgerEntry",
                ),
                migrations.DeleteModel(
                    name="Market",
                ),
                migrations.DeleteModel(
                    name="Selection",
                ),
                migrations.DeleteModel(
                    name="Wallet",
                ),
            ],
        ),
    ]
