"""The staff routers' bodies (``odds/api/ops.py``): trading's liability, channels and settlement;
operations' snapshot, history and the browsers' latency samples."""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, PlainValidator, WithJsonSchema

from odds.api.schemas.common import Answer, Count, DecimalText, Id, Model, Sparse, Timestamp, invalid, refusal, values
from odds.catalogue.models import Market
from odds.ops.selectors.ops import RANGES

MAX_SAMPLE_MS = 600_000
BROWSER_SAMPLES_PER_POST = 500

# Literal types made at run time are strings to the type checker.
if TYPE_CHECKING:
    RangeName: TypeAlias = str
    MarketStatus: TypeAlias = str
else:
    RangeName = Literal[tuple(RANGES)]
    MarketStatus = Literal[values(Market.Status.values)]


class LiabilityRow(Model):
    selection_id: Id
    selection: str
    market_id: Id | None
    market: str
    event: str
    price: Annotated[str, Field(description="the selection's decimal price (empty when it is gone)")]
    liability: DecimalText
    liability_pence: int
    currency: Annotated[str, Field(description="the book's currency, every wallet's liability converted into it")]
    bets: Count


class LiabilityOut(Answer):
    selections: Annotated[list[LiabilityRow], Field(max_length=100)]


class ChannelRow(Model):
    channel: str
    user_id: int
    user: Annotated[str, Field(description="the username (#id when the user is gone)")]
    view: str
    query: dict[str, Any] | None
    markets: list[int]
    status: str
    seq: int
    created: Timestamp
    seen: Timestamp
    partitions: dict[str, int]


class ChannelsOut(Answer):
    channels: list[ChannelRow]


class ChannelEnded(Answer):
    channel: str
    ended: Literal[True]


class SettlementOut(Answer):
    market_id: Id
    market_status: MarketStatus
    total: Count
    settled: Count
    done: bool


class KafkaHealth(Sparse):
    brokers: Count
    replication_factor: Annotated[int, Field(ge=1)] | None = None
    partitions: Count | None = None
    under_replicated: Count
    offline: Count
    leaders: dict[str, int] | None = None


class AlertNow(Model):
    """One alert Prometheus holds: ``firing``, or ``pending`` (over its threshold, not yet for
    its rule's whole ``for``)."""

    name: str
    state: str
    severity: str
    summary: str
    labels: dict[str, str]
    active_at: str | None = None


class AlertsNow(Model):
    available: bool
    error: str | None = None
    alerts: list[AlertNow]


class OpsSnapshot(Answer, Sparse):
    ts: Timestamp
    queries: dict[str, Any]
    latency: dict[str, Any]
    websockets: dict[str, int]
    dead_letters: dict[str, int] | None = None
    late_records: dict[str, int] | None = None
    redis_memory_bytes: Count | None = None
    celery_queue_depth: Count | None = None
    kafka: KafkaHealth | None = None
    latency_markets: list[Id]
    alerts: AlertsNow | None = None


class OpsHistory(Answer):
    range: RangeName
    stride_s: Annotated[int, Field(ge=1)]
    ts: list[Timestamp]
    series: dict[str, list[int | float | None]]


def _millis(raw: Any) -> float:
    # The JSON edge reads 12.5 as Decimal (never float), so a fractional sample is a Decimal here.
    if isinstance(raw, bool) or not isinstance(raw, int | Decimal) or not 0 <= raw <= MAX_SAMPLE_MS:
        raise invalid(f"e2e and ws are milliseconds between 0 and {MAX_SAMPLE_MS}")
    return float(raw)


Millis = Annotated[
    float, PlainValidator(_millis), WithJsonSchema({"type": "number", "minimum": 0, "maximum": MAX_SAMPLE_MS})
]


class Sample(BaseModel):
    e2e: Millis
    ws: Millis = 0.0


class LatencySamples(BaseModel):
    """Latency samples measured by an operator's browser (ms)."""

    model_config = ConfigDict(hide_input_in_errors=True)

    samples: Annotated[list[Sample], Field(max_length=BROWSER_SAMPLES_PER_POST)]


class LatencyKept(Answer):
    kept: Count


RangeRefused = refusal("RangeRefused", "invalid")
ChannelEndNotFound = refusal("ChannelEndNotFound", "no_such_channel", "not_found")
