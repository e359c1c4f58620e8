"""The window topic: each market's first and last price snapshot per event-time window, as the
price reducer folds its batches (``reducers.movers.WindowPartial``), for the movers query."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from reducers import topics
from reducers.connections import kafka_producer
from reducers.movers import WindowPartial, encode_partial


class WindowPartials(Protocol):
    """Where the price reducer hands a batch's window partials (``WindowTopic``; an in-memory
    stand-in in the tests that run a reducer without a broker)."""

    def send(self, partials: Sequence[WindowPartial]) -> None:
        """Store every partial, or raise: a batch whose partials are not stored fails and is
        replayed, so no record's part of a window is lost."""
        ...


class WindowTopic:
    """The window topic, through a Kafka producer; keyed by market id like the price topic."""

    def __init__(self, *, bootstrap_servers: str, topic: str | None = None, flush_timeout_s: float = 30.0) -> None:
        self._topic = topic or topics.price_windows()
        self._producer = kafka_producer(bootstrap_servers)
        self._timeout = flush_timeout_s

    def send(self, partials: Sequence[WindowPartial]) -> None:
        if not partials:
            return
        for partial in partials:
            self._producer.produce(self._topic, key=str(partial.market_id).encode(), value=encode_partial(partial))
            self._producer.poll(0)
        remaining = self._producer.flush(self._timeout)
        if remaining:
            raise RuntimeError(f"{remaining} window partials not acknowledged within {self._timeout}s")
