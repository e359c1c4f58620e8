"""The view snapshots router's bodies (``odds/api/snapshots.py``): a public, cacheable view."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field

from odds.api.schemas.common import DecimalText, Model, Sparse


class SelectionView(Model):
    id: int
    name: str
    price: DecimalText
    status: str


class MarketView(Sparse):
    market_id: int
    name: str | None = None
    kind: str | None = None
    seq: Annotated[int, Field(ge=0, description="The stream's sequence; 0: not priced yet.")]
    status: str
    tradable: bool
    selections: list[SelectionView]


class CompetitionView(Model):
    id: int
    name: str


class EventView(Sparse):
    id: int
    home: str | None = None
    away: str | None = None
    starts_at: datetime | None = None
    status: str | None = None
    sport: str | None = None
    competition: CompetitionView | None = None
    markets: list[MarketView]


class ViewSnapshot(Model):
    """The same for every punter (no cookie read or set), cacheable. Each market's `seq` and
    `status` go in a `watch`'s `since` (docs/protocol.md), so the stream then brings only what moved."""

    type: Literal["view.snapshot"]
    v: Literal[1]
    view: str
    at: Annotated[int, Field(description="When it was taken (epoch ms).")]
    events: list[EventView]
