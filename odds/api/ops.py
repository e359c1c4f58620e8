"""Staff JSON API of the trader and operator pages. Thin: parse, call one service or selector,
answer JSON. Anonymous callers get 401, logged-in non-staff 403, on every endpoint."""

from __future__ import annotations

import functools
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from django.http import HttpRequest, HttpResponse

from odds.api.http import api_view, error_response, json_body, json_response
from odds.api.schemas import ApiError
from odds.models import Market
from odds.selectors.ops import channels_active, liability_top, market_settlement_progress, metrics_history
from odds.services.metrics import browser_latency_record, latency_watch_markets, metrics_snapshot
from odds.services.ops import channel_end
from odds.services.streams import StreamError

View = Callable[..., HttpResponse]
BROWSER_SAMPLES_PER_POST = 500


def staff_api(*, methods: tuple[str, ...]) -> Callable[[View], View]:
    """``api_view`` (methods, 401 when anonymous, CSRF on writes, JSON errors) for staff only."""

    def decorate(view: View) -> View:
        @functools.wraps(view)
        def staff_only(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if not request.user.is_staff:
                return error_response(ApiError(403, "staff_only", "this API is for staff"))
            return view(request, *args, **kwargs)

        return api_view(methods=methods)(staff_only)

    return decorate


@staff_api(methods=("GET",))
def ops_snapshot(request: HttpRequest) -> HttpResponse:
    return json_response({**metrics_snapshot(), "latency_markets": latency_watch_markets()})


@staff_api(methods=("GET",))
def ops_history(request: HttpRequest) -> HttpResponse:
    try:
        history = metrics_history(range_name=request.GET.get("range", "15m"))
    except ValueError as exc:
        raise ApiError(400, "invalid", str(exc), field="range") from exc
    return json_response(history)


@staff_api(methods=("POST",))
def ops_latency(request: HttpRequest) -> HttpResponse:
    """Latency samples measured by an operator's browser: ``{"samples": [{"e2e": ms, "ws": ms}]}``."""
    body = json_body(request)
    samples = body.get("samples") if isinstance(body, dict) else None
    if not isinstance(samples, list) or len(samples) > BROWSER_SAMPLES_PER_POST:
        raise ApiError(400, "invalid", f"samples must be a list of at most {BROWSER_SAMPLES_PER_POST}", field="samples")
    clean = []
    for i, sample in enumerate(samples):
        if not isinstance(sample, dict) or not _is_ms(sample.get("e2e")) or not _is_ms(sample.get("ws", 0)):
            raise ApiError(400, "invalid", "e2e and ws are milliseconds between 0 and 600000", field=f"samples[{i}]")
        clean.append({k: float(sample[k]) for k in ("e2e", "ws") if k in sample})
    return json_response({"v": 1, "kept": browser_latency_record(samples=clean)}, status=202)


def _is_ms(value: object) -> bool:
    # The JSON edge reads 12.5 as Decimal (never float), so a fractional sample is a Decimal here.
    return isinstance(value, int | float | Decimal) and not isinstance(value, bool) and 0 <= float(value) <= 600_000


@staff_api(methods=("GET",))
def trading_liability(request: HttpRequest) -> HttpResponse:
    return json_response({"v": 1, "selections": liability_top(limit=100)})


@staff_api(methods=("GET",))
def trading_channels(request: HttpRequest) -> HttpResponse:
    return json_response({"v": 1, "channels": channels_active()})


@staff_api(methods=("POST",))
def trading_channel_end(request: HttpRequest, channel_id: str) -> HttpResponse:
    try:
        ended = channel_end(channel_id=channel_id, by=request.user)
    except StreamError as exc:
        raise ApiError(exc.status, exc.code, exc.message) from exc
    if not ended:
        raise ApiError(404, "no_such_channel", "no such live channel")
    return json_response({"v": 1, "channel": channel_id, "ended": True}, status=202)


@staff_api(methods=("GET",))
def trading_settlement(request: HttpRequest, market_id: int) -> HttpResponse:
    try:
        progress = market_settlement_progress(market_id=market_id)
    except Market.DoesNotExist as exc:
        raise ApiError(404, "not_found", "no such market") from exc
    return json_response({"v": 1, **progress})
