from typing import Any

from django.apps import AppConfig
from django.contrib.auth import get_user_model
from django.contrib.auth.signals import user_logged_out
from django.db.models.signals import post_save, pre_save
from django.http import HttpRequest


def _logged_out(*, request: HttpRequest | None = None, user: Any = None, **kwargs: Any) -> None:
    """A logout ends that browser session's channels and closes its sockets."""
    if user is None or user.pk is None:
        return
    from odds.streaming.services.sessions import punter_sessions_end

    session_key = request.session.session_key if request is not None else None
    punter_sessions_end(user_id=user.pk, reason="logged_out", session_key=session_key)


def _user_before_save(*, instance: Any, update_fields: Any = None, **kwargs: Any) -> None:
    """Remember what the stored user's password and active flag were, for ``_user_saved`` (not
    for a save of other fields only, such as a login's ``last_login``)."""
    if instance.pk is None or (update_fields is not None and not {"password", "is_active"} & set(update_fields)):
        instance._sessions_before = None
        return
    model = type(instance)
    instance._sessions_before = (
        model._default_manager.filter(pk=instance.pk).values_list("password", "is_active").first()
    )


def _user_saved(*, instance: Any, created: bool, **kwargs: Any) -> None:
    """A password changed or an account deactivated ends every session of the user: their
    channels end and their sockets close (whichever form, command or service saved it)."""
    before = getattr(instance, "_sessions_before", None)
    if created or before is None:
        return
    from odds.streaming.services.sessions import punter_sessions_end

    password, active = before
    if active and not instance.is_active:
        punter_sessions_end(user_id=instance.pk, reason="deactivated")
    elif password != instance.password:
        punter_sessions_end(user_id=instance.pk, reason="password_changed")


class StreamingConfig(AppConfig):
    name = "odds.streaming"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        user = get_user_model()
        user_logged_out.connect(_logged_out, dispatch_uid="streaming.logged_out")
        pre_save.connect(_user_before_save, sender=user, dispatch_uid="streaming.user_before_save")
        post_save.connect(_user_saved, sender=user, dispatch_uid="streaming.user_saved")
