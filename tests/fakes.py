"""Stand-ins for the services a reducer talks to, so its processors run without a broker or a
Redis server: an in-memory Redis that runs the store's Lua scripts (fakeredis with Lua), and a
dead-letter topic and a window topic that keep what they are sent."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import fakeredis

from reducers.movers import WindowPartial, merge_all


def fake_store_client() -> fakeredis.FakeRedis:
    """A Redis client on a server of its own, in memory: the reducers' store (``store.markets``,
    ``store.channels``) runs on it unchanged, scripts and pub-sub included."""
    return fakeredis.FakeRedis(server=fakeredis.FakeServer())


@dataclass(frozen=True)
class DeadLetter:
    key: bytes | None
    value: bytes | None
    reason: str
    detail: str
    origin: str
    headers: tuple[tuple[str, bytes], ...] = ()


@dataclass
class FakeDeadLetters:
    """A dead-letter topic in memory (``spark.sinks.dead_letter.DeadLetters``): ``sent`` holds
    every record sent, ``flushed`` how many of them were acknowledged by a flush."""

    sent: list[DeadLetter] = field(default_factory=list)
    flushed: int = 0

    def send(
        self,
        *,
        key: bytes | None,
        value: bytes | None,
        reason: str,
        detail: str,
        origin: str,
        headers: Sequence[tuple[str, bytes]] = (),
    ) -> None:
        self.sent.append(DeadLetter(key, value, reason, detail, origin, tuple(headers)))

    def flush(self, timeout: float = 30.0) -> None:
        self.flushed = len(self.sent)

    def reasons(self) -> list[str]:
        return [letter.reason for letter in self.sent]


@dataclass
class FakeWindows:
    """The window topic in memory (``spark.sinks.windows.WindowStream``): ``sent`` holds every
    partial sent, batch after batch; ``produced`` those produced and not yet flushed."""

    sent: list[WindowPartial] = field(default_factory=list)
    produced: list[WindowPartial] = field(default_factory=list)

    def send(self, partials: Sequence[WindowPartial]) -> None:
        self.sent.extend(partials)

    def produce(self, partials: Sequence[WindowPartial]) -> None:
        self.produced.extend(partials)

    def flush(self) -> None:
        self.sent.extend(self.produced)
        self.produced.clear()

    def merged(self) -> dict[tuple[int, int], WindowPartial]:
        """Every partial sent, merged per (window start, market) as the movers query merges them."""
        return {(p.window_start, p.market_id): p for p in merge_all(self.sent)}
