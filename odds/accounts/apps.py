from django.apps import AppConfig


class AccountsConfig(AppConfig):
    """Punters' accounts: sign-up (allauth), the profile it records, the staff's second factor."""

    name = "odds.accounts"
    label = "accounts"
    verbose_name = "Accounts"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from allauth.account.signals import email_confirmed
        from django.contrib.auth.signals import user_logged_in, user_logged_out

        from odds.accounts import play, receivers

        email_confirmed.connect(receivers.email_confirmed, dispatch_uid="accounts.email_confirmed")
        user_logged_in.connect(play.logged_in, dispatch_uid="accounts.play_session_start")
        user_logged_out.connect(play.logged_out, dispatch_uid="accounts.play_session_end")
