from django.apps import AppConfig


class StreamingConfig(AppConfig):
    name = "odds.streaming"
    default_auto_field = "django.db.models.BigAutoField"
