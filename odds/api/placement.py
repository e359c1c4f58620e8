"""``POST /api/bets`` served on the event loop: the money path at the database's pace.

Django under ASGI runs a sync view and every classic middleware through thread hand-offs, and
reads the session and the user from PostgreSQL on every request. This endpoint answers the one
request a peak is made of without any of that, and with the same rules and the same answers:

- the session is read from Redis as a websocket's handshake reads it (``odds.accounts.sessions``);
  the user's session hash and active flag, and the user of a session already read, are kept per
  process for ``BET_AUTH_CACHE_S`` (a known session is only confirmed to exist, within the round
  trip below);
- CSRF and ``Origin`` are checked by Django's own ``CsrfViewMiddleware`` (``csrf_check``), the
  body parsed by the API's own ``json_parse`` and validated by the same model the Django route
  declares (``BetPlaceRequest``), its errors answered by the same mapping;
- every attempt is counted against the punter's rate limit first, as soon as the session names
  the punter: before the body is read and before any database work, so a punter over the limit
  never holds a connection of the pool;
- the bet is placed by the one placement service (``odds.betting.services.placement.bet_place``,
  which the Django view runs too) on a per-process asyncio pool; the live state of the legs'
  markets and any newer trader decision are read in one Redis round trip;
- Redis refusing the count (at its memory limit) or unreachable is ``503 state_unavailable`` with
  ``Retry-After``;
- when the pool is saturated (``BET_POOL_MAX_WAITING`` requests already wait) or no connection
  frees up within ``BET_POOL_TIMEOUT_MS``, the answer is at once ``503 overloaded`` with
  ``Retry-After``, and nothing was recorded;
- the response carries the headers Django's middleware would add (security, caching, framing).

Whatever this endpoint does not handle itself goes to Django unchanged, body included: no session
cookie, a session not in Redis, a session hash that does not match, a request Django would
redirect to HTTPS, a form body, a body over ``DATA_UPLOAD_MAX_MEMORY_SIZE``, a host Django refuses.
"""

from __future__ import annotations

import asyncio
import io
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import psycopg
from django.conf import settings
from django.core.exceptions import DisallowedHost
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpResponse
from django.middleware.clickjacking import XFrameOptionsMiddleware
from django.middleware.security import SecurityMiddleware
from django.utils.cache import add_never_cache_headers, patch_vary_headers
from psycopg_pool import AsyncConnectionPool, PoolTimeout, TooManyRequests
from redis import RedisError

from odds.accounts.sessions import SessionUnknown, SessionUsers
from odds.api.http import body_read, csrf_check, error_response
from odds.api.schemas.common import ApiError
from odds.api.schemas.views import BetPlaceRequest
from odds.api.views import bet_invalid_error, placement_response, rate_limited_error
from odds.betting.services.bets import BetRateLimited, bet_attempt_count_async
from odds.betting.services.placement import PLACE_SQL, SELECTION_MARKETS_SQL, BetInvalid, bet_place
from odds.catalogue.selectors.prices import LiveStates, live_states_parse, live_states_read
from odds.streaming.hub import get_hub

log = logging.getLogger(__name__)

PATH = "/api/bets"
# The placement pool's connections, as PostgreSQL names them (pg_stat_activity.application_name).
POOL_APPLICATION_NAME = "sportsbook bets"
Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[..., Awaitable[None]]


class _Fallback(Exception):
    """Django answers this request (see the module's docstring for when)."""


def database_conninfo() -> str:
    """libpq's connection string of Django's default database."""
    db = settings.DATABASES["default"]
    return psycopg.conninfo.make_conninfo(
        dbname=str(db["NAME"]),
        user=str(db["USER"]),
        password=str(db["PASSWORD"]),
        host=str(db["HOST"]),
        port=str(db["PORT"]),
    )


