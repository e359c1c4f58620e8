"""Play sessions: a punter's session time limit and reality checks, per login.

``PlayPreferences`` holds what the punter chose; every login starts a ``PlaySession`` that copies
it. Placement reads the punter's latest open session (``odds.betting.services.placement``) and the
rules are ``odds.betting.play``.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class PlayPreferences(models.Model):
    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="play_preferences")
    session_limit_s = models.PositiveIntegerField(null=True, blank=True, help_text="None: no session time limit.")
    reality_check_s = models.PositiveIntegerField(null=True, blank=True, help_text="None: no reality checks.")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "odds_playpreferences"
        verbose_name_plural = "play preferences"

    def __str__(self) -> str:
        return f"{self.user} limit {self.session_limit_s} s, checks every {self.reality_check_s} s"


class PlaySession(models.Model):
    class End(models.TextChoices):
        LOGOUT = "logout", "Logged out"
        TIME_LIMIT = "time_limit", "Time limit reached"

    # Found by user through ``play_session_latest`` (user first).
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="play_sessions", db_index=False
    )
    started_at = models.DateTimeField()
    time_limit_s = models.PositiveIntegerField(null=True, blank=True)
    reality_check_s = models.PositiveIntegerField(null=True, blank=True)
    acknowledged_at = models.DateTimeField(null=True, blank=True, help_text="The last reality check acknowledged.")
    ended_at = models.DateTimeField(null=True, blank=True)
    end_reason = models.CharField(max_length=16, choices=End.choices, blank=True)

    class Meta:
        db_table = "odds_playsession"
        ordering = ["-id"]
        indexes = [models.Index(fields=["user", "-id"], name="play_session_latest")]

    def __str__(self) -> str:
        return f"{self.user} from {self.started_at:%Y-%m-%d %H:%M}"
