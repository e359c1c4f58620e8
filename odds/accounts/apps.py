from django.apps import AppConfig


class AccountsConfig(AppConfig):
    """Punters' accounts: sign-up (allauth), the profile it records, the staff's second factor."""

    name = "odds.accounts"
    label = "accounts"
    verbose_name = "Accounts"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from allauth.account.signals import email_confirmed

        from odds.accounts import receivers

        email_confirmed.connect(receivers.email_confirmed, dispatch_uid="accounts.email_confirmed")
