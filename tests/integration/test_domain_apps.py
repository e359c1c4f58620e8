"""The domain apps inside ``odds``: each model belongs to its domain's app and keeps the table it was
created with, and moving them there changed nothing in the database."""

from __future__ import annotations

import importlib
import io

import pytest
from django.apps import apps
from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command

pytestmark = pytest.mark.django_db

HOMES = {
    "catalogue": ["Sport", "Competition", "Event", "Market", "Selection"],
    "betting": ["Bet", "BetLeg", "Wallet", "LedgerEntry", "WalletLimit"],
    "ops": ["MetricSample", "Incident", "DeadLetterAction", "DeadLetterHandled"],
    "odds": ["OutboxMessage"],
}
# Models made in their app since (their tables carry the app's name, or none: a holder of permissions).
BORN_THERE = {"betting": ["LegVerdict", "OwedClaim", "PlayPreferences", "PlaySession"], "ops": ["Operations"]}
MOVES = [
    ("catalogue", "0001_initial"),
    ("betting", "0001_initial"),
    ("ops", "0001_initial"),
    ("odds", "0008_domain_apps"),
]


@pytest.mark.parametrize(("label", "names"), HOMES.items())
def test_each_model_lives_in_its_domain_app_and_keeps_its_table(label: str, names: list[str]) -> None:
    config = apps.get_app_config(label)
    assert sorted(model.__name__ for model in config.get_models()) == sorted(names + BORN_THERE.get(label, []))
    for name in names:
        assert config.get_model(name)._meta.db_table == f"odds_{name.lower()}"


@pytest.mark.parametrize(("label", "migration"), MOVES)
def test_moving_the_models_runs_no_sql(label: str, migration: str) -> None:
    out = io.StringIO()
    call_command("sqlmigrate", label, migration, stdout=out)
    statements = [line for line in out.getvalue().splitlines() if line.strip() and not line.startswith("--")]
    assert set(statements) <= {"BEGIN;", "COMMIT;"}, statements


def test_every_model_change_has_its_migration() -> None:
    call_command("makemigrations", "--check", "--dry-run", verbosity=0)


def test_content_types_follow_the_moved_models() -> None:
    """A database migrated before the move keeps its content types (so the admin's history and
    the permissions granted on them) under the new labels."""
    move = importlib.import_module("odds.migrations.0008_domain_apps")
    ContentType.objects.filter(app_label="catalogue", model="market").delete()
    ContentType.objects.create(app_label="odds", model="market")
    kept = ContentType.objects.get(app_label="betting", model="bet")

    move.content_types_follow(apps, None)

    assert ContentType.objects.filter(app_label="catalogue", model="market").count() == 1
    assert not ContentType.objects.filter(app_label="odds", model="market").exists()
    assert ContentType.objects.get(app_label="betting", model="bet").pk == kept.pk

    move.content_types_return(apps, None)
    assert ContentType.objects.filter(app_label="odds", model="market").count() == 1
