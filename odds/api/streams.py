"""Stream control API: subscribe, begin, change and end a subscriber channel (docs/protocol.md)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from odds.api.http import api_view, json_body, json_response
from odds.api.schemas import ApiError
from odds.services.streams import StreamError, stream_begin, stream_change, stream_subscribe, stream_unsubscribe
from reducers.schemas import InvalidRecord
from reducers.subscriptions import SubscriptionSpec, spec_from_json


def _spec(request: HttpRequest) -> SubscriptionSpec:
    try:
        return spec_from_json(json_body(request))
    except InvalidRecord as exc:
        raise ApiError(400, "invalid", exc.detail or exc.reason, field=exc.field) from exc


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
        raise ApiError(exc.status, exc.code, exc.message) from exc
    return json_response(
        {"v": 1, "channel": channel.channel_id, "spec": spec.to_json(), "websocket": "/ws/odds/"}, status=201
    )


@api_view(methods=("POST",))
def stream_begin_view(request: HttpRequest, channel_id: str) -> HttpResponse:
    resync = request.GET.get("resync") == "1"
    try:
        stream_begin(
            channel_id=channel_id, user_id=_user_id(request), session_key=request.session.session_key, resync=resync
        )
    except StreamError as exc:
        raise ApiError(exc.status, exc.code, exc.message) from exc
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
        raise ApiError(exc.status, exc.code, exc.message) from exc
    return json_response({"v": 1, "channel": channel_id, "status": "ended"}, status=202)
