"""Stream control API: subscribe, begin, change and end a subscriber channel (docs/protocol.md)."""

from __future__ import annotations

import logging
import math
from typing import Any

from django.http import HttpRequest, HttpResponse
from redis.exceptions import RedisError

from odds.api.http import api_view, error_response, json_body, json_response
from odds.api.schemas import ApiError
from odds.services.placement import MAX_LEGS, MAX_RETURN, MAX_STAKE
from odds.services.streams import StreamError, stream_begin, stream_change, stream_subscribe, stream_unsubscribe
from reducers.schemas import InvalidRecord
from reducers.subscriptions import SubscriptionSpec, since_from_json, spec_from_json

log = logging.getLogger(__name__)


def _spec(request: HttpRequest) -> SubscriptionSpec:
    body = json_body(request)
    _spec_lists(body)
    try:
        spec = spec_from_json(body)
    except InvalidRecord as exc:
        raise ApiError(400, "invalid", exc.detail or exc.reason, field=exc.field) from exc
    _spec_bounded(spec)
    return spec


def _spec_lists(raw: Any) -> None:
    """The lists of a spec are lists: the spec reader takes any empty value (``{}``, ``0``, ``""``)
    for an empty list and skips a claimed bet's legs that are not objects, which the API's
    description does not allow."""
    if not isinstance(raw, dict):
        return
    for name in ("slip", "bets"):
        if raw.get(name) is not None and not isinstance(raw[name], list):
            raise ApiError(400, "invalid", f"{name} must be a list", field=name)
    for index, bet in enumerate(raw.get("bets") or ()):
        legs = bet.get("legs") if isinstance(bet, dict) else None
        if isinstance(legs, list) and not all(isinstance(leg, dict) for leg in legs):
            raise ApiError(400, "invalid", "each leg is an object", field=f"bets[{index}].legs")


def _spec_bounded(spec: SubscriptionSpec) -> None:
    """Slips and bets no bet placement would take are refused here: the reducers compute their
    odds and cash-out values to the penny, and an accumulator of dozens of long prices, or a
    claimed bet of 1E+30, has more digits than a decimal context holds (the reducer would fail)."""
    if len(spec.slip) > MAX_LEGS:
        raise ApiError(400, "invalid", f"a slip has at most {MAX_LEGS} legs", field="slip")
    for index, bet in enumerate(spec.bets):
        legs = len(bet.legs)
        if not 1 <= legs <= MAX_LEGS or bet.stake > MAX_STAKE:
            message = f"a bet has 1 to {MAX_LEGS} legs and a stake of at most {MAX_STAKE}"
            raise ApiError(400, "invalid", message, field=f"bets[{index}]")
        # Not betting.potential_return: rounding that to the penny is what fails on huge values.
        if bet.stake * math.prod(price for _, _, price in bet.legs) > MAX_RETURN:
            message = f"a bet's potential return is at most {MAX_RETURN}"
            raise ApiError(400, "invalid", message, field=f"bets[{index}]")


def _refusal(exc: StreamError) -> HttpResponse:
    """A refused control request in the documented error shape; rate limits say when to retry."""
    if exc.retry_after_s is None:
        return error_response(ApiError(exc.status, exc.code, exc.message))
    response = error_response(ApiError(exc.status, exc.code, exc.message, extra={"retry_after_s": exc.retry_after_s}))
    response["Retry-After"] = str(exc.retry_after_s)
    return response


def _state_unavailable() -> HttpResponse:
    """Redis refused the write (at maxmemory: noeviction) or cannot be reached."""
    log.exception("stream control: Redis refused or unreachable")
    response = error_response(ApiError(503, "state_unavailable", "the stream service cannot store state; try again"))
    response["Retry-After"] = "5"
    return response


def _user_id(request: HttpRequest) -> int:
    user_id = request.user.pk
    assert isinstance(user_id, int)  # api_view admits only logged-in users
    return user_id


def _session_key(request: HttpRequest) -> str:
    if request.session.session_key is None:
        request.session.save()
    assert request.session.session_key is not None
    return request.session.session_key


@api_view(methods=("POST",))
def streams(request: HttpRequest) -> HttpResponse:
    spec = _spec(request)
    try:
        channel = stream_subscribe(user_id=_user_id(request), session_key=_session_key(request), spec=spec)
    except StreamError as exc:
        return _refusal(exc)
    except RedisError:
        return _state_unavailable()
    return json_response(
        {"v": 1, "channel": channel.channel_id, "spec": spec.to_json(), "websocket": "/ws/odds/"}, status=201
    )


def _since(request: HttpRequest) -> dict[int, tuple[int, str]]:
    """The optional body of a begin: ``{"since": {"42": [17, "open"]}}``, what the client holds.
    A begin without a body (none, an empty JSON body or an empty form) holds nothing."""
    if request.content_type != "application/json":
        if request.POST:
            raise ApiError(400, "bad_json", 'send the begin\'s body as JSON: {"since": {…}}')
        return {}
    if not request.body:
        return {}
    body = json_body(request)
    if not isinstance(body, dict):
        raise ApiError(400, "bad_json", "the request body must be a JSON object")
    unknown = set(body) - {"since"}
    if unknown:
        raise ApiError(400, "invalid", f"unknown fields: {', '.join(sorted(unknown))}", field=sorted(unknown)[0])
    try:
        return since_from_json(body.get("since"))
    except InvalidRecord as exc:
        raise ApiError(400, "bad_since", exc.detail or exc.reason, field="since") from exc


@api_view(methods=("POST",))
def stream_begin_view(request: HttpRequest, channel_id: str) -> HttpResponse:
    resync = request.GET.get("resync") == "1"
    since = _since(request)
    try:
        stream_begin(
            channel_id=channel_id,
            user_id=_user_id(request),
            session_key=request.session.session_key,
            resync=resync,
            since=since,
        )
    except StreamError as exc:
        return _refusal(exc)
    except RedisError:
        return _state_unavailable()
    return json_response({"v": 1, "channel": channel_id, "status": "begin requested"}, status=202)


@api_view(methods=("PUT", "DELETE"))
def stream_detail(request: HttpRequest, channel_id: str) -> HttpResponse:
    try:
        if request.method == "PUT":
            spec = _spec(request)
            stream_change(
                channel_id=channel_id, user_id=_user_id(request), session_key=request.session.session_key, spec=spec
            )
            return json_response({"v": 1, "channel": channel_id, "spec": spec.to_json()}, status=202)
        stream_unsubscribe(channel_id=channel_id, user_id=_user_id(request), session_key=request.session.session_key)
    except StreamError as exc:
        return _refusal(exc)
    except RedisError:
        return _state_unavailable()
    return json_response({"v": 1, "channel": channel_id, "status": "ended"}, status=202)
