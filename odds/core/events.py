"""The frames the edge builds, and the names of the websocket messages (version 1).

Every frame's definition is in ``reducers/frames.py`` (see docs/protocol.md). Market frames are
produced by the reducers and relayed byte for byte; the frames below are built here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from reducers import frames
from reducers.subscriptions import ended_frame

PROTOCOL_VERSION = frames.PROTOCOL_VERSION

# websocket close codes (besides the standard ones)
CLOSE_TOO_MANY_CONNECTIONS = 4429
# The server could not read back what the socket missed while Redis was away (standard 1013,
# "try again later"): the client connects again and starts from a fresh image.
CLOSE_TRY_AGAIN = 1013
# The socket's session ended (logout, password change, deactivation, self-exclusion): after a
# ``session.ended`` frame saying why. The client connects again as whoever it is now.
CLOSE_SESSION_ENDED = 4401

# A websocket close's cause, by its code, as ``sportsbook_websocket_closes_total`` counts it.
CLOSE_CAUSES: dict[int, str] = {
    1000: "normal",
    1001: "going_away",
    1005: "no_status",
    1006: "abnormal",
    1009: "too_big",
    1011: "server_error",
    1012: "restart",
    CLOSE_TRY_AGAIN: "try_again",
    CLOSE_TOO_MANY_CONNECTIONS: "too_many_connections",
    CLOSE_SESSION_ENDED: "session_ended",
}


def close_cause(code: int | None) -> str:
    """The cause of a close by its code; any code not listed is ``other`` (clients may send any)."""
    return CLOSE_CAUSES.get(code, "other") if code is not None else "no_status"


def hello(*, user: str | None) -> str:
    return frames.encode_text({"type": "hello", "v": PROTOCOL_VERSION, "user": user})


def desk_followed(*, channels: list[str]) -> str:
    """The socket follows the trading desk's staff channels (``channels``: what they carry)."""
    return frames.encode_text({"type": "desk.followed", "v": PROTOCOL_VERSION, "channels": channels})


def image(*, markets: Iterable[str | bytes]) -> str:
    """The current state of the requested markets; ``markets`` are raw reducer states."""
    return frames.image_text(markets=markets)


def pong(*, ts: int) -> str:
    return frames.encode_text({"type": "pong", "ts": ts})


def error(*, code: str, message: str) -> str:
    return frames.encode_text({"type": "error", "code": code, "message": message})


def attached(*, channel: str, query: dict[str, object] | None = None) -> str:
    if query is None:
        return frames.encode_text({"type": "attached", "channel": channel})
    return frames.encode_text({"type": "attached", "channel": channel, "query": query})


def resumed(*, channel: str, after: int, count: int, resync: bool) -> str:
    """Answer to an attach with ``last_seq``: ``count`` missed frames follow, or a resync image."""
    return frames.encode_text({"type": "resumed", "channel": channel, "after": after, "count": count, "resync": resync})


def ended(*, channel: str, reason: str) -> str:
    """The channel ended (``reason``: unsubscribed, expired, ended_by_staff); same bytes as the
    reducers publish when they remove it."""
    return ended_frame(channel_id=channel, reason=reason).decode()


def session_ended(*, reason: frames.SessionEndReason) -> str:
    return frames.encode_text({"type": "session.ended", "v": PROTOCOL_VERSION, "reason": reason})


def heartbeat(*, ts: int) -> str:
    return frames.encode_text({"type": "heartbeat", "ts": ts})


def matches(*, items: Iterable[str | bytes]) -> str:
    """The stored match states of events a socket started following; ``items`` are raw states."""
    return frames.matches_text(items=items)


def markets_batch(*, items: Iterable[str | bytes]) -> str:
    """Several market frames in one websocket frame (clients that asked for ``batch``)."""
    return frames.markets_text(items=items)


def conflated(*, merged: int) -> str:
    """Market updates replaced by newer ones before this connection could be sent them."""
    return frames.encode_text({"type": "conflated", "merged": merged})


@dataclass(frozen=True, kw_only=True)
class BetSettled:
    """``bet.settled`` (``reducers.frames.BetSettledFrame``): a bet of the punter closed (won,
    lost, void or cashed out), sent to every socket of theirs once the settlement is committed,
    with the balance it left."""

    bet_id: int
    status: Literal["won", "lost", "void", "cashed_out"]
    title: str
    stake: Decimal
    payout: Decimal
    currency: str
    balance: Decimal
    v: int = PROTOCOL_VERSION

    def to_json(self) -> bytes:
        return frames.encode(
            {
                "type": "bet.settled",
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


LegResult = Literal["won", "lost", "void"]


@dataclass(frozen=True, kw_only=True)
class BetLegsDecided:
    """``bet.legs`` (``reducers.frames.BetLegsFrame``): legs of a bet that stays open were decided
    (a won or void leg of an accumulator), sent to every socket of the punter once committed."""

    bet_id: int
    legs: tuple[tuple[int, LegResult], ...]  # (selection id, result)
    v: int = PROTOCOL_VERSION

    def to_json(self) -> bytes:
        return frames.encode(
            {
                "type": "bet.legs",
                "v": self.v,
                "bet": {"id": self.bet_id, "legs": [{"selection_id": s, "result": r} for s, r in self.legs]},
            }
        )
