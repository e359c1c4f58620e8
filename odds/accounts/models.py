"""What a punter tells the book at sign-up beyond their login: date of birth and country. The
currency is the wallet's (``odds.betting.Wallet.currency``)."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from odds.accounts.rules import COUNTRIES


class PunterProfile(models.Model):
    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="punter_profile")
    date_of_birth = models.DateField()
    country = models.CharField(max_length=2, choices=COUNTRIES)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "accounts_punterprofile"

    def __str__(self) -> str:
        return f"{self.user} ({self.country})"
