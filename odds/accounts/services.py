"""Account writes: what a sign-up records beyond allauth's user and email address."""

from __future__ import annotations

from datetime import date

from django.contrib.auth.models import User
from django.db import transaction

from odds.accounts.models import PunterProfile
from odds.betting.services.wallet import wallet_email_verified, wallet_open


def punter_signup_complete(*, user: User, date_of_birth: date, country: str, currency: str) -> PunterProfile:
    """A new punter's profile and their wallet in ``currency``, which places no bet until the
    email is verified (``punter_email_verified``)."""
    with transaction.atomic():
        profile = PunterProfile.objects.create(user=user, date_of_birth=date_of_birth, country=country)
        wallet_open(user=user, currency=currency)
    return profile


def punter_email_verified(*, user: User) -> None:
    """The punter followed their verification link: they may bet."""
    wallet_email_verified(user=user)
