from typing import Any

from django.apps import AppConfig
from django.contrib.auth.signals import user_logged_in
from django.db.models.signals import post_migrate
from django.http import HttpRequest


def _login_succeeded(*, request: HttpRequest | None = None, **kwargs: Any) -> None:
    """Any login form's success clears its username's throttle count (``odds.core.auth``)."""
    if request is None or request.method != "POST":
        return
    from odds.core.auth import login_success
    from odds.core.clients import client_ip

    login_success(username=str(request.POST.get("username", "")), ip=client_ip(request))


def _roles_sync(*, sender: Any = None, **kwargs: Any) -> None:
    """Once per migrate (or flush): at the last app's signal, when every app's permissions exist."""
    from django.apps import apps

    # Django signals only the apps with models, in their order.
    if sender is not [config for config in apps.get_app_configs() if config.models_module is not None][-1]:
        return
    from odds.core.roles import roles_sync

    roles_sync()


class OddsConfig(AppConfig):
    name = "odds"
    verbose_name = "Platform"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        user_logged_in.connect(_login_succeeded, dispatch_uid="odds.login_succeeded")
        # After every app's migrations (and their permissions): the staff roles' groups.
        post_migrate.connect(_roles_sync, dispatch_uid="odds.roles_sync")
