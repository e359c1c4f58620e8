"""Messages the operations app receives from outside: Alertmanager's webhook notification
(version 4, the only one Alertmanager sends)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class AlertmanagerAlert(BaseModel):
    """One alert of a notification. ``endsAt`` is Alertmanager's zero time while it fires."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    status: Literal["firing", "resolved"]
    labels: dict[str, str]
    annotations: dict[str, str] = Field(default_factory=dict)
    starts_at: datetime = Field(alias="startsAt")
    ends_at: datetime | None = Field(default=None, alias="endsAt")
    fingerprint: str = Field(min_length=1, max_length=64)

    @property
    def name(self) -> str:
        return self.labels.get("alertname", "")


class AlertmanagerNotification(BaseModel):
    """A webhook notification: a group of alerts (``max_alerts: 0`` sends every one)."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    version: Literal["4"]
    status: Literal["firing", "resolved"]
    receiver: str
    alerts: list[AlertmanagerAlert]
    truncated_alerts: int = Field(default=0, alias="truncatedAlerts")
