"""Operations history: samples of the platform's figures, taken by Celery beat."""

from __future__ import annotations

from django.db import models


class MetricSample(models.Model):
    """The dashboard's figures at one moment, flattened to named numbers
    (``odds.core.metrics.snapshot_series``). One row per sampling slot: a task that runs
    twice for the same slot writes one row."""

    slot = models.BigIntegerField(unique=True, help_text="Epoch seconds divided by the sampling interval.")
    ts = models.DateTimeField(db_index=True)
    values = models.JSONField(default=dict)

    class Meta:
        db_table = "odds_metricsample"
        ordering = ["ts"]

    def __str__(self) -> str:
        return f"sample {self.ts:%Y-%m-%d %H:%M:%S}"


class Incident(models.Model):
    """One firing of one alert, as Alertmanager's webhook reports it: opened when the alert
    fires, resolved when Alertmanager reports it resolved or an operator resolves it. An alert
    is one firing from its ``startsAt`` on; repeated notifications of it update this row."""

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        ACKNOWLEDGED = "acknowledged", "Acknowledged"
        RESOLVED = "resolved", "Resolved"

    UNRESOLVED = (Status.OPEN, Status.ACKNOWLEDGED)

    fingerprint = models.CharField(max_length=64, help_text="Alertmanager's fingerprint of the alert's labels.")
    alertname = models.CharField(max_length=200)
    severity = models.CharField(max_length=20, blank=True)
    summary = models.TextField(blank=True)
    labels = models.JSONField(default=dict)
    annotations = models.JSONField(default=dict)
    starts_at = models.DateTimeField(help_text="When the alert started firing (Alertmanager's startsAt).")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.OPEN, db_index=True)
    notified_at = models.DateTimeField(help_text="Alertmanager's latest notification of this firing.")
    notifications = models.PositiveIntegerField(default=1)
    acknowledged_by = models.ForeignKey("auth.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    acknowledged_at = models.DateTimeField(null=True, blank=True)
    # Resolved by an operator (resolved_by set, with a note) or by Alertmanager (ends_at set).
    resolved_by = models.ForeignKey("auth.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolved_note = models.TextField(blank=True)
    ends_at = models.DateTimeField(null=True, blank=True, help_text="When Alertmanager reported it resolved.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "odds_incident"
        ordering = ["-starts_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["fingerprint", "starts_at"], name="incident_one_per_firing"),
        ]

    def __str__(self) -> str:
        return f"{self.alertname} since {self.starts_at:%Y-%m-%d %H:%M:%S} ({self.status})"


class DeadLetterAction(models.Model):
    """An operator's replay or discard of a selection of dead letters: who, when, how many, and
    the selection (source topic, reason, time span) as it was chosen."""

    class Kind(models.TextChoices):
        REPLAY = "replay", "Replayed"
        DISCARD = "discard", "Discarded"

    kind = models.CharField(max_length=10, choices=Kind.choices)
    source = models.CharField(max_length=40, help_text="The source topic's name (reducers.dead_letters.SOURCES).")
    reason = models.CharField(max_length=200, blank=True, help_text="The reason selected; blank for every reason.")
    since = models.DateTimeField(null=True, blank=True)
    until = models.DateTimeField(null=True, blank=True)
    note = models.TextField(help_text="Why: the fix made before a replay, or the reason for a discard.")
    by = models.ForeignKey("auth.User", on_delete=models.PROTECT, related_name="+")
    at = models.DateTimeField(auto_now_add=True)
    selected = models.PositiveIntegerField(default=0, help_text="Dead letters in the selection.")
    handled = models.PositiveIntegerField(default=0, help_text="Replayed (sent back) or discarded.")
    refused = models.PositiveIntegerField(default=0, help_text="Left alone: replayed too often already.")
    error = models.TextField(blank=True)

    class Meta:
        db_table = "odds_deadletteraction"
        ordering = ["-at", "-id"]

    def __str__(self) -> str:
        return f"{self.kind} of {self.handled} {self.source} dead letters by {self.by_id} at {self.at:%Y-%m-%d %H:%M}"


class DeadLetterHandled(models.Model):
    """One dead letter an action replayed or discarded, by its place in its dead-letter topic:
    each is handled once, so a selection made again leaves it out and two operators never
    replay it twice."""

    action = models.ForeignKey(DeadLetterAction, on_delete=models.CASCADE, related_name="records")
    topic = models.CharField(max_length=255)
    partition = models.PositiveIntegerField()
    offset = models.BigIntegerField()
    # Where the replay put it in the source topic ("topic/partition/offset"); blank for a discard.
    sent_to = models.CharField(max_length=300, blank=True)

    class Meta:
        db_table = "odds_deadletterhandled"
        constraints = [
            models.UniqueConstraint(fields=["topic", "partition", "offset"], name="dead_letter_handled_once"),
        ]

    def __str__(self) -> str:
        return f"{self.topic}/{self.partition}/{self.offset}"


class Operations(models.Model):
    """No table: the permissions of the operators' actions that change no model of their own."""

    class Meta:
        managed = False
        default_permissions = ()
        permissions = [("end_channel", "Can end a punter's subscriber channel")]

    def __str__(self) -> str:
        return "operations"
