from django.apps import AppConfig


class OddsConfig(AppConfig):
    name = "odds"
    verbose_name = "Platform"
    default_auto_field = "django.db.models.BigAutoField"
