from django.apps import AppConfig


class GameConfig(AppConfig):
    name = "odds.game"
    default_auto_field = "django.db.models.BigAutoField"
