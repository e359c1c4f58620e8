from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _leg_verdicts_sync(*, using: str = "default", **kwargs: object) -> None:
    from django.db import connections

    from odds.betting.models import LegVerdict
    from odds.betting.services.verdicts import leg_verdicts_sync

    # Not after a migration back to before the table existed.
    if LegVerdict._meta.db_table in connections[using].introspection.table_names():
        leg_verdicts_sync(using=using)


class BettingConfig(AppConfig):
    name = "odds.betting"
    verbose_name = "Bets and wallets"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # After every migrate, the placement statement's copy of the leg verdict is the rule's own.
        post_migrate.connect(_leg_verdicts_sync, sender=self, dispatch_uid="betting.leg_verdicts_sync")
