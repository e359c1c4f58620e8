"""allauth's signals, each handed to one service."""

from __future__ import annotations

from typing import Any

from allauth.account.models import EmailAddress

from odds.accounts.services import punter_email_verified


def email_confirmed(*, email_address: EmailAddress, **kwargs: Any) -> None:
    """A verification link was followed: the account may bet."""
    punter_email_verified(user=email_address.user)
