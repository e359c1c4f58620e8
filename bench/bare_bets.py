"""The bets endpoint's bare twin: ``POST /api/bets`` as a raw ASGI application that does the one
database round trip a bet needs and nothing else.

It runs under the same server (uvicorn, the same workers) as the real endpoint and is sent the
same requests by the same clients: the body is parsed, the punter found from the session cookie in
a dictionary loaded at start (no Redis, no session engine, no CSRF, no rate limit, no live state,
no Django), and the placement statement (``PLACE_SQL``, the function the real endpoint calls) runs
on a per-process asyncio pool of the same size, with each leg's price left to the function. What
a bet costs the real web process above this one is what the product adds on the event loop:
the session, the checks, the live state, the response.

``BARE_BETS_SESSIONS`` names a JSON file ``{session key: user id}``; ``DATABASE_URL`` the
database; ``SPORTSBOOK_NAMESPACE`` the run's topics (the outbox rows name the bets topic).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Awaitable, Callable, MutableMapping
from decimal import Decimal
from typing import Any

import django
import orjson
from psycopg_pool import AsyncConnectionPool

from reducers import betting, topics
from reducers.rules import MAX_RETURN, MAX_STAKE
from reducers.trading import REFERRAL_WINDOW_S

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
django.setup()  # once, at import: the statement's text lives beside the models it returns

from odds.betting.services.placement import PLACE_SQL  # noqa: E402 (after django.setup(): it imports models)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

POOL_SIZE = int(os.environ.get("BET_POOL_SIZE", "16"))
JSON = [(b"content-type", b"application/json")]


class _State:
    def __init__(self) -> None:
        self.pool: AsyncConnectionPool | None = None
        self.sessions: dict[str, int] = {}
        self.cookie = b"sessionid"
        self.opening = asyncio.Lock()


state = _State()


def _session_user(headers: list[tuple[bytes, bytes]]) -> int | None:
    for name, value in headers:
        if name == b"cookie":
            for part in value.split(b";"):
                key, _, session = part.strip().partition(b"=")
                if key == state.cookie:
                    return state.sessions.get(session.decode())
    return None


async def _body(receive: Receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


async def _answer(send: Send, status: int, body: bytes) -> None:
    await send({"type": "http.response.start", "status": status, "headers": JSON})
    await send({"type": "http.response.body", "body": body})


async def _open() -> AsyncConnectionPool:
    """The sessions and the pool, on the first request (the benchmark's server runs without the
    lifespan protocol, as the real application's does)."""
    async with state.opening:
        if state.pool is None:
            with open(os.environ["BARE_BETS_SESSIONS"]) as file:
                loaded = json.load(file)
            state.sessions = {str(k): int(v) for k, v in loaded["sessions"].items()}
            state.cookie = loaded["cookie"].encode()
            pool = AsyncConnectionPool(os.environ["DATABASE_URL"], min_size=POOL_SIZE, max_size=POOL_SIZE, open=False)
            await pool.open(wait=True)
            state.pool = pool
    return state.pool


async def application(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] != "http":
        return
    pool = state.pool or await _open()
    user = _session_user(scope["headers"])
    if user is None:
        await _answer(send, 403, b'{"error": {"code": "not_logged_in"}}')
        return
    if scope["method"] == "GET":  # readiness: the punter is known
        await _answer(send, 200, b"{}")
        return
    request = orjson.loads(await _body(receive))
    legs = [
        {"selection_id": int(leg["selection_id"]), "price_seen": str(leg["price"]), "price": None, "unavailable": ""}
        for leg in request["selections"]
    ]
    policy = request["price_policy"]
    params = (
        user,
        request["idempotency_key"],
        "bare",
        policy,
        list(betting.price_moves(policy)),
        Decimal(request["stake"]),
        orjson.dumps(legs).decode(),
        MAX_RETURN,
        topics.bets(),
        MAX_STAKE,
        REFERRAL_WINDOW_S,
    )
    async with pool.connection() as connection:
        row = await (await connection.execute(PLACE_SQL, params)).fetchone()
    await _answer(send, 201, row[0].encode() if row else b"{}")
