"""How a web process runs Python's cyclic garbage collector with thousands of sockets open.

Each socket keeps a few hundred container objects alive for as long as it is open. Python's
collector promotes whatever survives a young collection to the middle generation and then to
the old one, and collecting those walks every socket's objects again: with 10,000 sockets on two
processes one middle collection paused a process for half a second (docs/performance.md, socket
scale), and everything the process was to send in that half second waited behind it.

``SettledObjects`` moves what survives each collection out of the collector's reach at once
(``gc.freeze()``, from the collector's own ``gc.callbacks`` hook): the middle and old
generations stay empty, and every automatic collection walks only what was allocated since the
last one. Objects kept out of reach are still freed by reference counting when the last
reference goes, as every socket's are when it closes; only garbage held in reference cycles waits.
That garbage is collected by a full collection of everything (``gc.unfreeze()``, ``gc.collect()``,
``gc.freeze()``) once the process's resident memory has grown by ``WEB_GC_FULL_GROWTH`` since the
last full one: the same walk Python's old generation makes, but only when the process holds that
much more, not every time the middle generation fills. A process's memory can therefore hold up
to that factor of what it needs, in cycles not yet collected. (Resident memory, read from
``/proc/self/statm``, is the measure because it costs microseconds; counting the frozen objects
walks them all.)

The full collection runs on a thread of its own (the hook runs inside a collection, where
another cannot start); it holds the interpreter's lock as any collection does, and it starts
again when it found another thread's collection under way.
"""

from __future__ import annotations

import gc
import logging
import os
import resource
import threading
import time
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger("webapp.collector")

# A collection that holds the process longer than this is logged (a socket's p99 bound is 100 ms).
SLOW_COLLECTION_S = 0.1


PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")


def resident_bytes() -> int:
    """This process's resident memory now (its peak where ``/proc`` is missing)."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * PAGE_BYTES
    except (OSError, ValueError, IndexError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


@dataclass
class SettledObjects:
    """See the module. ``growth``: the factor by which the process's resident memory may grow
    before a full collection; ``baseline``: its resident bytes after the last one."""

    growth: float
    baseline: int = 0
    full_collections: int = 0
    last_pause_s: float = 0.0
    last_freed: int = 0
    _due: threading.Event = field(default_factory=threading.Event)
    _started: float = 0.0
    _full_ran: bool = False
    _thread: threading.Thread | None = None

    def install(self) -> None:
        """Collect and freeze what is alive now, then keep each collection's survivors frozen."""
        gc.collect()
        gc.freeze()
        self.baseline = resident_bytes()
        if self.after_collection not in gc.callbacks:
            gc.callbacks.append(self.after_collection)
        if self._thread is None:
            self._thread = threading.Thread(target=self._full_when_due, name="gc-full", daemon=True)
            self._thread.start()

    def after_collection(self, phase: str, info: dict[str, Any]) -> None:
        """``gc.callbacks`` hook: after a collection, freeze its survivors; ask for a full
        collection once the process's memory outgrows ``growth`` times what it was after the last."""
        if phase == "start":
            self._started = time.perf_counter()
            if info.get("generation") == 2:
                self._full_ran = True
            return
        gc.freeze()
        paused = time.perf_counter() - self._started
        if paused > SLOW_COLLECTION_S and self._started:
            log.warning(
                "collection of generation %s paused %.0f ms (%s freed)",
                info.get("generation"),
                paused * 1000,
                info.get("collected"),
            )
        if resident_bytes() >= self.growth * self.baseline:
            self._due.set()

    def full_collection(self) -> int:
        """Collect everything, cycles among frozen objects included, and freeze the survivors.
        Returns the objects freed."""
        while True:
            started = time.perf_counter()
            self._full_ran = False
            gc.unfreeze()
            freed = gc.collect()
            gc.freeze()
            # gc.collect() does nothing while another thread's collection is running (its hooks
            # let this thread in): then try again once that one is over.
            if self._full_ran:
                break
            time.sleep(0.001)
        self.last_pause_s = time.perf_counter() - started
        self.last_freed = freed
        self.baseline = resident_bytes()
        self.full_collections += 1
        return freed

    def _full_when_due(self) -> None:
        while True:
            self._due.wait()
            self._due.clear()
            before = resident_bytes()
            if before < self.growth * self.baseline:  # a full one ran meanwhile
                continue
            freed = self.full_collection()
            log.warning(
                "full collection at %d MiB resident: %d objects freed, paused %.0f ms, %d MiB resident after",
                before >> 20,
                freed,
                self.last_pause_s * 1000,
                self.baseline >> 20,
            )


def settle(*, young: int, growth: float) -> SettledObjects:
    """A server process's collector: young collections every ``young`` container allocations
    (Python's default is 700), survivors frozen, a full collection at ``growth`` (see the
    module)."""
    gc.set_threshold(young, 20, 100)
    policy = SettledObjects(growth=growth)
    policy.install()
    return policy
