"""Staff endpoints of the trader and operator pages (``/trading/api``, ``/ops/api``). Thin: call
one service or selector, answer JSON. Anonymous callers get 401, logged-in non-staff 403, on
every endpoint."""

from __future__ import annotations

from typing import Annotated, Any

from django.http import HttpRequest
from ninja import Router, Status
from pydantic import Field

from odds.api.http import Session, answers
from odds.api.schemas import common
from odds.api.schemas import ops as s
from odds.api.schemas.common import ApiError
from odds.catalogue.models import Market
from odds.core.metrics import browser_latency_record, latency_watch_markets, metrics_snapshot
from odds.core.staff import END_CHANNELS
from odds.ops.selectors.incidents import alerts_now
from odds.ops.selectors.ops import channels_active, liability_top, market_settlement_progress, metrics_history
from odds.streaming.services.streams import StreamError
from odds.trading.services.operations import channel_end

trading = Router(auth=Session(staff=True), tags=["trading"])
ops = Router(auth=Session(staff=True), tags=["ops"])


@ops.get(
    "snapshot",
    summary="Every figure of the lag dashboard at one moment",
    url_name="ops-api-snapshot",
    **answers({200: (s.OpsSnapshot, "The snapshot.")}, access="staff"),
)
def ops_snapshot(request: HttpRequest) -> dict[str, Any]:
    return {**metrics_snapshot(), "latency_markets": latency_watch_markets(), "alerts": alerts_now()}


@ops.get(
    "history",
    summary="Sampled figures over a range, as column arrays",
    url_name="ops-api-history",
    **answers(
        {200: (s.OpsHistory, "The history.")},
        {400: (s.RangeRefused, "`range` is not one of the ranges.")},
        access="staff",
    ),
)
def ops_history(
    request: HttpRequest, range: Annotated[s.RangeName, Field(description="how far back")] = "15m"
) -> dict[str, Any]:
    return metrics_history(range_name=range)


@ops.post(
    "latency",
    summary="Latency samples an operator's browser measured (ms)",
    url_name="ops-api-latency",
    **answers(
        {202: (s.LatencyKept, "Kept.")},
        {400: (common.BodyRefused, "The body is not JSON or a sample is invalid.")},
        access="staff_write",
        body=True,
        examples={"samples": {"samples": [{"e2e": 120, "ws": 8}, {"e2e": 95.5}]}},
    ),
)
def ops_latency(request: HttpRequest, body: s.LatencySamples) -> Status[s.LatencyKept]:
    clean = [sample.model_dump(include=sample.model_fields_set) for sample in body.samples]
    return Status(202, s.LatencyKept(kept=browser_latency_record(samples=clean)))


@trading.get(
    "liability",
    summary="Selections by open liability, largest first",
    url_name="trading-api-liability",
    **answers({200: (s.LiabilityOut, "Up to 100 selections.")}, access="staff"),
)
def trading_liability(request: HttpRequest) -> s.LiabilityOut:
    return s.LiabilityOut.model_validate({"selections": liability_top(limit=100)})


@trading.get(
    "channels",
    summary="Live subscriber channels with the reducer partitions of their markets",
    url_name="trading-api-channels",
    **answers({200: (s.ChannelsOut, "The channels, most recently active first.")}, access="staff"),
)
def trading_channels(request: HttpRequest) -> s.ChannelsOut:
    return s.ChannelsOut.model_validate({"channels": channels_active()})


@trading.post(
    "channels/{channel_id}/end",
    summary="End any live channel, whoever owns it",
    url_name="trading-api-channel-end",
    **answers(
        {202: (s.ChannelEnded, "Ended.")},
        {
            404: (s.ChannelEndNotFound, "No such live channel."),
            503: (
                common.CommandUnavailable,
                "The database cannot be reached, or Kafka did not acknowledge the command (`command_not_sent`), or"
                " Redis refused the write (`state_unavailable`); try again.",
                ("Retry-After",),
            ),
        },
        access="staff_write",
    ),
)
def trading_channel_end(request: HttpRequest, channel_id: common.ChannelId) -> Status[s.ChannelEnded]:
    if not request.user.has_perm(END_CHANNELS):
        raise ApiError(403, "staff_only", f"ending a channel needs the permission {END_CHANNELS}")
    try:
        ended = channel_end(channel_id=channel_id, by=request.user)
    except StreamError as exc:
        raise ApiError(exc.status, exc.code, exc.message) from exc
    if not ended:
        raise ApiError(404, "no_such_channel", "no such live channel")
    return Status(202, s.ChannelEnded(channel=channel_id, ended=True))


@trading.get(
    "markets/{int:market_id}/settlement",
    summary="Settlement progress of a market",
    url_name="trading-api-settlement",
    **answers(
        {200: (s.SettlementOut, "How many of the market's bets are settled.")},
        {404: (common.NotFound, "No such market.")},
        access="staff",
    ),
)
def trading_settlement(request: HttpRequest, market_id: int) -> s.SettlementOut:
    try:
        progress = market_settlement_progress(market_id=market_id)
    except Market.DoesNotExist as exc:
        raise ApiError(404, "not_found", "no such market") from exc
    return s.SettlementOut.model_validate(progress)
