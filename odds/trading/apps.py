from django.apps import AppConfig


class TradingConfig(AppConfig):
    name = "odds.trading"
    default_auto_field = "django.db.models.BigAutoField"
