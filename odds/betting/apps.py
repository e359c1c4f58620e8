from django.apps import AppConfig


class BettingConfig(AppConfig):
    name = "odds.betting"
    verbose_name = "Bets and wallets"
    default_auto_field = "django.db.models.BigAutoField"
