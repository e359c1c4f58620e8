from django.apps import AppConfig


class OddsConfig(AppConfig):
    name = "odds"
    default_auto_field = "django.db.models.BigAutoField"
