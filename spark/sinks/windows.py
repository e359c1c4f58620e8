"""The window topic: each market's first and last price snapshot per event-time window, as the
price reducer folds its batches (``reducers.movers.WindowPartial``), for the movers query."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Protocol

from reducers import topics
from reducers.movers import WindowPartial, encode_partial, merge_into
from store.clients import kafka_producer


class WindowPartials(Protocol):
    """Where the price reducer hands a batch's window partials (``WindowTopic``; an in-memory
    stand-in in the tests that run a reducer without a broker)."""

    def send(self, partials: Sequence[WindowPartial]) -> None:
        """Store every partial, or raise: a batch whose partials are not stored fails and is
        replayed, so no record's part of a window is lost."""
        ...


class WindowStream(WindowPartials, Protocol):
    """A ``WindowPartials`` whose sending can be started and waited for apart, so that a batch's
    other effects are carried out while the partials are on their way (``WindowTopic``)."""

    def produce(self, partials: Sequence[WindowPartial]) -> None:
        """Start sending the partials and return at once."""
        ...

    def flush(self) -> None:
        """Return once every partial produced is stored, or raise (as ``send``)."""
        ...


class WindowTopic:
    """The window topic, through a Kafka producer; keyed by market id like the price topic."""

    def __init__(self, *, bootstrap_servers: str, topic: str | None = None, flush_timeout_s: float = 30.0) -> None:
        self._topic = topic or topics.price_windows()
        self._producer = kafka_producer(bootstrap_servers)
        self._timeout = flush_timeout_s

    def send(self, partials: Sequence[WindowPartial]) -> None:
        if partials:
            self.produce(partials)
            self.flush()

    def produce(self, partials: Sequence[WindowPartial]) -> None:
        for partial in partials:
            self._producer.produce(self._topic, key=str(partial.market_id).encode(), value=encode_partial(partial))
            self._producer.poll(0)

    def flush(self) -> None:
        remaining = self._producer.flush(self._timeout)
        if remaining:
            raise RuntimeError(f"{remaining} window partials not acknowledged within {self._timeout}s")


class BufferedWindows:
    """Window partials of consecutive small batches, merged per (window, market) and sent to
    ``sink`` together, for a consumer that applies prices a few records at a time (the real-time
    applier): sent batch by batch, every poll waited for the window topic's acknowledgement, a
    fifth of the applier's time at 1,000 prices a second, while the records behind it queued.

    ``send`` only keeps the partials; ``flush`` sends what is kept and returns once it is stored
    (or raises). The consumer commits the offsets of the records behind the partials only after
    a ``flush``, so a crash before it replays them: no record's part of a window is lost.
    """

    def __init__(self, sink: WindowPartials, *, every_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._sink = sink
        self._every_s = every_s
        self._clock = clock
        self._kept: dict[tuple[int, int], WindowPartial] = {}
        self._since: float | None = None

    def send(self, partials: Sequence[WindowPartial]) -> None:
        merge_into(self._kept, partials)
        if partials and self._since is None:
            self._since = self._clock()

    def produce(self, partials: Sequence[WindowPartial]) -> None:
        """As ``send``: the partials are kept until ``flush``."""
        self.send(partials)

    def holding(self) -> bool:
        """Whether any partial is kept, waiting to be sent."""
        return bool(self._kept)

    def due(self) -> bool:
        """Whether the oldest partial kept has waited ``every_s``."""
        return self._since is not None and self._clock() - self._since >= self._every_s

    def flush(self) -> None:
        if self._kept:
            self._sink.send([self._kept[key] for key in sorted(self._kept)])
        self._kept, self._since = {}, None
