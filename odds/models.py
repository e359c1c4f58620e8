"""Transactional outbox: Kafka records written in the same database transaction as the change
they announce, and produced afterwards by the relay (``odds.core.outbox``).

A crash between the commit and the produce leaves the row pending, so the relay sends it on its
next run; nothing committed is lost. A crash after the produce but before the row is marked sent
makes the relay send it again, so consumers must de-duplicate (bet events carry ``event_id``,
market definitions a ``version``).
"""

from __future__ import annotations

from django.db import models


class OutboxMessage(models.Model):
    topic = models.CharField(max_length=255)
    key = models.BinaryField()
    value = models.BinaryField(null=True, blank=True, help_text="Empty for a tombstone on a compacted topic.")
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.CharField(max_length=255, blank=True)

    class Meta:
        ordering = ["id"]
        indexes = [
            models.Index(fields=["id"], condition=models.Q(sent_at__isnull=True), name="outbox_pending"),
        ]

    def __str__(self) -> str:
        state = "sent" if self.sent_at else "pending"
        return f"#{self.pk} {self.topic} key={bytes(self.key).decode(errors='replace')} ({state})"
