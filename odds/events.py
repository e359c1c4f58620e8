"""Websocket message schemas (version 1). See docs/protocol.md.

Frames from the server are JSON objects with a ``type``. Market frames are produced by the
reducers and relayed byte for byte; the frames below are built here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal

import orjson

from reducers.subscriptions import ended_frame

PROTOCOL_VERSION = 1

# client → server
WATCH = "watch"
UNWATCH = "unwatch"
ATTACH = "attach"
PING = "ping"

# server → client
HELLO = "hello"
IMAGE = "image"
MARKET = "market"
PONG = "pong"
ERROR = "error"
ATTACHED = "attached"
RESUMED = "resumed"
HEARTBEAT = "heartbeat"
CONFLATED = "conflated"
ENDED = "ended"
BET_SETTLED = "bet.settled"
ENDED_PREFIX = '{"type":"ended"'
# A market's status message as the reducers publish it (never conflated).
STATUS_PREFIX = '{"type":"market.status"'

# websocket close codes (besides the standard ones)
CLOSE_TOO_MANY_CONNECTIONS = 4429


def hello(*, user: str | None) -> str:
    return orjson.dumps({"type": HELLO, "v": PROTOCOL_VERSION, "user": user}).decode()


def image(*, markets: list[Any]) -> str:
    """The current state of the requested markets; ``markets`` are raw reducer states."""
    return '{"type":"image","v":1,"markets":[' + ",".join(markets) + "]}"


def pong(*, ts: int) -> str:
    return orjson.dumps({"type": PONG, "ts": ts}).decode()


def error(*, code: str, message: str) -> str:
    return orjson.dumps({"type": ERROR, "code": code, "message": message}).decode()


def attached(*, channel: str) -> str:
    return orjson.dumps({"type": ATTACHED, "channel": channel}).decode()


def resumed(*, channel: str, after: int, count: int, resync: bool) -> str:
    """Answer to an attach with ``last_seq``: ``count`` missed frames follow, or a resync image."""
    return orjson.dumps(
        {"type": RESUMED, "channel": channel, "after": after, "count": count, "resync": resync}
    ).decode()


def ended(*, channel: str, reason: str) -> str:
    """The channel ended (``reason``: unsubscribed, expired, ended_by_staff); same bytes as the
    reducers publish when they remove it."""
    return ended_frame(channel_id=channel, reason=reason).decode()


def heartbeat(*, ts: int) -> str:
    return orjson.dumps({"type": HEARTBEAT, "ts": ts}).decode()


def markets_batch(*, items: Iterable[str]) -> str:
    """Several market frames in one websocket frame (clients that asked for ``batch``)."""
    return '{"type":"markets","items":[' + ",".join(items) + "]}"


def conflated(*, merged: int) -> str:
    """Market updates replaced by newer ones before this connection could be sent them."""
    return orjson.dumps({"type": CONFLATED, "merged": merged}).decode()


@dataclass(frozen=True, kw_only=True)
class BetSettled:
    """``bet.settled``: a bet of the punter closed (won, lost, void or cashed out), sent to every
    socket of theirs once the settlement is committed, with the balance it left."""

    bet_id: int
    status: Literal["won", "lost", "void", "cashed_out"]
    title: str
    stake: Decimal
    payout: Decimal
    currency: str
    balance: Decimal
    v: int = PROTOCOL_VERSION

    def to_json(self) -> bytes:
        return orjson.dumps(
            {
                "type": BET_SETTLED,
                "v": self.v,
                "bet": {
                    "id": self.bet_id,
                    "status": self.status,
                    "title": self.title,
                    "stake": f"{self.stake:.2f}",
                    "payout": f"{self.payout:.2f}",
                },
                "wallet": {"currency": self.currency, "balance": f"{self.balance:.2f}"},
            }
        )
