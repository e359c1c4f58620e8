from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _exchange_rates_default(*, using: str = "default", **kwargs: object) -> None:
    from django.db import connections

    from odds.trading.models import ExchangeRate
    from odds.trading.services.rates import exchange_rates_default

    # Not after a migration back to before the table existed.
    if ExchangeRate._meta.db_table in connections[using].introspection.table_names():
        exchange_rates_default(using=using)


class TradingConfig(AppConfig):
    name = "odds.trading"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # After every migrate (and every flush of a test database), each currency has a rate.
        post_migrate.connect(_exchange_rates_default, sender=self, dispatch_uid="trading.exchange_rates_default")
