from django.apps import AppConfig


class FeedConfig(AppConfig):
    name = "odds.feed"
    default_auto_field = "django.db.models.BigAutoField"