class _PoolIO:
    """The placement's I/O on the endpoint's asyncio pool and the process's Redis client; the
    live prices' round trip also confirms that a session read earlier still exists."""

    def __init__(self, endpoint: PlacementEndpoint, *, confirm_session: str | None) -> None:
        self.endpoint = endpoint
        self.confirm_session = confirm_session

    async def selection_markets(self, selection_ids: list[int]) -> list[tuple[int, int]]:
        async with self.endpoint.connection() as conn:
            return list(await (await conn.execute(SELECTION_MARKETS_SQL, [selection_ids])).fetchall())

    async def live_states(self, market_ids: list[int]) -> LiveStates:
        pipe = get_hub().client().pipeline(transaction=False)
        if self.confirm_session is not None:
            pipe.exists(self.endpoint.auth.session_cache_key(self.confirm_session))
        live_states_read(pipe, market_ids)
        replies = await pipe.execute()
        if self.confirm_session is not None:
            if not replies[0]:
                raise _Fallback  # logged out meanwhile: Django answers (401)
            replies = replies[1:]
        return live_states_parse(market_ids, replies)

    async def place(self, params: tuple[Any, ...]) -> str:
        async with self.endpoint.connection() as conn:
            row = await (await conn.execute(PLACE_SQL, params)).fetchone()
        assert row is not None  # a SELECT of a function answers one row
        return str(row[0])


class PlacementEndpoint:
    """ASGI middleware: ``POST /api/bets`` here, everything else to ``app``."""

    def __init__(self, app: App) -> None:
        self.app = app
        self.pool: AsyncConnectionPool | None = None
        self.pool_lock = asyncio.Lock()
        self.auth = SessionUsers(self.connection)
        # Django's own response middleware, run on our responses for the headers they add.
        self.security = SecurityMiddleware(lambda request: HttpResponse())
        self.framing = XFrameOptionsMiddleware(lambda request: HttpResponse())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not (
            scope["type"] == "http" and scope["method"] == "POST" and scope["path"] == PATH and settings.BET_FAST_PATH
        ):
            await self.app(scope, receive, send)
            return
        body, complete = await _body(receive, settings.DATA_UPLOAD_MAX_MEMORY_SIZE)
        request = ASGIRequest(scope, io.BytesIO(body))
        try:
            if not complete:
                raise _Fallback
            response = await self.place(request, body)
        except _Fallback:
            await self.app(scope, _replay(body, complete, receive), send)
            return
        await _send(send, self.finish(request, response))

    def finish(self, request: ASGIRequest, response: HttpResponse) -> HttpResponse:
        """The headers the view's decorators and Django's middleware add to an API response."""
        add_never_cache_headers(response)
        patch_vary_headers(response, ("Cookie",))
        response = self.security.process_response(request, response)
        return self.framing.process_response(request, response)

    async def place(self, request: ASGIRequest, body: bytes) -> HttpResponse:
        if settings.SECURE_SSL_REDIRECT and not request.is_secure():
            raise _Fallback
        content_type = request.META.get("CONTENT_TYPE", "")
        if content_type.startswith(("multipart/", "application/x-www-form-urlencoded")):
            raise _Fallback
        try:
            request.get_host()
        except DisallowedHost as exc:
            raise _Fallback from exc
        try:
            session_key = request.COOKIES.get(settings.SESSION_COOKIE_NAME, "")
            user_id = self.auth.known_user(session_key)
            confirm = user_id is not None
            session = None
            if user_id is None:
                session = await self.auth.session_read(session_key)
                user_id = session.user_id
            # Every attempt is counted first, before the body is read or the pool is asked for a
            # connection: a punter over the limit never holds one.
            try:
                await bet_attempt_count_async(user_id=user_id, client=get_hub().client())
            except BetRateLimited as exc:
                raise rate_limited_error(exc) from exc
            if session is not None:
                await self.auth.session_verify(session_key, session)
            # The endpoint is not CSRF-exempt: the check runs as for every API write.
            csrf_check(request)
            return await self.bet(user_id, body, confirm_session=session_key if confirm else None)
        except SessionUnknown as exc:
            raise _Fallback from exc
        except ApiError as error:
            return error_response(error)
        except (psycopg.OperationalError, psycopg.InterfaceError):
            log.exception("database unavailable while placing a bet")
            return _unavailable(
                ApiError(503, "database_unavailable", "the service is temporarily unavailable; try again")
            )
        except RedisError:
            log.warning("Redis refused or unreachable while placing a bet", exc_info=True)
            return _unavailable(ApiError(503, "state_unavailable", "the service cannot store state; try again"))

    async def bet(self, user_id: int, body: bytes, *, confirm_session: str | None) -> HttpResponse:
        """Place the bet (``odds.betting.services.placement.bet_place``); ``confirm_session``: a
        session key to confirm in the same Redis round trip as the live prices."""
        request = body_read(BetPlaceRequest, body)
        try:
            placement = await bet_place(
                user_id=user_id,
                idempotency_key=request.idempotency_key,
                stake=request.stake,
                legs=request.legs(),
                price_policy=request.price_policy,
                io=_PoolIO(self, confirm_session=confirm_session),
            )
        except BetInvalid as exc:
            raise bet_invalid_error(exc) from exc
        return placement_response(placement)

    async def lifespan(self, scope: Scope, receive: Receive, send: Send) -> None:
        """ASGI lifespan: the process fills its pool before it takes requests, so no bet after a
        restart waits on a new database connection, and closes it when it stops."""
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                if settings.BET_FAST_PATH:
                    await self.pool_warm()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if self.pool is not None:
                    await self.pool.close()
                    self.pool = None
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def pool_warm(self) -> None:
        """Open the pool and wait up to ``BET_POOL_WARM_S`` for all its connections. If the
        database does not answer in time, the process starts all the same; the pool is closed
        and the first bet opens it again."""
        pool = await self.pool_open()
        try:
            await pool.wait(timeout=settings.BET_POOL_WARM_S)
        except PoolTimeout:
            log.warning("bet pool not full after %s s; it opens again at the first bet", settings.BET_POOL_WARM_S)
            async with self.pool_lock:
                if self.pool is pool:
                    self.pool = None

    def connection(self) -> Any:
        """A pooled connection, or ``ApiError(503, "overloaded")`` at once when the pool is saturated."""
        return _Admitted(self)

    async def pool_open(self) -> AsyncConnectionPool:
        async with self.pool_lock:
            if self.pool is None:
                pool = AsyncConnectionPool(
                    database_conninfo(),
                    min_size=settings.BET_POOL_SIZE,
                    max_size=settings.BET_POOL_SIZE,
                    max_waiting=settings.BET_POOL_MAX_WAITING,
                    timeout=settings.BET_POOL_TIMEOUT_MS / 1000,
                    kwargs={"autocommit": True, "application_name": POOL_APPLICATION_NAME},
                    name="bets",
                    open=False,
                )
                await pool.open()
                self.pool = pool
            return self.pool


