"""The audit log: one append-only row per staff action (who, when, what kind, on what, before,
after, why), written in the transaction of the action itself.

PostgreSQL refuses an UPDATE or DELETE of the table (a trigger, ``sql/sb_audit_append_only.v1.sql``):
no code path, admin page or hand-typed statement can rewrite history. The row names its actor and
object by value, not by foreign key, so deleting a user or a market never needs to touch it.
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class AuditEntry(models.Model):
    class Kind(models.TextChoices):
        PRICE_SET = "price_set", "Price set"
        MARGIN_SET = "margin_set", "Margin set"
        MARKET_SUSPEND = "market_suspend", "Market suspended"
        MARKET_RESUME = "market_resume", "Market resumed"
        EVENT_SUSPEND = "event_suspend", "Event suspended"
        EVENT_RESUME = "event_resume", "Event resumed"
        COMPETITION_SUSPEND = "competition_suspend", "Competition suspended"
        COMPETITION_RESUME = "competition_resume", "Competition resumed"
        MARKET_RESULT = "market_result", "Market resulted"
        SETTLEMENT_REQUEST = "settlement_request", "Settlement run again"
        MARKET_RESETTLE = "market_resettle", "Market resettled"
        BET_VOID = "bet_void", "Bet voided"
        RATE_SET = "rate_set", "Exchange rate set"
        CUSTOMER_LIMIT_SET = "customer_limit_set", "Customer limit set"
        REFERRAL_ACCEPT = "referral_accept", "Referred bet accepted"
        REFERRAL_DECLINE = "referral_decline", "Referred bet declined"
        REFERRAL_OFFER = "referral_offer", "Referred bet offered back"
        ADMIN_ADD = "admin_add", "Added in the admin"
        ADMIN_CHANGE = "admin_change", "Changed in the admin"
        ADMIN_DELETE = "admin_delete", "Deleted in the admin"

    at = models.DateTimeField(default=timezone.now, db_index=True)
    actor = models.CharField(max_length=150, db_index=True, help_text="The staff member's username.")
    actor_id = models.BigIntegerField(null=True, blank=True)
    kind = models.CharField(max_length=32, choices=Kind.choices, db_index=True)
    object_type = models.CharField(max_length=32, help_text="market, selection, event, competition, bet, …")
    object_id = models.CharField(max_length=64)
    object_label = models.CharField(max_length=255, blank=True)
    before = models.JSONField(default=dict, blank=True)
    after = models.JSONField(default=dict, blank=True)
    reason = models.TextField(blank=True)

    class Meta:
        ordering = ["-at", "-id"]
        verbose_name = "audit entry"
        verbose_name_plural = "audit log"
        indexes = [models.Index(fields=["object_type", "object_id"], name="audit_object")]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.actor} {self.kind} {self.object_type} {self.object_id}"
