"""Stream control endpoints (``/api/streams``): subscribe, begin, change and end a subscriber
channel (docs/protocol.md)."""

from __future__ import annotations

import logging

from django.http import HttpRequest, HttpResponse
from ninja import Router, Status
from redis.exceptions import RedisError

from odds.api.http import Session, answers, error_response, json_only
from odds.api.schemas import common
from odds.api.schemas import streams as s
from odds.api.schemas.common import ApiError
from odds.streaming.services.streams import (
    StreamError,
    stream_begin,
    stream_change,
    stream_share,
    stream_subscribe,
    stream_unsubscribe,
)
from reducers.schemas import InvalidRecord
from reducers.subscriptions import SubscriptionSpec, spec_from_json

log = logging.getLogger(__name__)

router = Router(auth=Session(), tags=["streams"])


def _spec(body: s.SubscriptionSpec) -> SubscriptionSpec:
    """The spec as the reducers read it (the rules across fields: a view's markets, the number of
    markets, each claimed bet's prices)."""
    try:
        spec = spec_from_json(body.model_dump(exclude_unset=True))
    except InvalidRecord as exc:
        raise ApiError(400, "invalid", exc.detail or exc.reason, field=exc.field) from exc
    if spec.query is not None and (spec.view != "markets" or spec.markets):
        # A query's channel is shared by everyone who asks for it: it holds what the query matches.
        raise ApiError(400, "invalid", "a query is followed alone, in a markets view without markets", field="query")
    return spec


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
    assert isinstance(user_id, int)  # Session() admits only logged-in users
    return user_id


def _session_key(request: HttpRequest) -> str:
    if request.session.session_key is None:
        request.session.save()
    assert request.session.session_key is not None
    return request.session.session_key


UNAVAILABLE = (
    common.CommandUnavailable,
    "The database cannot be reached, or Kafka did not acknowledge the command (`command_not_sent`), or Redis"
    " refused the write (`state_unavailable`: at its memory limit, or unreachable); try again after"
    " `Retry-After` seconds.",
    ("Retry-After",),
)
NO_CHANNEL = (s.NoChannel, "No such channel of this user and session.")
CONTROL_LIMITED = (
    s.ControlLimited,
    "Above the punter's begin, resync and change rate limit; retry after `Retry-After` seconds.",
    ("Retry-After",),
)
SPEC_REFUSED = (common.BodyRefused, "The body is not JSON or the spec is invalid (`field` names the part).")
SPEC_EXAMPLES = {
    "markets": {"view": "markets", "markets": [42, 43]},
    "query": {"view": "markets", "query": {"sport": "football", "starting_within_minutes": 60}},
    "in_play": {"view": "markets", "query": {"sport": "tennis", "in_play": True}},
    "slip": {
        "view": "slip",
        "slip": [{"selection_id": 101, "market_id": 42}, {"selection_id": 205, "market_id": 57}],
        "stake": "10.00",
    },
    "bets": {
        "view": "bets",
        "bets": [{"bet_id": 7, "stake": "10.00", "legs": [{"selection_id": 101, "market_id": 42, "price": "2.50"}]}],
    },
}


@router.post(
    "streams",
    summary="Create a subscriber channel bound to this user and session",
    url_name="streams",
    **answers(
        {201: (s.ChannelCreated, "Created; attach to it on the websocket, then begin.")},
        {
            400: SPEC_REFUSED,
            409: (s.TooManyChannels, "The punter or the browser session has its most live channels."),
            429: (common.RateLimited, "Above the subscription rate limit."),
            503: UNAVAILABLE,
        },
        access="write",
        body=True,
        examples=SPEC_EXAMPLES,
    ),
)
def streams(request: HttpRequest, body: s.SubscriptionSpec) -> HttpResponse | Status[s.ChannelCreated]:
    spec = _spec(body)
    try:
        if spec.query is not None:
            # One channel per query, shared by everyone who asks for it.
            channel_id = stream_share(query=spec.query, user_id=_user_id(request))
        else:
            channel_id = stream_subscribe(
                user_id=_user_id(request), session_key=_session_key(request), spec=spec
            ).channel_id
    except StreamError as exc:
        return _refusal(exc)
    except RedisError:
        return _state_unavailable()
    created = s.ChannelCreated(
        channel=channel_id,
        spec=s.SpecOut.model_validate(spec.to_json()),
        websocket="/ws/odds/",
        shared=spec.query is not None,
    )
    return Status(201, created)


@router.post(
    "streams/{channel_id}/begin",
    auth=Session(check=json_only),
    summary="Ask the reducers for the channel's image, then deltas",
    url_name="stream-begin",
    **answers(
        {202: (s.ChannelStatus, "Requested.")},
        {
            400: (
                s.BeginRefused,
                "The body is not JSON, has unknown fields, or `since` is not an object of market-id strings to"
                " `[sequence, status]` (at most 500).",
            ),
            404: NO_CHANNEL,
            429: CONTROL_LIMITED,
            503: UNAVAILABLE,
        },
        access="write",
        body=True,
        examples={"since": {"since": {"42": [17, "open"]}}},
    ),
)
def stream_begin_view(
    request: HttpRequest, channel_id: common.ChannelId, resync: s.Resync = None, body: s.BeginRequest | None = None
) -> HttpResponse | Status[s.ChannelStatus]:
    try:
        stream_begin(
            channel_id=channel_id,
            user_id=_user_id(request),
            session_key=request.session.session_key,
            resync=resync == "1",
            since=body.since if body is not None else {},
        )
    except StreamError as exc:
        return _refusal(exc)
    except RedisError:
        return _state_unavailable()
    return Status(202, s.ChannelStatus(channel=channel_id, status="begin requested"))


@router.put(
    "streams/{channel_id}",
    summary="Change the channel's spec; a new image follows",
    url_name="stream",
    **answers(
        {202: (s.ChannelSpec, "Requested.")},
        {400: SPEC_REFUSED, 404: NO_CHANNEL, 429: CONTROL_LIMITED, 503: UNAVAILABLE},
        access="write",
        body=True,
        examples=SPEC_EXAMPLES,
    ),
)
def stream_change_view(
    request: HttpRequest, channel_id: common.ChannelId, body: s.SubscriptionSpec
) -> HttpResponse | Status[s.ChannelSpec]:
    spec = _spec(body)
    if spec.query is not None:
        return error_response(
            ApiError(400, "invalid", "a query has a shared channel of its own: POST it to /api/streams", field="query")
        )
    try:
        stream_change(
            channel_id=channel_id, user_id=_user_id(request), session_key=request.session.session_key, spec=spec
        )
    except StreamError as exc:
        return _refusal(exc)
    except RedisError:
        return _state_unavailable()
    return Status(202, s.ChannelSpec(channel=channel_id, spec=s.SpecOut.model_validate(spec.to_json())))


@router.delete(
    "streams/{channel_id}",
    summary="End the channel",
    **answers({202: (s.ChannelStatus, "Ended.")}, {404: NO_CHANNEL, 503: UNAVAILABLE}, access="write"),
)
def stream_end_view(request: HttpRequest, channel_id: common.ChannelId) -> HttpResponse | Status[s.ChannelStatus]:
    try:
        stream_unsubscribe(channel_id=channel_id, user_id=_user_id(request), session_key=request.session.session_key)
    except StreamError as exc:
        return _refusal(exc)
    except RedisError:
        return _state_unavailable()
    return Status(202, s.ChannelStatus(channel=channel_id, status="ended"))
