from django.apps import AppConfig


class CatalogueConfig(AppConfig):
    name = "odds.catalogue"
    default_auto_field = "django.db.models.BigAutoField"