class _Admitted:
    """``async with``: a connection of the endpoint's pool; saturation is a 503 with Retry-After."""

    def __init__(self, endpoint: PlacementEndpoint) -> None:
        self.endpoint = endpoint
        self.context: Any = None

    async def __aenter__(self) -> psycopg.AsyncConnection[Any]:
        pool = self.endpoint.pool or await self.endpoint.pool_open()
        self.context = pool.connection()
        try:
            return await self.context.__aenter__()
        except (TooManyRequests, PoolTimeout) as exc:
            raise ApiError(
                503,
                "overloaded",
                "too many bets are being placed right now; nothing was recorded, try again in a moment",
                extra={"retry_after_s": settings.BET_RETRY_AFTER_S},
            ) from exc

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.context.__aexit__(*exc_info)


def _unavailable(error: ApiError) -> HttpResponse:
    response = error_response(error)
    response["Retry-After"] = str(settings.BET_RETRY_AFTER_S)
    return response


async def _body(receive: Receive, limit: int) -> tuple[bytes, bool]:
    """The request body, and whether it is all there (False: over ``limit`` or the client left)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks), False
        chunk = message.get("body", b"")
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            return b"".join(chunks), False
        if not message.get("more_body", False):
            return b"".join(chunks), True


def _replay(body: bytes, complete: bool, receive: Receive) -> Receive:
    """``receive`` for Django: the body already read, then whatever the client still sends."""
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": not complete}
        return await receive()

    return replay


async def _send(send: Send, response: HttpResponse) -> None:
    if response.status_code == 503 and "Retry-After" not in response:
        response["Retry-After"] = str(settings.BET_RETRY_AFTER_S)
    body = response.content
    response["Content-Length"] = str(len(body))
    headers = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in response.items()]
    for cookie in response.cookies.values():
        headers.append((b"set-cookie", cookie.output(header="").strip().encode("latin-1")))
    await send({"type": "http.response.start", "status": response.status_code, "headers": headers})
    await send({"type": "http.response.body", "body": body})
